"""The store interface's promises (hitl_nb/gateway/_store.py), on every store.

Committed when a call returns; one forward claim per prompt whoever asks (tasks of one
loop, or connections of several processes); a ballot cast and the tally read together;
first sightings win; the audit trail in order, filtered, paged, and appended in the
transaction of the change it records (a ballot held, a forward claimed or ended).
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from hitl_nb.gateway import Forward, GatewayStore
from hitl_nb.gateway._store import AuditEntry, Registration
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
        got = [fwd is not None for fwd in await asyncio.gather(*claims)]
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
                fwd = await store.begin_forward("r1", "p1", f"m{i}", "{}", [f"u{i}"])
                return fwd is not None
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


def test_an_answer_reads_its_prompt_and_forward_together(opener: Opener) -> None:
    async def go() -> None:
        store = opener()
        await _seeded(store)
        assert await store.prompt_and_forward("r1", "nope") == (None, None)
        row, fwd = await store.prompt_and_forward("r1", "p1")
        assert row == await store.prompt("r1", "p1") and fwd is None
        claimed = await store.begin_forward("r1", "p1", "m1", '{"a":1}', ["alice", "bob"], "rep-a")
        row, fwd = await store.prompt_and_forward("r1", "p1")
        assert row is not None and row.envelope == ENV and row.closed is None
        assert fwd == await store.forward("r1", "p1") == claimed  # the claim, as written
        assert await store.begin_forward("r1", "p1", "m2", "{}", ["carol"]) is None
        assert fwd is not None and (fwd.message_id, fwd.responders, fwd.owner) == (
            "m1",
            ["alice", "bob"],
            "rep-a",
        )
        await store.close()

    run(go())


def test_finishing_a_forward_can_close_its_prompt_in_the_same_step(opener: Opener) -> None:
    async def go() -> None:
        store = opener()
        await _seeded(store)
        await store.see_prompt("r1", "p2", "c1", {**ENV, "prompt_id": "p2"}, None)
        assert await store.begin_forward("r1", "p1", "m1", "{}", ["alice"])
        await store.finish_forward("r1", "p1", "forwarded", "accepted", closed="answered")
        row, fwd = await store.prompt_and_forward("r1", "p1")
        assert row is not None and row.closed == "answered"
        assert fwd is not None and fwd.state == "forwarded"
        assert [r.prompt_id for r in await store.open_prompts()] == ["p2"]  # only its own
        # A prompt closed before (it expired meanwhile) keeps its first reason.
        await store.close_prompt("r1", "p2", "expired")
        assert await store.begin_forward("r1", "p2", "m2", "{}", ["alice"])
        await store.finish_forward("r1", "p2", "failed", "gone", closed="closed by the agent")
        row, fwd = await store.prompt_and_forward("r1", "p2")
        assert row is not None and row.closed == "expired"
        assert fwd is not None and (fwd.state, fwd.detail) == ("failed", "gone")
        await store.close()

    run(go())


def test_a_forward_is_ended_once_and_the_second_finish_says_so(opener: Opener) -> None:
    """Two replicas finish one forward when one took the other for dead while it was only
    slow: the first to finish ends it, the second changes nothing and learns so."""

    async def go() -> None:
        first, second = opener(), opener()
        await _seeded(first)
        assert await first.begin_forward("r1", "p1", "m1", "{}", ["alice"], owner="a")
        assert await first.finish_forward("r1", "p1", "forwarded", "accepted", closed="answered")
        ended = await second.finish_forward("r1", "p1", "failed", "late", closed="closed by x")
        assert ended is False
        row, fwd = await second.prompt_and_forward("r1", "p1")
        assert row is not None and row.closed == "answered"
        assert fwd is not None and (fwd.state, fwd.detail) == ("forwarded", "accepted")
        await first.close()
        await second.close()

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


HOSTILE = [
    "o'brien",
    'say "hi"',
    "back\\slash",
    "semi; DROP TABLE ballots; --",
    "%s %(x)s ?",
    "é🚀",
]


def test_text_that_looks_like_sql_is_kept_as_it_is(opener: Opener) -> None:
    # Every statement of a batch (PostgreSQL binds their parameters client-side) and
    # every single one: quotes, backslashes, parameter markers, unicode, kept exactly.
    async def go() -> None:
        store = opener()
        reg = await _seeded(store)
        for i, text in enumerate(HOSTILE):
            ballots = await store.cast_ballot(reg.id, "p1", text, f'{{"t":"{i}{text}"}}')
            assert ballots[-1].responder == text and ballots[-1].payload.endswith(f'{text}"}}')
            await store.add_audit(_entry(reg.id, text, responder=text))
        assert await store.ensure_push_secret(reg.id, HOSTILE[3]) == HOSTILE[3]
        assert [b.responder for b in await store.ballots(reg.id, "p1")] == HOSTILE
        entries = await store.audit([reg.id])
        assert [(e.action, e.responder) for e in entries] == [(t, t) for t in HOSTILE]
        await store.see_prompt(reg.id, "p2", None, _env("p2", [f"specific:{HOSTILE[3]}"]), None)
        assert await store.begin_forward(reg.id, "p2", HOSTILE[4], HOSTILE[5], HOSTILE)
        await store.finish_forward(reg.id, "p2", "failed", HOSTILE[0], closed=HOSTILE[1])
        row, fwd = await store.prompt_and_forward(reg.id, "p2")
        assert row is not None and row.closed == HOSTILE[1]
        assert fwd is not None and (fwd.message_id, fwd.payload, fwd.responders, fwd.detail) == (
            HOSTILE[4],
            HOSTILE[5],
            HOSTILE,
            HOSTILE[0],
        )
        await store.close()

    run(go())


# -- listings in the database (who sees what, in which order) --------------------------


def _env(pid: str, responders: list[str] | None = None) -> dict[str, Any]:
    env: dict[str, Any] = {**ENV, "prompt_id": pid}
    if responders is not None:
        env["allowed_responders"] = responders
    return env


def test_a_listing_selects_orders_and_counts_as_the_rules_say(opener: Opener) -> None:
    from hitl_nb.gateway import Caller
    from hitl_nb.gateway._store import OpenQuery
    from hitl_nb.gateway._views import inbox_order, refusal, responder_gate, shown_to

    async def go() -> None:
        store = opener()
        regs = [
            await store.add_registration(
                Registration(f"r{i}", f"http://agent{i}.invalid", "t", "X", float(i), owner)
            )
            for i, owner in enumerate(["alice", "bob"])
        ]
        kinds = [
            None,
            ["specific:bob"],
            ["consensus:2"],
            ["specific:carol", "specific:bob"],
            ["any"],
            ["consensus:3", "specific:alice"],
        ]
        for n in range(24):
            reg = regs[n % 2]
            deadline = None if n % 3 == 0 else 1000.0 + (n * 7) % 11
            pid = f"p{n:02d}"
            await store.see_prompt(reg.id, pid, None, _env(pid, kinds[n % 6]), deadline)
        await store.close_prompt("r0", "p04", "answered")
        rows = {(r.reg_id, r.prompt_id): r for r in await store.open_prompts()}
        by_id = {r.id: r for r in regs}
        order = sorted(rows.values(), key=inbox_order)
        for viewer in ("alice", "bob", "carol", "dave", None):
            caller = Caller(viewer, viewer or "someone")
            for query, rule in [
                (OpenQuery(viewer), lambda r, caller=caller: shown_to(caller, by_id[r.reg_id], r)),
                (OpenQuery(viewer, see_all=True), lambda r, caller=caller: True),
                (
                    OpenQuery(viewer, for_responder=True, responder=viewer),
                    lambda r, caller=caller: (
                        shown_to(caller, by_id[r.reg_id], r)
                        and refusal(responder_gate(r.envelope), caller) is None
                    ),
                ),
                (
                    OpenQuery(viewer, agent="http://agent1.invalid", due_before=1005.0),
                    lambda r, caller=caller: (
                        shown_to(caller, by_id[r.reg_id], r)
                        and r.reg_id == "r1"
                        and r.deadline is not None
                        and r.deadline <= 1005.0
                    ),
                ),
            ]:
                want = [r.prompt_id for r in order if rule(r)]
                listed, total = await store.list_open(query, 5)
                assert [i.row.prompt_id for i in listed] == want[:5], (viewer, query)
                assert total == len(want)
        # The page carries each prompt's forward and ballots.
        await store.cast_ballot("r0", "p02", "alice", '{"a":1}')
        assert await store.begin_forward("r1", "p01", "m", "{}", ["bob"], owner="x")
        listed, _ = await store.list_open(OpenQuery("bob", see_all=True), 100)
        found = {i.row.prompt_id: i for i in listed}
        assert [b.responder for b in found["p02"].ballots] == ["alice"]
        assert found["p01"].forward is not None and found["p01"].forward.owner == "x"
        assert found["p03"].forward is None and found["p03"].ballots == []
        assert found["p01"].reg.registrant == "bob"
        assert sorted(r.prompt_id for r in await store.due_prompts(1003.0)) == sorted(
            r.prompt_id for r in rows.values() if r.deadline is not None and r.deadline <= 1003
        )
        await store.close()

    run(go())


def test_one_registrations_prompts_and_the_tasks_one_registered_are_listed_apart(
    opener: Opener,
) -> None:
    """The feed reads one registration's prompts again for a caller (``registration``),
    and follows the tasks a caller registered (``registered``), by the same rules."""
    from hitl_nb.gateway import Caller
    from hitl_nb.gateway._store import OpenQuery
    from hitl_nb.gateway._views import shown_to

    async def go() -> None:
        store = opener()
        regs = [
            await store.add_registration(
                Registration(f"r{i}", "http://agent.invalid", f"t{i}", "X", float(i), owner)
            )
            for i, owner in enumerate(["alice", "bob", None])
        ]
        by_id = {r.id: r for r in regs}
        kinds = [["any"], ["specific:bob"], ["specific:carol"], ["consensus:2"]]
        for n in range(12):
            reg = regs[n % 3]
            pid = f"p{n:02d}"
            await store.see_prompt(reg.id, pid, None, _env(pid, kinds[n % 4]), None)
        await store.close_prompt("r0", "p00", "answered")
        rows = await store.open_prompts()
        for viewer in ("alice", "bob", "carol", None):
            caller = Caller(viewer, viewer or "someone")
            for reg in regs:
                query = OpenQuery(viewer, registration=reg.id)
                listed, total = await store.list_open(query, 100)
                want = sorted(
                    r.prompt_id
                    for r in rows
                    if r.reg_id == reg.id and shown_to(caller, by_id[r.reg_id], r)
                )
                assert sorted(i.row.prompt_id for i in listed) == want, (viewer, reg.id)
                assert total == len(want)
                assert {i.reg.id for i in listed} <= {reg.id}
            mine, total = await store.list_open(OpenQuery(viewer, registered=True), 100)
            want = sorted(
                r.prompt_id
                for r in rows
                if by_id[r.reg_id].registrant == viewer and shown_to(caller, by_id[r.reg_id], r)
            )
            assert sorted(i.row.prompt_id for i in mine) == want and total == len(want), viewer
            both = OpenQuery(viewer, registered=True, registration="r1")
            in_r1 = {r.prompt_id for r in rows if r.reg_id == "r1"}
            listed, _ = await store.list_open(both, 100)
            assert sorted(i.row.prompt_id for i in listed) == [p for p in want if p in in_r1]
        await store.close()

    run(go())


# -- replicas: heartbeats, leases, forwards adopted ------------------------------------


def test_replicas_share_the_leases_and_take_over_a_dead_ones(opener: Opener) -> None:
    async def go() -> None:
        store = opener()
        for i in range(6):
            await store.add_registration(
                Registration(f"r{i}", "http://agent.invalid", f"t{i}", "A", float(i), "a")
            )
        first = await store.hold_leases("A", 30.0)
        assert first == {f"r{i}" for i in range(6)}  # alone: all of them
        second = await store.hold_leases("B", 30.0)
        assert second == set()  # all taken, none expired
        assert len(await store.hold_leases("A", 30.0)) == 3  # gives back beyond its share
        second = await store.hold_leases("B", 30.0)
        third = await store.hold_leases("A", 30.0)
        assert len(second) == 3 and second.isdisjoint(third) and len(third) == 3
        # A dies (stops renewing): with a short lease, B takes everything.
        assert await store.hold_leases("A", 0.2) == third
        await asyncio.sleep(0.3)
        assert await store.hold_leases("B", 30.0) == {f"r{i}" for i in range(6)}
        # A new task goes to whoever asks first, once.
        await store.add_registration(
            Registration("r9", "http://agent.invalid", "t9", "A", 9.0, "a")
        )
        assert await store.take_lease("r9", "A", 30.0)
        assert not await store.take_lease("r9", "B", 30.0)
        # An ended task is nobody's; a replica that leaves gives back all it held.
        await store.end_watch("r9")
        assert "r9" not in await store.hold_leases("A", 30.0)
        await store.leave("B")
        assert len(await store.hold_leases("A", 30.0)) == 6
        await store.close()

    run(go())


def test_a_stopped_replicas_forward_is_adopted_by_one_other(opener: Opener) -> None:
    async def go() -> None:
        store = opener()
        await _seeded(store)
        await store.see_prompt("r1", "p2", None, _env("p2"), None)
        for replica in "ABC":
            await store.hold_leases(replica, 30.0)
        assert await store.begin_forward("r1", "p1", "m1", "{}", ["u"], owner="A")
        assert await store.begin_forward("r1", "p2", "m2", "{}", ["u"], owner="B")
        assert await store.adopt_forwards("C") == []  # A and B are alive
        # A's heartbeat stops: its last one lasts 0.1 s, and more than that passes.
        await store.hold_leases("A", 0.1)
        await asyncio.sleep(0.2)
        got = await asyncio.gather(store.adopt_forwards("B"), store.adopt_forwards("C"))
        adopted = [f.prompt_id for fs in got for f in fs if f.prompt_id == "p1"]
        assert adopted == ["p1"]  # one adopter
        assert [f.prompt_id for f in got[0]].count("p2") == 1  # B's own, still B's
        await store.finish_forward("r1", "p1", "forwarded", "ok")
        assert [f.prompt_id for f in await store.adopt_forwards("C")] == []
        await store.close()

    run(go())


def _claim(responders: list[str], message_id: str = "m1") -> Forward:
    return Forward("r1", "p1", message_id, '{"ok":true}', responders, "forwarding", None, 1.0, "a")


def test_a_ballot_and_what_it_decides_are_one_transaction(opener: Opener) -> None:
    """A held answer's audit entry, or the forward a consensus claims, is written with
    the ballot: both or neither."""

    async def go() -> None:
        store = opener()
        await _seeded(store)
        ballots, claimed = await store.cast_and_decide(
            "r1", "p1", "u1", '{"ok":true}', lambda b: _entry("r1", f"held {len(b)}")
        )
        assert [b.responder for b in ballots] == ["u1"] and claimed is None
        assert [e.action for e in await store.audit()] == ["held 1"]

        def refuse(_: Any) -> AuditEntry:
            raise RuntimeError("deciding failed")

        with pytest.raises(RuntimeError):
            await store.cast_and_decide("r1", "p1", "u2", '{"ok":true}', refuse)
        assert [b.responder for b in await store.ballots("r1", "p1")] == ["u1"]  # rolled back

        fwd = _claim(["u1", "u3"])
        ballots, claimed = await store.cast_and_decide(
            "r1", "p1", "u3", '{"ok":true}', lambda b: fwd
        )
        assert len(ballots) == 2 and claimed == fwd == await store.forward("r1", "p1")
        # Claimed before: the next consensus claims nothing and changes no forward.
        ballots, claimed = await store.cast_and_decide(
            "r1", "p1", "u4", '{"ok":true}', lambda b: _claim(["u4"], "m2")
        )
        assert len(ballots) == 3 and claimed is None
        assert await store.forward("r1", "p1") == fwd
        assert len(await store.audit()) == 1
        # The store is usable after all of it (no transaction left open).
        assert await store.cast_ballot("r1", "p1", "u5", "{}")
        await store.close()

    run(go())


def test_entries_written_with_their_change_keep_the_trails_order(opener: Opener) -> None:
    """Entries appended inside other transactions (ballots held, forwards ended or
    dropped) take the trail's lock as add_audit does: one entry per call, none lost,
    each its own id, however they race with each other and with add_audit."""

    async def go() -> None:
        store = opener()
        await _seeded(store)
        for i in range(4):
            await store.see_prompt("r1", f"q{i}", "c1", {**ENV, "prompt_id": f"q{i}"}, None)
            assert await store.begin_forward("r1", f"q{i}", f"m{i}", "{}", ["alice"])

        async def held(i: int) -> None:
            await store.cast_and_decide(
                "r1", "p1", f"u{i}", "{}", lambda b: _entry("r1", f"held {i}")
            )

        async def ended(i: int) -> None:
            entry = _entry("r1", f"ended {i}")
            if i % 2:
                await store.finish_forward("r1", f"q{i}", "forwarded", "ok", audit=entry)
            else:
                await store.drop_forward("r1", f"q{i}", audit=entry)

        await asyncio.gather(
            *(held(i) for i in range(12)),
            *(ended(i) for i in range(4)),
            *(store.add_audit(_entry("r1", f"alone {i}")) for i in range(4)),
        )
        entries = await store.audit()
        assert sorted(e.action for e in entries) == sorted(
            [f"held {i}" for i in range(12)]
            + [f"ended {i}" for i in range(4)]
            + [f"alone {i}" for i in range(4)]
        )
        ids = [e.id for e in entries]
        assert ids == sorted(ids) and len(set(ids)) == 20
        # A second finish of a forward still appends its entry (an answer is always
        # recorded), and says it did not end the forward.
        late = _entry("r1", "late")
        assert await store.finish_forward("r1", "q1", "failed", "x", audit=late) is False
        assert (await store.audit(None, after=ids[-1]))[0].action == "late"
        await store.close()

    run(go())
