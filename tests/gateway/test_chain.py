"""The audit trail's hash chain on each database: every way an entry is written chains
it, replicas writing at once keep one line, an export reads back as it was written, and
tampering by SQL is found and named."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from typing import Any

import pytest

from hitl_nb.gateway import AgentPool, Caller, Gateway, GatewaySettings, GatewayStore
from hitl_nb.gateway._audit_export import exported, read_export, write_export
from hitl_nb.gateway._audit_verify import Verdict, verify
from hitl_nb.gateway._chain import GENESIS, content_digest, link_hash
from hitl_nb.gateway._store import AuditEntry
from hitl_nb.mock_agent import MockAgent
from tests.gateway.conftest import Opener
from tests.helpers.tasks import start_task

YES = {"approve": True}
ALICE, BOB = Caller("alice", "Alice"), Caller("bob", "Bob")


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


def _entry(i: int, reg: str = "r1", reason: str | None = None) -> AuditEntry:
    return AuditEntry(
        1_750_000_000.0 + i / 7,
        reg,
        "t1",
        "http://agent.invalid",
        f"p{i}",
        "alice",
        "Alice é",
        "held",
        202,
        reason,
        "a" * 64,
        None,
        ["alice"],
        {"message": f"ok {i}", "nested": {"b": 1, "a": [1.5, None]}},
    )


async def _rows(store: GatewayStore) -> list[dict[str, Any]]:
    return [r async for r in exported(store)]


async def _verdict(store: GatewayStore) -> Verdict:
    return verify(await _rows(store))


def test_each_entry_links_to_the_one_before(opener: Opener) -> None:
    async def go() -> None:
        store = opener()
        for i in range(5):
            await store.add_audit(_entry(i))
        rows = await _rows(store)
        assert [r["seq"] for r in rows] == [1, 2, 3, 4, 5]
        prev = GENESIS
        for r in rows:
            # The database's hash (computed by the appending statement) is Python's.
            assert r["prev_hash"] == prev
            assert r["hash"] == link_hash(content_digest(r), prev, r["seq"])
            prev = r["hash"]
        assert (await _verdict(store)).whole
        await store.close()

    asyncio.run(go())


def test_answers_refusals_and_forwards_are_chained(opener: Opener, agent: MockAgent) -> None:
    async def go() -> None:
        gw = Gateway(opener(), AgentPool([], 5.0), GatewaySettings(watch=False))
        await gw.start()
        try:
            task = await start_task(agent.url, "approval")
            _, reg = await gw.register(ALICE, agent.url, task.id)
            pid = reg["prompts"][0]["prompt_id"]
            assert (await gw.answer(reg["id"], pid, ALICE, YES)).status == 200
            with pytest.raises(Exception) as late:
                await gw.answer(reg["id"], pid, BOB, YES)
            assert getattr(late.value, "status", None) == 409
            rows = await _rows(gw.store)
            assert [r["action"] for r in rows] == ["forwarded", "refused"]
            assert [r["seq"] for r in rows] == [1, 2]
            assert (await _verdict(gw.store)).whole
        finally:
            await gw.close()

    asyncio.run(go())


def test_entries_in_the_transactions_of_forwards_are_chained(opener: Opener) -> None:
    async def go() -> None:
        store = opener()
        await store.add_audit(_entry(0))
        assert await store.begin_forward("r1", "p1", "m1", "{}", ["alice"])
        await store.finish_forward("r1", "p1", "forwarded", "ok", audit=_entry(1))
        assert await store.begin_forward("r1", "p2", "m2", "{}", ["alice"])
        await store.drop_forward("r1", "p2", audit=_entry(2))
        rows = await _rows(store)
        assert [r["prompt_id"] for r in rows] == ["p0", "p1", "p2"]
        assert (await _verdict(store)).whole
        await store.close()

    asyncio.run(go())


def test_replicas_appending_at_once_keep_one_chain(opener: Opener) -> None:
    async def go() -> None:
        a, b = opener(), opener()
        await a.open()
        await b.open()

        async def write(store: GatewayStore, base: int) -> None:
            for i in range(25):
                if i % 3 == 0:
                    key = f"p{base + i}"
                    assert await store.begin_forward("r1", key, f"m{key}", "{}", ["x"])
                    await store.drop_forward("r1", key, audit=_entry(base + i))
                else:
                    await store.add_audit(_entry(base + i))

        await asyncio.gather(write(a, 0), write(b, 100), write(a, 200), write(b, 300))
        rows = await _rows(a)
        assert [r["seq"] for r in rows] == list(range(1, 101))
        verdict = verify(rows)
        assert verdict.whole, verdict.lines()
        await a.close()
        await b.close()

    asyncio.run(go())


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_an_export_reads_back_as_written_and_verifies_alone(opener: Opener, fmt: str) -> None:
    async def go() -> None:
        store = opener()
        for i in range(4):
            await store.add_audit(_entry(i, reason=[None, "", 'a,b\n"q"', "é🚀"][i]))
        rows = await _rows(store)
        out = io.StringIO()
        assert write_export(rows, out, fmt) == 4
        back = read_export(out.getvalue().encode("utf-8"), fmt)
        if fmt == "jsonl":
            assert back == rows
        else:  # a CSV cannot tell an empty text from none
            assert back == [{k: (None if v == "" else v) for k, v in r.items()} for r in rows]
        assert verify(back, segment=True).whole
        # A time range is one run of the chain: verified as a segment.
        first, last = await store.chain_span(rows[1]["at"], rows[2]["at"])
        assert (first, last) == (2, 3)
        part = [r async for r in exported(store, since=rows[1]["at"], until=rows[2]["at"])]
        verdict = verify(part, segment=True)
        assert verdict.whole and "taken as given" in verdict.notes[0]
        assert not verify(part).whole  # as a whole chain, its start is missing
        await store.close()

    asyncio.run(go())


async def _swap(store: GatewayStore, x: int, y: int) -> None:
    """Swap two entries' every column but ``id`` (their places in the chain too)."""
    columns = (
        "at, reg_id, task_id, agent_url, prompt_id, responder, display, action, status, "
        "reason, payload_sha256, schema_sha256, responders, agent_reply, prev_hash, hash"
    ).split(", ")
    db = store._db
    rows = {
        r[0]: r[1:]
        for r in await db.rows(
            f"SELECT id, seq, {', '.join(columns)} FROM audit WHERE id IN (?, ?)", (x, y)
        )
    }
    sets = ", ".join(f"{c} = ?" for c in columns)
    await db.count("UPDATE audit SET seq = NULL WHERE id = ?", (x,))
    await db.count(f"UPDATE audit SET seq = ?, {sets} WHERE id = ?", (*rows[x], y))
    await db.count(f"UPDATE audit SET seq = ?, {sets} WHERE id = ?", (*rows[y], x))


def test_tampering_by_sql_is_found_and_named(opener: Opener) -> None:
    async def go() -> None:
        store = opener()
        for i in range(30):
            await store.add_audit(_entry(i))
        ids = {r["seq"]: r["id"] for r in await _rows(store)}
        db = store._db
        await db.count("UPDATE audit SET reason = ? WHERE seq = ?", ("nothing to see", 17))
        await db.count("DELETE FROM audit WHERE seq = ?", (10,))
        await _swap(store, ids[20], ids[21])
        verdict = await _verdict(store)
        lines = verdict.lines()
        assert not verdict.whole
        assert any(
            line.startswith("entry 17 (")
            and line.endswith(
                "was changed after it was written (its hash does not match its content)"
            )
            for line in lines
        ), lines
        assert "an entry is missing between 9 and 11" in lines
        assert "entries 20 and 21 are out of order" in lines
        assert len(verdict.findings) == 3, lines
        # A whole chain rewritten from an entry on is not found (said in the docs).
        await store.close()

    asyncio.run(go())
