"""Two gateways on one database act as one (hitl_nb/gateway/_replicas.py), on each
store: a deadline timed and a late answer refused by a replica that never saw the
prompt arrive; racing answers forward once; each task watched by one replica, and by
the other once the first leaves; a forward left in doubt by a replica that stopped
is settled by another, once. (The same with real service processes, ``kill -9`` and a
database restart: ``tests/hub/test_replicas.py``.) A replica's close returns though the
cancellation of its rounds was lost in a database call."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.gateway import AgentPool, Caller, Gateway, GatewaySettings
from hitl_nb.gateway._forward import conclude, send
from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.mock_agent import MockAgent
from tests.gateway.conftest import Opener
from tests.helpers.lost_cancel import lose_a_cancellation
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.until import until_async

YES = {"approve": True}
ALICE, BOB = Caller("alice", "Alice"), Caller("bob", "Bob")


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


def _gateway(opener: Opener, **settings: Any) -> Gateway:
    chosen = {"lease_seconds": 1.0, "poll_interval": 0.5, "show_all": False, **settings}
    return Gateway(opener(), AgentPool([], 5.0), GatewaySettings(**chosen))


async def _pair(opener: Opener, **settings: Any) -> tuple[Gateway, Gateway]:
    a, b = _gateway(opener, **settings), _gateway(opener, **settings)
    await a.start()
    await b.start()
    return a, b


def test_a_replica_that_never_saw_the_prompt_times_its_deadline(
    opener: Opener, agent: MockAgent
) -> None:
    async def go() -> None:
        a = _gateway(opener, watch=False)
        await a.start()  # its database opened first: the deadline runs from the prompt
        task = await start_task(agent.url, "deadline", deadline_seconds=2)
        _, reg = await a.register(ALICE, agent.url, task.id)
        (prompt,) = reg["prompts"]
        await a.close()  # its timer goes with it
        b = _gateway(opener, watch=False)
        await b.start()  # it never read the task
        try:
            row = await until_async(
                lambda: _closed(b, reg["id"], prompt["prompt_id"]),
                timeout=30,
                what="the prompt to close at its deadline",
            )
            assert row.closed == "expired"
            with pytest.raises(Exception) as late:
                await b.answer(reg["id"], prompt["prompt_id"], BOB, YES)
            assert getattr(late.value, "status", None) == 410
            assert await answers_at_agent(agent.url, task.id) == []
        finally:
            await b.close()

    asyncio.run(go())


async def _closed(gw: Gateway, reg_id: str, prompt_id: str) -> Any:
    row = await gw.store.prompt(reg_id, prompt_id)
    return row if row is not None and row.closed is not None else None


def test_answers_racing_on_two_replicas_forward_once(opener: Opener, agent: MockAgent) -> None:
    async def go() -> None:
        task = await start_task(agent.url, "approval")
        a, b = await _pair(opener)
        try:
            _, reg = await a.register(ALICE, agent.url, task.id)
            pid = reg["prompts"][0]["prompt_id"]

            async def answer(i: int) -> int:
                gw = (a, b)[i % 2]
                try:
                    return (await gw.answer(reg["id"], pid, Caller(f"u{i}", f"U{i}"), YES)).status
                except Exception as exc:  # GatewayError: the 409s
                    return int(getattr(exc, "status", 0))

            statuses = await asyncio.gather(*(answer(i) for i in range(20)))
            assert sorted(statuses) == [200] + [409] * 19
            assert [x["payload"] for x in await answers_at_agent(agent.url, task.id)] == [YES]
        finally:
            await a.close()
            await b.close()

    asyncio.run(go())


def test_each_task_is_watched_by_one_replica_and_by_the_other_when_it_leaves(
    opener: Opener, agent: MockAgent
) -> None:
    async def go() -> None:
        tasks = [await start_task(agent.url, "approval") for _ in range(4)]
        a, b = await _pair(opener)
        a_open = True
        try:
            regs = [(await a.register(ALICE, agent.url, t.id))[1]["id"] for t in tasks]

            async def balanced() -> bool:
                on_a = {r for r in regs if a.watchers.watching(r)}
                on_b = {r for r in regs if b.watchers.watching(r)}
                return len(on_a) == len(on_b) == 2 and not on_a & on_b

            await until_async(balanced, timeout=30, what="two tasks watched by each")
            a_open = False
            await a.close()  # gives its leases back

            async def all_on_b() -> bool:
                return all(b.watchers.watching(r) for r in regs)

            await until_async(all_on_b, timeout=30, what="b to watch every task")
        finally:
            if a_open:
                await a.close()
            await b.close()

    asyncio.run(go())


def test_a_forward_a_stopped_replica_left_in_doubt_is_settled_once(
    opener: Opener, agent: MockAgent
) -> None:
    async def go() -> None:
        task = await start_task(agent.url, "approval")
        a = _gateway(opener, watch=False)
        await a.start()
        _, reg = await a.register(ALICE, agent.url, task.id)
        pid = reg["prompts"][0]["prompt_id"]
        # Replica "dead" claimed the forward and died before sending (heartbeat stops).
        await a.store.hold_leases("dead", 0.5)
        claim = ("m-dead", '{"approve":true}', ["bob"])
        assert await a.store.begin_forward(reg["id"], pid, *claim, owner="dead")

        async def settled() -> Any:
            fwd = await a.store.forward(reg["id"], pid)
            return fwd if fwd is not None and fwd.state == "forwarded" else None

        try:
            fwd = await until_async(settled, timeout=30, what="the forward to be settled")
            assert fwd.owner == a.replica
            answers = await answers_at_agent(agent.url, task.id)
            assert [x["payload"] for x in answers] == [YES]
        finally:
            await a.close()

    asyncio.run(go())


def test_a_forward_its_slow_owner_ended_meanwhile_is_recorded_once(
    opener: Opener, agent: MockAgent
) -> None:
    """A replica taken for dead while only slow (its heartbeat late) ends its forward
    while another settles it: the trail says once how it ended, not twice."""

    async def go() -> None:
        task = await start_task(agent.url, "approval")
        a = _gateway(opener, watch=False)
        await a.start()
        try:
            _, reg = await a.register(ALICE, agent.url, task.id)
            pid = reg["prompts"][0]["prompt_id"]
            claim = ("m-slow", '{"approve":true}', ["bob"])
            fwd = await a.store.begin_forward(reg["id"], pid, *claim, owner="slow")
            assert fwd is not None
            row = await a.store.prompt(reg["id"], pid)
            assert row is not None
            # The slow replica sends it and records that, after a took it over ...
            client = a.pool.client(agent.url)
            sent = await conclude(a.store, fwd, await send(client, fwd, task.id, row.context_id))
            assert sent.status == 200 and sent.ended_here
            # ... and a settles the forward as it read it, still in doubt.
            await a._settle(fwd)
            assert await a.audit(Caller("dora", "Dora", admin=True)) == []
            answers = await answers_at_agent(agent.url, task.id)
            assert [x["payload"] for x in answers] == [YES]
        finally:
            await a.close()

    asyncio.run(go())


class _LosesACancellation(SQLiteStore):
    """A store whose next lease round, once ``armed``, loses its task's cancellation
    (as psycopg_pool's wait for a connection did on Python 3.10 under load)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.armed = False
        self.entered = asyncio.Event()

    async def hold_leases(self, replica: str, ttl: float) -> set[str]:
        if self.armed:
            self.armed = False
            await lose_a_cancellation(self.entered)
        return await super().hold_leases(replica, ttl)


def test_a_close_returns_though_its_rounds_lost_their_cancellation(tmp_path: Path) -> None:
    async def go() -> None:
        store = _LosesACancellation(tmp_path / "gateway.sqlite")
        settings = GatewaySettings(lease_seconds=1.0, poll_interval=0.5, watch=False)
        gw = Gateway(store, AgentPool([], 5.0), settings)
        await gw.start()
        store.armed = True
        await store.entered.wait()  # a round waits in the database
        closing = asyncio.ensure_future(gw.close())

        async def closed() -> bool:
            return closing.done()

        await until_async(closed, timeout=30, what="the replica's close() to return")
        closing.result()

    asyncio.run(go())
