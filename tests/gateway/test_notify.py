"""The gateway's notifier on its store, with a real SMTP server (aiosmtpd): notes written
with the prompts that cause them, a burst of 10,000 prompts that makes a bounded number
of messages, two replicas on one PostgreSQL database that send each message once, and
a mail server that is down for a while, then up."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from email.message import EmailMessage
from typing import Any

import pytest

from hitl_nb.gateway import GatewaySettings, GatewayStore, Notifier
from hitl_nb.gateway._store import Registration
from tests.gateway.conftest import Opener
from tests.helpers.ports import free_port
from tests.helpers.smtp import SmtpServer, smtp_server
from tests.helpers.until import until_async

FAR = 4_102_444_800.0  # a deadline far ahead


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    with smtp_server() as server:
        yield server


def _settings(port: int, **more: Any) -> GatewaySettings:
    return GatewaySettings(
        notify_smtp_host="127.0.0.1",
        notify_smtp_port=port,
        notify_smtp_security="none",
        notify_from="hitl@example.org",
        notify_address_template="{name}@example.org",
        **more,
    )


def _notifier(store: GatewayStore, settings: GatewaySettings, owner: str) -> Notifier:
    store.notes_on = True
    return Notifier(settings, store, lambda: "https://hub.example.org/", hub=True, owner=owner)


REG = Registration("r1", "http://agent.example/", "t1", "Alice", 1.0, "alice")


def _envelope(prompt_id: str, who: str) -> dict[str, Any]:
    return {
        "prompt_id": prompt_id,
        "prompt": f"Approve {prompt_id}?",
        "response_schema": {"type": "object"},
        "allowed_responders": [f"specific:{who}"],
    }


async def _see(store: GatewayStore, notifier: Notifier, prompt_id: str, who: str) -> None:
    env = _envelope(prompt_id, who)
    await store.see_prompt(REG.id, prompt_id, None, env, FAR, notifier.opened(REG, env, FAR))


def _mails(smtp: SmtpServer, address: str) -> list[EmailMessage]:
    return [r.message for r in smtp.inbox.received if address in r.rcpt_tos]


async def _soon(value: Any) -> Any:
    return value


@pytest.mark.slow
def test_a_burst_of_ten_thousand_prompts_makes_a_handful_of_messages(
    tmp_path: Any, smtp: SmtpServer
) -> None:
    from hitl_nb.gateway._sqlite import SQLiteStore

    async def go() -> dict[str, int]:
        store = SQLiteStore(tmp_path / "gateway.sqlite")
        await store.open()
        await store.add_registration(REG)
        settings = _settings(smtp.port, notify_every=2.0, notify_remind_before=0.0)
        notifier = _notifier(store, settings, "a")
        notifier.start()
        for i in range(10_000):
            await _see(store, notifier, f"p{i:05}", "bob")
            notifier.wake()

        async def drained() -> bool:
            return (await store.outbox.states()).get("pending", 0) == 0

        # The first prompts' message at once, the rest as one digest after the rate's
        # pause (two seconds here): a handful of messages, whatever the agent does.
        await until_async(drained, what="nothing left to send")
        states = await store.outbox.states()
        await notifier.stop()
        await store.close()
        return states

    states = asyncio.run(go())
    assert states == {"sent": 10_000}
    mails = _mails(smtp, "bob@example.org")
    subjects = [str(m["Subject"]) for m in mails]
    # Each message one prompt ("Question for you: ...") or a digest ("N new questions"),
    # at most one per 2 s while the 10,000 are written: all told, in a handful.
    told = [1 if s.startswith("Question for you: ") else int(s.split()[0]) for s in subjects]
    assert sum(told) == 10_000 and len(mails) <= 10, subjects
    digest = mails[told.index(max(told))]
    assert digest["Subject"] == f"{max(told)} new questions for you"
    body = digest.get_body(("plain",)).get_content()
    assert f"... and {max(told) - 20} more." in body and body.count("- New: Approve p") == 20


def test_two_replicas_on_one_database_send_each_message_once(
    opener: Opener, smtp: SmtpServer
) -> None:
    people = [f"user{i:02}" for i in range(40)]

    async def go() -> None:
        one, two = opener(), opener()
        for store in (one, two):
            await store.open()
        await one.add_registration(REG)
        settings = _settings(smtp.port, notify_remind_before=0.0)
        senders = [_notifier(one, settings, "replica-a"), _notifier(two, settings, "replica-b")]
        for sender in senders:
            sender.start()
        for i, name in enumerate(people):  # the prompts seen by either replica
            store, sender = (one, senders[0]) if i % 2 else (two, senders[1])
            await _see(store, sender, f"p{i:02}", name)
            for both in senders:
                both.wake()

        async def drained() -> bool:
            return (await one.outbox.states()) == {"sent": len(people)}

        await until_async(drained, what="every note sent")
        for sender in senders:
            await sender.stop()
        for store in (one, two):
            await store.close()

    asyncio.run(go())
    ids = [r.message["Message-ID"] for r in smtp.inbox.received]
    assert len(ids) == len(set(ids)) == len(people)
    assert sorted(r.rcpt_tos[0] for r in smtp.inbox.received) == [
        f"{name}@example.org" for name in people
    ]


def test_a_mail_server_down_for_a_while_gets_the_message_when_it_is_up(
    tmp_path: Any,
) -> None:
    from hitl_nb.gateway._sqlite import SQLiteStore

    port = free_port()  # nothing listens there yet

    async def go(server: list[SmtpServer]) -> None:
        store = SQLiteStore(tmp_path / "gateway.sqlite")
        await store.open()
        await store.add_registration(REG)
        notifier = _notifier(store, _settings(port), "a")
        notifier.start()
        await _see(store, notifier, "p1", "bob")
        notifier.wake()

        async def failed_once() -> bool:
            rows = await store._db.rows("SELECT attempts, last_error FROM notify_notes")
            return any(n >= 1 for n, _ in rows)

        await until_async(failed_once, what="a failed attempt")
        with smtp_server(port=port) as up:
            server.append(up)

            async def arrived() -> bool:
                return bool(_mails(up, "bob@example.org"))

            await until_async(arrived, what="the message, retried")
        await notifier.stop()
        await store.close()

    server: list[SmtpServer] = []
    asyncio.run(go(server))
    (mail,) = _mails(server[0], "bob@example.org")
    assert mail["Subject"] == "Question for you: Approve p1?"


@pytest.mark.parametrize(
    ("given", "words"),
    [
        pytest.param({"*": "ftp://x.example/secretpath"}, "http(s)", id="not-http"),
        pytest.param({"*": "https://u:pw@x.example/secretpath"}, "no user name", id="creds"),
        pytest.param({"*": {"url": "https://x.example/secretpath"}}, "secret_env", id="no-key"),
        pytest.param(
            {"*": {"url": "https://x.example/secretpath", "secret": "k"}}, "unknown", id="key"
        ),
        pytest.param({"a/b": "https://x.example/secretpath"}, "agent host", id="bad-host"),
        pytest.param({"*": 3}, "give a webhook URL", id="not-a-url"),
    ],
)
def test_a_team_channel_it_cannot_use_is_refused_without_showing_its_url(
    given: dict[str, Any], words: str
) -> None:
    from hitl_nb.errors import NotifyRefused
    from hitl_nb.gateway._notify import team_channels

    with pytest.raises(NotifyRefused) as refused:
        team_channels(given)
    assert words in str(refused.value) and "secretpath" not in str(refused.value)


def test_email_needs_a_from_address_and_one_place_for_its_password(tmp_path: Any) -> None:
    from hitl_nb.errors import NotifyRefused
    from hitl_nb.gateway._sqlite import SQLiteStore

    store = SQLiteStore(tmp_path / "g.sqlite")
    with pytest.raises(NotifyRefused, match="notify_from"):
        _notifier(store, GatewaySettings(notify_smtp_host="smtp.example.org"), "a")
    both = _settings(25, notify_smtp_password_env="X", notify_smtp_password_file="/x")
    with pytest.raises(NotifyRefused, match="one place"):
        _notifier(store, both, "a")
    asyncio.run(store.close())


def test_a_refusal_is_written_with_the_forward_dropped_and_told_to_the_registrant(
    opener: Opener, smtp: SmtpServer
) -> None:
    async def go() -> None:
        store = opener()
        await store.open()
        await store.add_registration(REG)
        notifier = _notifier(store, _settings(smtp.port), "a")
        env = _envelope("p1", "bob")
        await _see(store, notifier, "p1", "bob")
        row = await store.prompt(REG.id, "p1")
        assert row is not None
        assert await store.begin_forward(REG.id, "p1", "m1", "{}", ["bob"])
        refused = notifier.outcome(REG, row, "refused", ["bob"], "the ticket is closed")
        await store.drop_forward(REG.id, "p1", notes=refused)
        assert await store.forward(REG.id, "p1") is None  # the prompt may be answered again
        notifier.start()

        async def told() -> bool:
            return bool(_mails(smtp, "alice@example.org"))

        await until_async(told, what="alice told")
        await notifier.stop()
        await store.close()
        assert env["prompt"] == "Approve p1?"

    asyncio.run(go())
    (mail,) = _mails(smtp, "alice@example.org")
    assert mail["Subject"] == "The agent refused the answer: Approve p1?"
    body = mail.get_body(("plain",)).get_content()
    assert "Your agent refused the answer given by bob" in body
    assert "the ticket is closed" in body
