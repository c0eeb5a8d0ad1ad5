"""The outbox's promises (hitl_nb/notify/_outbox.py), on every outbox: claims per
recipient, one holder at a time, marks that only a live claim makes, the next message
not before ``next_at``, at-least-once when a sender dies, the give-up sweep."""

from __future__ import annotations

import asyncio
from typing import Any

from hitl_nb.notify import Note, PromptFacts, person, team
from hitl_nb.notify._notes import note_key
from tests.notify.conftest import Opener

T0 = 1_000_000.0


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def note(recipient: str, prompt: str, kind: str = "opened", **kw: Any) -> Note:
    facts = PromptFacts("r1", prompt, "http://agent.example/", f"question {prompt}")
    base: dict[str, Any] = dict(created=T0, due=T0, expires=None)
    base.update(kw)
    return Note(note_key(kind, "r1", prompt, recipient), recipient, kind, facts, **base)


def test_a_claim_takes_every_due_note_of_a_recipient_and_lists_the_first(opener: Opener):
    box = opener()
    notes = [note(person("bob"), f"p{i}", created=T0 + i, due=T0 + i) for i in range(5)]
    later = note(person("bob"), "later", kind="reminder", due=T0 + 500)
    expired = note(person("bob"), "gone", expires=T0 + 1)
    assert box.add_now([*notes, later, expired, note(team("*"), "p0")]) == 8
    assert box.add_now(notes) == 0  # a key written twice is kept once

    async def go() -> None:
        batches = await box.claim("a", T0 + 10, 60, recipients=10, listed=3)
        by = {b.recipient: b for b in batches}
        assert set(by) == {"user:bob", "team:*"}
        bob = by["user:bob"]
        assert [n.facts.prompt_id for n in bob.notes] == ["p0", "p1", "p2"]
        assert bob.total == 5 and dict(bob.counts) == {"opened": 5}
        assert bob.last_sent is None and bob.notes[0].facts.question == "question p0"
        assert await box.claim("b", T0 + 10, 60, recipients=10, listed=3) == []

    run(go())


def test_one_holder_at_a_time_and_a_lapsed_claim_is_taken_again(opener: Opener):
    a, b = opener(), opener()  # two replicas on one database
    a.add_now([note(person("bob"), "p1")])

    async def go() -> None:
        (first,) = await a.claim("a", T0, 60, recipients=10, listed=5)
        assert await b.claim("b", T0 + 30, 60, recipients=10, listed=5) == []
        b.add_now([note(person("bob"), "p2", created=T0 + 31, due=T0 + 31)])
        assert await b.claim("b", T0 + 32, 60, recipients=10, listed=5) == []
        (second,) = await b.claim("b", T0 + 61, 60, recipients=10, listed=5)  # a died
        assert second.total == 2 and second.token != first.token
        assert not await a.mark_sent(first, T0 + 62, T0 + 122)  # too late: changes nothing
        assert a.states() == {"pending": 2}
        assert await b.mark_sent(second, T0 + 63, T0 + 123)
        assert a.states() == {"sent": 2}

    run(go())


def test_a_recipient_sent_to_waits_until_next_at_and_keeps_last_sent(opener: Opener):
    box = opener()
    box.add_now([note(person("bob"), "p1")])

    async def go() -> None:
        (first,) = await box.claim("a", T0, 60, recipients=10, listed=5)
        assert await box.mark_sent(first, T0 + 1, T0 + 61)
        box.add_now([note(person("bob"), "p2", created=T0 + 2, due=T0 + 2)])
        box.add_now([note(person("carol"), "p2", created=T0 + 2, due=T0 + 2)])
        (carol,) = await box.claim("a", T0 + 3, 60, recipients=10, listed=5)
        assert carol.recipient == "user:carol"
        (bob,) = await box.claim("a", T0 + 61, 60, recipients=10, listed=5)
        assert bob.recipient == "user:bob" and bob.last_sent == T0 + 1
        assert [n.facts.prompt_id for n in bob.notes] == ["p2"]

    run(go())


def test_retry_and_defer(opener: Opener):
    box = opener()
    box.add_now([note(person("bob"), "p1")])

    async def go() -> None:
        (batch,) = await box.claim("a", T0, 60, recipients=10, listed=5)
        assert await box.mark_retry(batch, T0 + 10, "the SMTP server could not be reached")
        assert await box.claim("a", T0 + 9, 60, recipients=10, listed=5) == []
        (again,) = await box.claim("a", T0 + 10, 60, recipients=10, listed=5)
        assert again.notes[0].attempts == 1
        assert again.notes[0].last_error == "the SMTP server could not be reached"
        assert await box.mark_retry(again, T0 + 20, None)  # deferred: not an attempt
        (third,) = await box.claim("a", T0 + 20, 60, recipients=10, listed=5)
        assert third.notes[0].attempts == 1
        assert not await box.mark_retry(batch, T0, "stale token")

    run(go())


def test_give_up_writes_an_audit_entry_per_note(opener: Opener):
    box = opener()
    box.add_now([note(person("bob"), "p1"), note(person("bob"), "p2")])

    async def go() -> None:
        (batch,) = await box.claim("a", T0, 60, recipients=10, listed=1)
        assert await box.give_up(batch, T0 + 1, "no email address is known for bob")
        assert box.states() == {"given_up": 2}
        audit = box.audit()
        assert [(e["prompt_id"], e["reason"]) for e in audit] == [
            ("p1", "no email address is known for bob"),
            ("p2", "no email address is known for bob"),
        ]
        assert await box.claim("a", T0 + 100, 60, recipients=10, listed=5) == []

    run(go())


def test_the_sweep_gives_up_what_waited_too_long_or_expired_but_not_a_live_claim(
    opener: Opener,
):
    box = opener()
    old = note(person("bob"), "old", due=T0)
    tried = note(person("carol"), "tried", due=T0)
    expired = note(person("dave"), "expired", due=T0 + 50, expires=T0 + 100)
    fresh = note(person("erin"), "fresh", due=T0 + 3595)
    held = note(person("fay"), "held", due=T0)
    box.add_now([old, tried, expired, fresh, held])

    async def go() -> None:
        by = {b.recipient: b for b in await box.claim("a", T0, 10, recipients=10, listed=5)}
        assert set(by) == {"user:bob", "user:carol", "user:fay"}
        await box.mark_retry(by["user:carol"], T0 + 3600, "the receiver answered 500")
        await box.mark_retry(by["user:bob"], T0 + 3600, None)
        await box.mark_retry(by["user:fay"], T0 + 3590, None)
        (fay,) = await box.claim("a", T0 + 3590, 60, recipients=10, listed=5)
        assert fay.recipient == "user:fay"  # held by a live claim at the sweep
        gone = await box.give_up_stale(T0 + 3600, T0 + 3600 - 3000)
        assert sorted(n.facts.prompt_id for n in gone) == ["expired", "old", "tried"]
        reasons = {e["prompt_id"]: e["reason"] for e in box.audit()}
        assert reasons["expired"] == "not sent: its prompt's deadline passed first"
        assert reasons["tried"] == (
            "not sent in time after 1 attempt (last: the receiver answered 500)"
        )
        assert reasons["old"] == "not sent in time"
        assert box.states() == {"given_up": 3, "pending": 2}

    run(go())


def test_withdrawn_notes_are_never_claimed(opener: Opener):
    box = opener()
    box.add_now([note(person("bob"), "p1"), note(person("carol"), "p1")])
    box.add_now([note(person("bob"), "p1", kind="reminder", due=T0 + 100)])

    async def go() -> None:
        assert await box.withdraw("r1", "p1", recipient=person("bob")) == 2
        (batch,) = await box.claim("a", T0 + 200, 60, recipients=10, listed=5)
        assert batch.recipient == "user:carol"
        # carol's, claimed by a sender now, is withdrawn too: if its send fails, it is
        # not tried again
        assert await box.withdraw("r1", "p1") == 1
        await box.mark_retry(batch, T0 + 200, "the receiver answered 500")
        assert await box.claim("a", T0 + 300, 60, recipients=10, listed=5) == []
        assert box.states() == {"withdrawn": 3}

    run(go())


def test_claims_take_the_most_overdue_recipients_first(opener: Opener):
    box = opener()
    box.add_now([note(person(f"u{i}"), "p", created=T0 + i, due=T0 + 10 - i) for i in range(5)])

    async def go() -> None:
        batches = await box.claim("a", T0 + 20, 60, recipients=2, listed=5)
        assert [b.recipient for b in batches] == ["user:u4", "user:u3"]

    run(go())
