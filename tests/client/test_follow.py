"""Property tests of the reconnect logic (hitl_nb.client._follow) with fake streams.

Whatever the cut points, and whether or not the agent honours Last-Event-ID, every
event is handed out exactly once and in order.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hitl_nb.a2a import CODEC_V1
from hitl_nb.a2a._model import StreamEvent, Task
from hitl_nb.client._events import PromptEvent, StatusEvent, TaskEvent
from hitl_nb.client._follow import Reconnect, follow
from hitl_nb.errors import AgentUnreachable, UnsupportedOperation
from tests.helpers import wire

POLICY = Reconnect(max_reconnects=3, backoff=0.0)


def _events(n: int) -> list[tuple[str, StreamEvent]]:
    out: list[tuple[str, StreamEvent]] = [
        ("1", CODEC_V1.decode_stream_response({"task": wire.task("t", "submitted")}))
    ]
    for i in range(2, n + 1):
        state = "input_required" if i == n else "working"
        env = wire.envelope() if i == n else None
        out.append((str(i), CODEC_V1.decode_stream_response(wire.status_update("t", state, env))))
    return out


def _server(events: list[tuple[str, StreamEvent]], cuts: list[int], honours: bool) -> Any:
    """Openers that cut connection k after ``cuts[k]`` new events (none after the list)."""
    connections: list[str | None] = []

    def opener(last: str | None) -> AsyncGenerator[tuple[str | None, StreamEvent], None]:
        index = len(connections)
        connections.append(last)

        async def gen() -> AsyncGenerator[tuple[str | None, StreamEvent], None]:
            resume = int(last) if last else 0
            start = resume if honours else 0  # a server ignoring the header replays all
            limit = cuts[index] if index < len(cuts) else None
            for position, (event_id, event) in enumerate(events[start:], start):
                # the cut comes after ``limit`` events the client had not seen yet
                if limit is not None and position >= resume + limit:
                    raise AgentUnreachable("cut")
                yield event_id, event
            await asyncio.sleep(0)

        return gen()

    return opener, connections


async def _collect(opener: Any, task: Task | None = None) -> list[Any]:
    async def get_task(task_id: str) -> Task:
        assert task is not None
        return task

    async def gather() -> list[Any]:
        return [e async for e in follow(opener, lambda tid: opener, get_task, POLICY)]

    return await asyncio.wait_for(gather(), 10)


@pytest.mark.property
@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=2, max_value=8),
    cuts=st.lists(st.integers(min_value=1, max_value=4), max_size=6),
    honours=st.booleans(),
)
def test_every_event_exactly_once_in_order(n: int, cuts: list[int], honours: bool) -> None:
    events = _events(n)
    opener, connections = _server(events, cuts, honours)
    got = asyncio.run(_collect(opener))
    ids = [e.event_id for e in got if isinstance(e, (TaskEvent, StatusEvent))]
    assert ids == [str(i) for i in range(1, n + 1)]
    assert type(got[-1]).__name__ == "PromptEvent"
    assert connections[0] is None
    assert all(c is not None for c in connections[1:])


def test_reconnects_are_bounded() -> None:
    events = _events(6)
    opener, connections = _server(events, [1, 0, 0, 0, 0, 0], True)
    with pytest.raises(AgentUnreachable, match="gave up after 3 reconnect attempts"):
        asyncio.run(_collect(opener))
    assert len(connections) == 4


def test_total_reconnects_are_bounded_even_with_progress() -> None:
    # Every connection brings one new (id-less) status, then is cut: progress each time.
    opened: list[int] = []

    def opener(last: str | None) -> AsyncGenerator[tuple[str | None, StreamEvent], None]:
        opened.append(1)
        update = wire.status_update("t", "working")
        update["statusUpdate"]["status"]["timestamp"] = f"2026-01-01T00:00:{len(opened):02d}Z"

        async def gen() -> AsyncGenerator[tuple[str | None, StreamEvent], None]:
            yield None, CODEC_V1.decode_stream_response(update)
            raise AgentUnreachable("cut")

        return gen()

    policy = Reconnect(max_reconnects=3, backoff=0.0, max_total_reconnects=20)
    assert policy.max_total_reconnects < 60  # the timestamps above stay valid

    async def go() -> None:
        async def get_task(task_id: str) -> Task:
            raise AssertionError("not called")

        async for _ in follow(opener, lambda tid: opener, get_task, policy):
            pass

    with pytest.raises(AgentUnreachable, match="gave up after 20 reconnect attempts"):
        asyncio.run(asyncio.wait_for(go(), 10))


def test_replayed_old_statuses_without_ids_are_not_handed_out_again() -> None:
    events = _events(3)

    def opener(last: str | None) -> AsyncGenerator[tuple[str | None, StreamEvent], None]:
        async def gen() -> AsyncGenerator[tuple[str | None, StreamEvent], None]:
            yield None, events[0][1]
            yield None, events[1][1]
            raise AgentUnreachable("cut")

        return gen()

    delivered: list[Any] = []

    async def go() -> None:
        async def get_task(task_id: str) -> Task:
            raise AssertionError("not called")

        async for item in follow(opener, lambda tid: opener, get_task, POLICY):
            delivered.append(item)

    with pytest.raises(AgentUnreachable, match="gave up after 3 reconnect attempts"):
        asyncio.run(asyncio.wait_for(go(), 10))
    assert [type(e) for e in delivered] == [TaskEvent, StatusEvent]


def test_progress_resets_the_reconnect_budget() -> None:
    events = _events(8)
    opener, connections = _server(events, [1, 1, 1, 1, 1, 1, 1], True)
    got = asyncio.run(_collect(opener))
    assert len([e for e in got if isinstance(e, (TaskEvent, StatusEvent))]) == 8
    assert len(connections) == 8


def test_terminal_task_after_a_drop_is_read_with_get_task() -> None:
    events = _events(3)
    final = CODEC_V1.decode_task(wire.task("t", "completed"))

    def opener(last: str | None) -> AsyncGenerator[tuple[str | None, StreamEvent], None]:
        async def gen() -> AsyncGenerator[tuple[str | None, StreamEvent], None]:
            if last is not None:
                raise UnsupportedOperation("task is terminal")
            yield events[0]
            raise AgentUnreachable("cut")

        return gen()

    got = asyncio.run(_collect(opener, final))
    assert [type(e) for e in got] == [TaskEvent, TaskEvent]
    assert got[-1].state.value == "completed"


def test_snapshot_with_artifacts_made_while_disconnected_is_delivered() -> None:
    events = _events(3)
    working = CODEC_V1.decode_task(wire.task("t", "working"))
    with_artifact = CODEC_V1.decode_task(
        {**wire.task("t", "working"), "artifacts": [{"artifactId": "a1", "parts": [{"text": "x"}]}]}
    )
    snapshots = [working, with_artifact]
    opened: list[int] = []

    def opener(last: str | None) -> AsyncGenerator[tuple[str | None, StreamEvent], None]:
        opened.append(1)
        first = len(opened) == 1

        async def gen() -> AsyncGenerator[tuple[str | None, StreamEvent], None]:
            if first:
                yield None, events[0][1]
                yield None, events[1][1]
            else:
                yield None, snapshots.pop(0)
                if not snapshots:
                    yield None, events[2][1]
                    return
            raise AgentUnreachable("cut")

        return gen()

    got = asyncio.run(_collect(opener))
    kinds = [type(e).__name__ for e in got]
    # the first snapshot repeats "working": skipped; the second brings artifact a1
    assert kinds == ["TaskEvent", "StatusEvent", "TaskEvent", "StatusEvent", "PromptEvent"]
    assert got[2].task.artifacts[0].artifact_id == "a1"


def test_an_agent_that_numbers_each_connection_from_one_loses_no_event() -> None:
    # Ids "1", "2" again on the second connection, for different events: before, the
    # client took them for replays and ended the stream without the prompt.
    first = _events(3)[:2]  # 1: submitted task, 2: working
    snapshot = CODEC_V1.decode_stream_response({"task": wire.task("t", "working")})
    waiting = CODEC_V1.decode_stream_response(
        wire.status_update("t", "input_required", wire.envelope())
    )
    connections: list[str | None] = []

    def opener(last: str | None) -> AsyncGenerator[tuple[str | None, StreamEvent], None]:
        connections.append(last)

        async def gen() -> AsyncGenerator[tuple[str | None, StreamEvent], None]:
            if len(connections) == 1:
                for item in first:
                    yield item
                raise AgentUnreachable("cut")
            yield "1", snapshot
            yield "2", waiting

        return gen()

    got = asyncio.run(_collect(opener))
    names = [type(e).__name__ for e in got]
    assert names[-1] == "PromptEvent", names
    assert connections == [None, "2"]
    # submitted, working, then the prompt's status and prompt; the snapshot repeats
    # the working status already delivered (same timestamp) and is skipped.
    assert sum(isinstance(e, StatusEvent) and e.status.state.value == "working" for e in got) == 1
    assert [e.event_id for e in got if isinstance(e, StatusEvent)] == ["2", "2"]


def test_on_reconnect_is_told_before_each_reconnect() -> None:
    events = _events(5)
    opener, connections = _server(events, [2, 1], honours=True)
    told: list[tuple[int, str]] = []

    def hook(attempt: int, delay: float, reason: Exception) -> None:
        told.append((attempt, str(reason)))
        raise RuntimeError("a broken display hook")  # logged, never ends the stream

    async def gather() -> list[Any]:
        follower = follow(opener, lambda tid: opener, _no_task, POLICY, on_reconnect=hook)
        return [e async for e in follower]

    out = asyncio.run(asyncio.wait_for(gather(), 10))
    assert [e.event_id for e in out if isinstance(e, (TaskEvent, StatusEvent))] == [
        "1",
        "2",
        "3",
        "4",
        "5",
    ]
    assert told == [(1, "cut"), (1, "cut")] and len(connections) == 3


async def _no_task(task_id: str) -> Task:
    raise AssertionError("not needed")


def _answer_stream(cut_after_snapshot: bool) -> tuple[Any, list[int], str]:
    """An SDK-style answer stream: the stored task (still on prompt X), WORKING, then a
    new prompt Y; the first connection is cut right after the snapshot when asked."""
    x, y = wire.envelope("first?"), wire.envelope("second?")
    snapshot = CODEC_V1.decode_stream_response({"task": wire.task("t", "input_required", x)})
    working = CODEC_V1.decode_stream_response(wire.status_update("t", "working"))
    asks = CODEC_V1.decode_stream_response(wire.status_update("t", "input_required", y))
    opened: list[int] = []

    def opener(last: str | None) -> AsyncGenerator[tuple[str | None, StreamEvent], None]:
        opened.append(1)

        async def gen() -> AsyncGenerator[tuple[str | None, StreamEvent], None]:
            yield None, snapshot
            if cut_after_snapshot and len(opened) == 1:
                raise AgentUnreachable("cut")
            yield None, working
            yield None, asks

        return gen()

    return opener, opened, x["prompt_id"]


@pytest.mark.parametrize("cut", [False, True], ids=["whole", "cut-after-snapshot"])
def test_an_answer_stream_goes_past_the_prompt_it_answers(cut: bool) -> None:
    opener, opened, answered = _answer_stream(cut)

    async def gather() -> list[Any]:
        async def get_task(task_id: str) -> Task:
            raise AssertionError("not needed")

        events = follow(opener, lambda tid: opener, get_task, POLICY, "t", answered=answered)
        return [e async for e in events]

    events = asyncio.run(asyncio.wait_for(gather(), 10))
    prompts = [e for e in events if isinstance(e, PromptEvent)]
    assert [p.prompt for p in prompts] == ["second?"]  # never the one being answered
    assert isinstance(events[0], TaskEvent) and isinstance(events[-1], PromptEvent)
    assert len(opened) == (2 if cut else 1)


def test_without_the_answered_prompt_the_snapshot_ends_the_stream() -> None:
    opener, _, _ = _answer_stream(False)

    async def gather() -> list[Any]:
        async def get_task(task_id: str) -> Task:
            raise AssertionError("not needed")

        return [e async for e in follow(opener, lambda tid: opener, get_task, POLICY, "t")]

    events = asyncio.run(asyncio.wait_for(gather(), 10))
    assert [type(e) for e in events] == [TaskEvent, PromptEvent]  # a plain stream: stops
