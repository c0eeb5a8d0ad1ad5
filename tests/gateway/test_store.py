"""The store interface's promises (hitl_nb/gateway/_store.py), on every store.

Committed when a call returns; one forward claim per prompt whoever asks (tasks of one
loop, or connections of several processes); a ballot cast and the tally read together;
first sightings win; the audit trail in order, filtered, paged.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from hitl_nb.gateway import AuditEntry, GatewayStore, Registration
from tests.gateway.conftest import Opener

ENV = {"prompt_id": "p1", "prompt": "Approve?", "response_schema": {"type": "object"}}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _seeded(store: GatewayStore) -> Registration:
    reg = await store.add_registration(
        Registration("r1", "http://agent.invalid", "t1", "Alice", time.time(), "alice")
    )
    await store.see_prompt(reg.id, "p1", "c1", ENV, None)
    return reg


def test_what_a_call_wrote_is_there_for_the_next_connection(opener: Opener) -> None:
    async def write() -> None:
        store = opener()
        reg = await _seeded(store)
        await store.cast_ballot(reg.id, "p1", "alice", '{"a":1}')
        assert await store.begin_forward(reg.id, "p1", "m1", '{"a":1}', ["alice"])
        await store.ensure_push_secret(reg.id, "s3cret")
        await store.close()  # no commit step: each call was one already

    async def read() -> None:
        store = opener()
        reg = await store.registration("r1")
        assert reg is not None and reg.registrant == "alice" and reg.registered_by == "Alice"
        (row,) = await store.prompts("r1")
        assert row.envelope == ENV and row.context_id == "c1" and row.closed is None
        assert [b.responder for b in await store.ballots("r1", "p1")] == ["alice"]
        fwd = await store.forward("r1", "p1")
        assert fwd is not None and fwd.state == "forwarding" and fwd.responders == ["alice"]
        assert [f.prompt_id for f in await store.unsettled_forwards()] == ["p1"]
        assert await store.push_secret("r1") == "s3cret"
        await store.close()

    run(write())
    run(read())


def test_first_sightings_win(opener: Opener) -> None:
    async def go() -> None:
        store = opener()
        reg = await _seeded(store)
        again = await store.add_registration(
            Registration("r2", reg.agent_url, reg.task_id, "Bob", time.time(), "bob")
        )
        assert again.id == "r1" and again.registrant == "alice"
        row = await store.see_prompt("r1", "p1", "other", {**ENV, "prompt": "Changed?"}, 5.0)
        assert row.envelope["prompt"] == "Approve?" and row.deadline is None
        assert await store.ensure_push_secret("r1", "first") == "first"
        assert await store.ensure_push_secret("r1", "second") == "first"
        assert await store.count_registrations() == 1
        await store.close()

    run(go())


def test_one_forward_claim_among_fifty_racing_tasks(opener: Opener) -> None:
    async def go() -> list[bool]:
        store = opener()
        await _seeded(store)
        claims = [store.begin_forward("r1", "p1", f"m{i}", "{}", [f"u{i}"]) for i in range(50)]
        got = list(await asyncio.gather(*claims))
        await store.close()
        return got

    assert run(go()).count(True) == 1


def test_one_forward_claim_among_connections_racing_in_threads(opener: Opener) -> None:
    # As two service processes on one database: each its own connection and loop.
    run(_seed_and_close(opener))
    start = threading.Barrier(8)
    results: list[bool] = []
    lock = threading.Lock()

    def claim(i: int) -> None:
        async def go() -> bool:
            store = opener()
            start.wait()
            try:
                return await store.begin_forward("r1", "p1", f"m{i}", "{}", [f"u{i}"])
            finally:
                await store.close()

        got = asyncio.run(go())
        with lock:
            results.append(got)

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(results) == [False] * 7 + [True]


async def _seed_and_close(opener: Opener) -> None:
    store = opener()
    await _seeded(store)
    await store.close()


def test_a_ballot_is_cast_and_the_tally_read_together(opener: Opener) -> None:
    async def go() -> None:
        store = opener()
        await _seeded(store)
        tallies = await asyncio.gather(
            *[store.cast_ballot("r1", "p1", f"u{i}", '{"ok":true}') for i in range(10)]
        )
        # Every caller saw its own ballot and all cast before it: counts 1..10, once each.
        assert sorted(len(t) for t in tallies) == list(range(1, 11))
        for tally in tallies:
            assert {b.payload for b in tally} == {'{"ok":true}'}
        replaced = await store.cast_ballot("r1", "p1", "u0", '{"ok":false}')
        assert len(replaced) == 10  # the same responder again is still one ballot
        assert {b.responder: b.payload for b in replaced}["u0"] == '{"ok":false}'
        assert await store.all_ballots() == {("r1", "p1"): await store.ballots("r1", "p1")}
        await store.close()

    run(go())


def test_a_forward_is_finished_or_dropped_once(opener: Opener) -> None:
    async def go() -> None:
        store = opener()
        await _seeded(store)
        assert await store.begin_forward("r1", "p1", "m1", "{}", ["alice"])
        await store.drop_forward("r1", "p1")  # the agent refused it: may be answered again
        assert await store.forward("r1", "p1") is None
        assert await store.begin_forward("r1", "p1", "m2", "{}", ["bob"])
        await store.finish_forward("r1", "p1", "forwarded", "accepted")
        fwd = await store.forward("r1", "p1")
        assert fwd is not None and (fwd.state, fwd.detail, fwd.message_id) == (
            "forwarded",
            "accepted",
            "m2",
        )
        assert await store.unsettled_forwards() == []
        assert set(await store.all_forwards()) == {("r1", "p1")}
        assert await store.close_prompt("r1", "p1", "answered") is True
        assert await store.close_prompt("r1", "p1", "expired") is False
        assert await store.open_prompts() == []
        await store.close()

    run(go())


def _entry(reg_id: str, action: str, responder: str | None = "alice") -> AuditEntry:
    return AuditEntry(
        time.time(),
        reg_id,
        "t",
        "http://agent.invalid",
        "p1",
        responder,
        responder,
        action,
        202,
        None,
        "a" * 64,
        "b" * 64,
        ["alice"],
        {"message": "ok"},
    )


def test_the_audit_trail_is_appended_in_order_filtered_and_paged(opener: Opener) -> None:
    async def go() -> None:
        store = opener()
        for i in range(5):
            await store.add_audit(_entry("r1" if i % 2 == 0 else "r2", f"a{i}"))
        everything = await store.audit()
        assert [e.action for e in everything] == ["a0", "a1", "a2", "a3", "a4"]
        ids = [e.id for e in everything]
        assert ids == sorted(ids) and len(set(ids)) == 5
        assert [e.action for e in await store.audit(["r2"])] == ["a1", "a3"]
        assert await store.audit([]) == []
        page = await store.audit(None, after=ids[1], limit=2)
        assert [e.action for e in page] == ["a2", "a3"]
        first = everything[0]
        assert first.responders == ["alice"] and first.agent_reply == {"message": "ok"}
        assert first.to_json()["response_schema_sha256"] == "b" * 64
        await store.close()

    run(go())
