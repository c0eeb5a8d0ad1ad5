"""Webhooks against a real HTTP receiver on 127.0.0.1: what is posted, how answers are
read, and what hostile URLs, redirects and slow receivers get."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest

from hitl_nb.errors import DeliveryFailed, NotifyRefused
from hitl_nb.notify import (
    AnswerLinks,
    Batch,
    PromptFacts,
    Secret,
    TeamChannels,
    WebhookChannel,
    opened_notes,
)
from hitl_nb.notify._messages import Message, compose
from hitl_nb.notify._signed import SignedTarget
from hitl_nb.notify._slack import SlackTarget
from tests.helpers.tiny_server import Conn, Request, serve
from tests.notify.test_signature import doc_receiver
from tests.notify.test_text import assert_dead

NOW = 1_767_225_600.0
LINKS = AnswerLinks("https://hub.example.org/", hub=True)
SECRET = "webhook-signing-secret"


def message(question: str = "Ship <!channel> build 42? @here https://evil.example") -> Message:
    facts = PromptFacts(
        "r1", "p1", "https://agent.example.org/", question, registered_by="Alice", needed=2
    )
    (note,) = opened_notes(facts, TeamChannels({"*": SlackTarget("https://x.example/")}), NOW)
    return compose(Batch(note.recipient, "t", (note,), 1), LINKS, NOW)


def ok(request: Request, conn: Conn) -> None:
    conn.answer({"ok": True})


def send(channel: WebhookChannel, msg: Message, target: Any) -> None:
    async def go() -> None:
        try:
            await channel.deliver(msg, target)
        finally:
            await channel.aclose()

    asyncio.run(go())


def test_a_slack_compatible_webhook_gets_text_with_nothing_live():
    msg = message()
    with serve(ok) as receiver:
        send(WebhookChannel(), msg, SlackTarget(receiver.url + "/hooks/abc", admin=True))
    (got,) = receiver.requests
    assert got.method == "POST" and got.path == "/hooks/abc"
    assert got.header("content-type") == "application/json"
    assert got.header("idempotency-key") == msg.key
    body = got.json()
    assert set(body) == {"text"}
    text = body["text"].replace(msg.link, "")
    assert_dead(text.replace("\n> ", "\n"))
    assert "&lt;!channel&gt;" in body["text"] and msg.link in body["text"]


def test_a_signed_webhook_is_accepted_by_a_receiver_following_the_doc(monkeypatch):
    monkeypatch.setenv("HITL_TEST_HOOK_KEY", SECRET)
    msg = message()
    with serve(ok) as receiver:
        target = SignedTarget(receiver.url + "/in", Secret(env="HITL_TEST_HOOK_KEY"), admin=True)
        send(WebhookChannel(), msg, target)
    (got,) = receiver.requests
    assert doc_receiver()(SECRET).check(got.headers, got.body, now=time.time()) == "accept"
    doc = json.loads(got.body)
    assert doc["id"] == msg.key == got.header("idempotency-key")
    assert doc["kind"] == "opened" and doc["items"][0]["needed"] == 2
    assert SECRET not in got.body.decode() and SECRET not in repr(target)


@pytest.mark.parametrize(
    ("status", "permanent"),
    [(500, False), (503, False), (429, False), (408, False), (404, True), (403, True), (410, True)],
)
def test_what_an_answer_means(status, permanent):
    def answer(request: Request, conn: Conn) -> None:
        conn.answer({"error": "no"}, status)

    with serve(answer) as receiver:
        with pytest.raises(DeliveryFailed, match=f"answered {status}") as caught:
            send(WebhookChannel(), message(), SlackTarget(receiver.url + "/h", admin=True))
    assert caught.value.permanent is permanent
    assert "/h" not in str(caught.value)  # a webhook's path is its credential


def test_a_redirect_is_not_followed():
    with serve(ok) as elsewhere:

        def redirect(request: Request, conn: Conn) -> None:
            conn.answer(b"", 307, Location=elsewhere.url + "/stolen")

        with serve(redirect) as receiver:
            with pytest.raises(DeliveryFailed, match="redirects are not followed") as caught:
                send(WebhookChannel(), message(), SlackTarget(receiver.url + "/h", admin=True))
    assert caught.value.permanent
    assert len(receiver.requests) == 1 and elsewhere.requests == []


def test_a_slow_receiver_is_cut_off_however_slowly_it_drips():
    def drip(request: Request, conn: Conn) -> None:
        conn.send(b"HTTP/1.1 200 OK\r\n")
        while not conn.stopped.wait(0.2) and conn.send(b"X-Drip: 1\r\n"):
            pass

    with serve(drip) as receiver:
        channel = WebhookChannel(timeout=1.0)
        with pytest.raises(DeliveryFailed, match="did not answer within 1 s") as caught:
            send(channel, message(), SlackTarget(receiver.url + "/h", admin=True))
    assert not caught.value.permanent


def test_a_huge_answer_is_never_read():
    def huge(request: Request, conn: Conn) -> None:
        conn.head(200, Content_Length=str(50 * 1024 * 1024))
        chunk = b"x" * 65536
        while not conn.stopped.is_set() and conn.send(chunk):
            pass

    with serve(huge) as receiver:
        send(WebhookChannel(timeout=30), message(), SlackTarget(receiver.url + "/h", admin=True))
    assert len(receiver.requests) == 1


def test_a_receiver_that_is_down_is_retried():
    with serve(ok) as receiver:
        url = receiver.url
    with pytest.raises(DeliveryFailed, match="could not be reached") as caught:
        send(WebhookChannel(), message(), SlackTarget(url + "/h", admin=True))
    assert not caught.value.permanent


def personal(url: str) -> SlackTarget:
    return SlackTarget(url)


def test_a_personal_webhook_goes_only_to_an_allowed_host():
    with serve(ok) as receiver:
        port = receiver.url.rsplit(":", 1)[1]
        allowed = [f"http://127.0.0.1:{port}"]
        send(WebhookChannel(allowed), message(), personal(receiver.url + "/mine"))
        assert len(receiver.requests) == 1
        hostile = [
            f"http://localhost:{port}/mine",  # the same machine, but not the listed host
            f"http://127.0.0.1:{port}@evil.invalid/mine",
            f"http://evil.invalid@127.0.0.1:{port}/mine",
            f"http://2130706433:{port}/mine",
            f"http://127.0.0.1:{int(port) + 1}/mine",
        ]
        for url in hostile:
            with pytest.raises(DeliveryFailed) as caught:
                send(WebhookChannel(allowed), message(), personal(url))
            assert caught.value.permanent, url
        assert len(receiver.requests) == 1  # none of them reached anything
        with pytest.raises(DeliveryFailed, match="not on the administrator's list"):
            send(WebhookChannel(["hooks.example.org"]), message(), personal(receiver.url + "/m"))
    assert len(receiver.requests) == 1


def test_the_allow_list_of_the_moment_is_what_counts():
    allowed: list[str] = []
    with serve(ok) as receiver:
        allowed.append("http://127.0.0.1:" + receiver.url.rsplit(":", 1)[1])
        channel = WebhookChannel(lambda: allowed)

        async def go() -> None:
            await channel.deliver(message(), personal(receiver.url + "/mine"))
            allowed.clear()
            with pytest.raises(DeliveryFailed, match="not on the administrator's list"):
                await channel.deliver(message(), personal(receiver.url + "/mine"))
            await channel.aclose()

        asyncio.run(go())
    assert len(receiver.requests) == 1


def test_a_missing_signing_secret_sends_nothing_and_waits(monkeypatch):
    monkeypatch.delenv("HITL_TEST_HOOK_KEY", raising=False)
    with serve(ok) as receiver:
        target = SignedTarget(receiver.url + "/in", Secret(env="HITL_TEST_HOOK_KEY"), admin=True)
        with pytest.raises(DeliveryFailed, match="HITL_TEST_HOOK_KEY") as caught:
            send(WebhookChannel(), message(), target)
    assert not caught.value.permanent and receiver.requests == []


def test_a_client_that_follows_redirects_is_refused():
    async def go() -> None:
        client = httpx.AsyncClient(follow_redirects=True)
        try:
            with pytest.raises(NotifyRefused):
                WebhookChannel(client=client)
        finally:
            await client.aclose()

    asyncio.run(go())
