"""The sender over a real outbox (SQLite), a real SMTP server and a real webhook
receiver: outages queue and later send, retries back off, give-ups are bounded and
audited, bursts become digests, replicas send each message once."""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.notify import (
    AddressBook,
    AnswerLinks,
    Channels,
    EmailChannel,
    Limits,
    Note,
    PromptFacts,
    Router,
    Secret,
    Sender,
    SmtpSettings,
    TeamChannels,
    WebhookChannel,
    opened_notes,
)
from hitl_nb.notify._slack import SlackTarget
from tests.helpers.outbox_sqlite import SQLiteOutbox
from tests.helpers.ports import free_port
from tests.helpers.smtp import AIOSMTPD_WARNINGS, Cert, smtp_server, throwaway_cert
from tests.helpers.tiny_server import Conn, Request, serve
from tests.helpers.until import until_async

pytestmark = AIOSMTPD_WARNINGS

T0 = 1_767_225_600.0
LINKS = AnswerLinks("https://hub.example.org/", hub=True)
#: Retries quick enough for tests in real time.
QUICK = Limits(first_retry=0.05, max_retry=0.2)
PASSWORD = "sender-test-password"
_prompts = itertools.count()


def notes_for(*names: str, at: float | None = None, team: bool = False, **kw: Any) -> list[Note]:
    """The opened notes of one new prompt naming ``names`` (or for the team), written
    ``at`` (default: now)."""
    at = time.time() if at is None else at
    facts = PromptFacts(
        "r1",
        f"p{next(_prompts)}",
        "https://agent.example.org/",
        kw.pop("question", "Deploy build 42?"),
        registered_by="Alice",
        specific=() if team else names,
        **kw,
    )
    teams = TeamChannels({"*": SlackTarget("https://unused.example/", admin=True)})
    return [n for n in opened_notes(facts, teams, at) if n.kind == "opened"]


class Clock:
    """Time the test moves."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def outbox(tmp_path: Path) -> Iterator[SQLiteOutbox]:
    box = SQLiteOutbox(tmp_path / "outbox.sqlite")
    yield box
    box.close()


def make_sender(
    outbox: SQLiteOutbox,
    *,
    smtp_port: int | None = None,
    team_url: str | None = None,
    clock: Callable[[], float] | None = None,
    limits: Limits = QUICK,
    smtp: dict[str, Any] | None = None,
    **kw: Any,
) -> Sender:
    email = None
    if smtp_port is not None:
        settings: dict[str, Any] = dict(
            host="127.0.0.1",
            port=smtp_port,
            security="none",
            sender="hitl@example.org",
            helo="test.invalid",
            timeout=10,
        )
        settings.update(smtp or {})
        email = EmailChannel(SmtpSettings(**settings), threads=2)
    teams = TeamChannels({"*": SlackTarget(team_url, admin=True)} if team_url else {})
    router = Router(addresses=AddressBook(template="{name}@example.org"), teams=teams)
    extra: dict[str, Any] = dict(poll=0.05, jitter=lambda: 0.0)
    if clock is not None:
        extra["clock"] = clock
    extra.update(kw)
    return Sender(
        outbox,
        router,
        Channels(email=email, webhooks=WebhookChannel(timeout=5)),
        LINKS,
        limits=limits,
        **extra,
    )


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def stopped(*senders: Sender) -> None:
    for sender in senders:
        await sender.stop()
        await sender.channels.aclose()


def test_a_note_goes_out_at_once_when_the_sender_is_woken(outbox: SQLiteOutbox):
    with smtp_server() as server:
        sender = make_sender(outbox, smtp_port=server.port, poll=60.0)

        async def go() -> None:
            sender.start()
            await until_async(lambda: _true(sender.rounds >= 1), what="the first round")
            outbox.add_now(notes_for("bob"))
            sender.wake()  # no wake: the next look would be a minute away
            await until_async(lambda: _true(server.inbox.received), timeout=30, what="the mail")
            await stopped(sender)

        run(go())
    (got,) = server.inbox.received
    assert got.rcpt_tos == ["bob@example.org"]
    assert got.message["Subject"] == "Question for you: Deploy build 42?"
    assert outbox.states() == {"sent": 1}


async def _true(value: Any) -> bool:
    return bool(value)


def test_an_smtp_outage_queues_then_sends(
    outbox: SQLiteOutbox, tmp_path: Path, monkeypatch, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("HITL_TEST_SENDER_PASSWORD", PASSWORD)
    cert: Cert = throwaway_cert(tmp_path)
    port = free_port()  # nothing listens there yet: the mail server is down
    sender = make_sender(
        outbox,
        smtp_port=port,
        smtp=dict(
            security="starttls",
            user="hitl",
            password=Secret(env="HITL_TEST_SENDER_PASSWORD"),
            ca_file=str(cert.cert),
        ),
    )
    (note,) = notes_for("bob")
    outbox.add_now([note])
    started = threading.Event()

    async def go() -> Any:
        sender.start()
        await until_async(
            lambda: _true(outbox.note(note.key)["attempts"] >= 2), what="two failed tries"
        )
        assert outbox.states() == {"pending": 1}
        with smtp_server(security="starttls", cert=cert, users={"hitl": PASSWORD}, port=port) as up:
            started.set()
            await until_async(lambda: _true(up.inbox.received), timeout=60, what="the mail")
        await stopped(sender)
        return up

    server = run(go())
    (got,) = server.inbox.received
    assert got.tls and got.login == "hitl"
    assert got.message["Message-ID"] == f"<{note.key}@example.org>"
    row = outbox.note(note.key)
    assert row["state"] == "sent" and row["attempts"] >= 2
    assert "could not be reached" in row["last_error"]
    assert PASSWORD not in caplog.text and outbox.audit() == []


def test_a_receiver_answering_500_then_200_gets_the_same_key_twice(outbox: SQLiteOutbox):
    answers = iter([500, 200])

    def receiver(request: Request, conn: Conn) -> None:
        conn.answer({"ok": True}, next(answers, 200))

    with serve(receiver) as hook:
        sender = make_sender(outbox, team_url=hook.url + "/team")
        outbox.add_now(notes_for(team=True, needed=2))

        async def go() -> None:
            sender.start()
            await until_async(lambda: _true(outbox.states() == {"sent": 1}), what="sent")
            await stopped(sender)

        run(go())
    first, second = hook.requests
    assert first.header("idempotency-key") == second.header("idempotency-key")
    assert first.json() == second.json()
    assert "It needs 2 people to give the same answer." in second.json()["text"]


def test_give_up_after_the_bound_with_an_audit_entry(outbox: SQLiteOutbox):
    clock = Clock()
    port = free_port()  # the mail server never comes up
    limits = Limits(first_retry=5, max_retry=300, give_up_after=3600)
    sender = make_sender(outbox, smtp_port=port, clock=clock, limits=limits)
    (note,) = notes_for("bob", at=T0)
    outbox.add_now([note])

    async def go() -> list[Any]:
        rounds = []
        while clock.now <= T0 + 3700:
            rounds.append(await sender.round())
            clock.now += 30
        await stopped(sender)
        return rounds

    rounds = run(go())
    assert sum(r.retried for r in rounds) >= 12  # 5, 10, 20, ... then every 300 s
    assert sum(r.stale for r in rounds) == 1 and sum(r.sent for r in rounds) == 0
    (entry,) = outbox.audit()
    assert entry["reason"].startswith("not sent in time after ")
    assert "could not be reached" in entry["reason"] and entry["prompt_id"] == note.facts.prompt_id
    assert outbox.states() == {"given_up": 1}


def test_a_burst_of_10000_prompts_makes_two_messages(outbox: SQLiteOutbox):
    clock = Clock()
    with smtp_server() as server:
        sender = make_sender(outbox, smtp_port=server.port, clock=clock, limits=Limits())

        async def go() -> None:
            outbox.add_now(notes_for("bob", at=T0))
            assert (await sender.round()).sent == 1  # the first goes at once
            burst = [n for i in range(9_999) for n in notes_for("bob", at=T0 + 1 + i / 400)]
            outbox.add_now(burst)
            while clock.now + 5 < T0 + 60:
                clock.now += 5
                assert (await sender.round()).claimed == 0  # bob waits out his minute
            clock.now = T0 + 60
            assert (await sender.round()).sent == 1  # the rest: one digest
            await stopped(sender)

        run(go())
    first, digest = server.inbox.received
    assert digest.message["Subject"] == "9999 new questions for you"
    body = digest.message.get_body(("plain",))
    assert body is not None
    text = body.get_content()
    assert text.count("- New: Deploy build 42?") == 20 and "... and 9979 more." in text
    assert outbox.states() == {"sent": 10_000}


def test_the_ceiling_bounds_messages_a_minute(outbox: SQLiteOutbox):
    clock = Clock()
    with smtp_server() as server:
        sender = make_sender(
            outbox, smtp_port=server.port, clock=clock, limits=Limits(per_minute=3)
        )
        outbox.add_now([n for i in range(7) for n in notes_for(f"user{i}", at=T0)])

        async def go() -> list[int]:
            sent = [(await sender.round()).sent]
            clock.now += 30
            sent.append((await sender.round()).sent)
            clock.now += 31
            sent.append((await sender.round()).sent)
            await stopped(sender)
            return sent

        assert run(go()) == [3, 0, 3]
    assert len(server.inbox.received) == 6


def test_nowhere_to_send_and_permanent_refusals_are_given_up_at_once(outbox: SQLiteOutbox):
    with smtp_server() as server:
        server.inbox.refuse["carol@example.org"] = "550 5.1.1 no such user"
        sender = make_sender(outbox, smtp_port=server.port)
        outbox.add_now(notes_for("dave smith") + notes_for("carol") + notes_for(team=True))

        async def go() -> None:
            await sender.round()
            await stopped(sender)

        run(go())
    reasons = {e["recipient"]: e["reason"] for e in outbox.audit()}
    assert reasons["user:dave smith"] == "no email address is known for dave smith"
    assert "refused the recipient: 550 5.1.1 no such user" in reasons["user:carol"]
    assert reasons["team:*"] == "the team channel for '*' is no longer set"
    assert outbox.states() == {"given_up": 3}


def test_two_replicas_send_each_message_once(tmp_path: Path):
    a, b = SQLiteOutbox(tmp_path / "o.sqlite"), SQLiteOutbox(tmp_path / "o.sqlite")
    with smtp_server() as server:
        one = make_sender(a, smtp_port=server.port, owner="one", concurrency=2)
        two = make_sender(b, smtp_port=server.port, owner="two", concurrency=2)
        names = [f"user{i}" for i in range(40)]
        a.add_now([n for name in names for n in notes_for(name)])

        async def go() -> None:
            one.start()
            two.start()
            await until_async(lambda: _true(a.states() == {"sent": 40}), what="all sent")
            await stopped(one, two)

        run(go())
    to = sorted(r.rcpt_tos[0] for r in server.inbox.received)
    assert to == sorted(f"{name}@example.org" for name in names)
    a.close()
    b.close()


def test_a_claim_whose_sender_died_is_sent_after_its_lease(outbox: SQLiteOutbox):
    clock = Clock()
    with smtp_server() as server:
        sender = make_sender(outbox, smtp_port=server.port, clock=clock, lease=120)
        (note,) = notes_for("bob", at=T0)
        outbox.add_now([note])

        async def go() -> None:
            (dead,) = await outbox.claim("died", T0, 120, recipients=5, listed=5)
            assert (await sender.round()).claimed == 0  # held by the dead one
            clock.now = T0 + 121
            assert (await sender.round()).sent == 1
            assert not await outbox.mark_sent(dead, T0 + 122, T0 + 182)
            await stopped(sender)

        run(go())
    assert len(server.inbox.received) == 1 and outbox.states() == {"sent": 1}


def test_a_round_that_cannot_reach_the_store_leaves_the_loop_running(outbox: SQLiteOutbox):
    class Flaky:
        """The outbox, unreachable for its first two claims."""

        def __init__(self) -> None:
            self.claims = 0

        def __getattr__(self, name: str) -> Any:
            return getattr(outbox, name)

        async def claim(self, *args: Any, **kw: Any) -> Any:
            self.claims += 1
            if self.claims <= 2:
                raise OSError("the database went away")
            return await outbox.claim(*args, **kw)

    with smtp_server() as server:
        sender = make_sender(Flaky(), smtp_port=server.port)  # type: ignore[arg-type]
        outbox.add_now(notes_for("bob"))

        async def go() -> None:
            sender.start()
            await until_async(lambda: _true(server.inbox.received), what="the mail")
            await stopped(sender)

        run(go())
    assert outbox.states() == {"sent": 1}
