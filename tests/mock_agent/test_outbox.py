"""The outbox: monotonic ids, exact replay, listeners that miss nothing."""

from __future__ import annotations

import asyncio

import pytest

from hitl_nb.a2a._model import TaskState, TaskStatus, TaskStatusUpdateEvent
from hitl_nb.mock_agent._outbox import CLOSED, Outbox, ends_stream, follow
from tests.helpers.until import until_async


def ev(state: TaskState) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent("t", "c", TaskStatus(state))


def test_ids_and_after() -> None:
    box = Outbox()
    assert box.last_id == 0 and box.after(0) == []
    ids = [box.append(ev(TaskState.WORKING)) for _ in range(3)]
    assert ids == [1, 2, 3] and box.last_id == 3 and len(box) == 3
    assert [i for i, _ in box.after(1)] == [2, 3]
    assert box.after(3) == [] and [i for i, _ in box.after(-5)] == [1, 2, 3]
    with pytest.raises(ValueError, match="must increase"):
        Outbox([(2, ev(TaskState.WORKING)), (2, ev(TaskState.WORKING))])
    restored = Outbox(box.after(0))
    assert restored.append(ev(TaskState.COMPLETED)) == 4


def test_ends_stream() -> None:
    assert not ends_stream(ev(TaskState.WORKING))
    assert ends_stream(ev(TaskState.INPUT_REQUIRED)) and ends_stream(ev(TaskState.FAILED))


def test_follow_replays_then_goes_live_without_gap_or_duplicate() -> None:
    async def run() -> list[object]:
        box = Outbox()
        box.append(ev(TaskState.SUBMITTED))
        box.append(ev(TaskState.WORKING))
        seen: list[object] = []

        async def consume() -> None:
            async for item in follow(box, 1, ping_interval=10):
                assert item is not None
                seen.append(item[0])

        task = asyncio.create_task(consume())
        await asyncio.sleep(0)  # the follower has read the backlog and listens
        box.append(ev(TaskState.WORKING))
        box.append(ev(TaskState.INPUT_REQUIRED))  # ends the stream
        box.append(ev(TaskState.WORKING))  # never delivered
        await asyncio.wait_for(task, 5)
        assert box.listeners == 0
        return seen

    assert asyncio.run(run()) == [2, 3, 4]


def test_idle_follow_yields_pings_and_close_ends_it() -> None:
    async def run() -> list[object]:
        box = Outbox()
        seen: list[object] = []

        async def consume() -> None:
            async for item in follow(box, 0, ping_interval=0.01):
                seen.append(item)

        task = asyncio.create_task(consume())

        async def two_pings() -> bool:
            return len(seen) >= 2

        await until_async(two_pings, timeout=30, what="two pings", interval=0.01)
        box.close()
        await asyncio.wait_for(task, 5)
        return seen

    seen = asyncio.run(run())
    assert seen[:2] == [None, None] and CLOSED == (0, None)
