"""Following on the shared loop: the pace of looks, each status with its prompt, an
inbox's list looked at again. Following a real task end to end is in ``test_live.py``."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncGenerator
from typing import Any

from hitl_nb.a2a import Message, Part, Role, Task, TaskState, TaskStatus
from hitl_nb.client import ClientEvent, PromptEvent, StatusEvent, TaskEvent, prompt_of
from hitl_nb.errors import AgentUnreachable
from hitl_nb.notebook._follower import Looking, _paired
from hitl_nb.notebook._worker import shared_loop
from hitl_nb.spec import EXTENSION_URI
from tests.helpers.until import until

ENVELOPE = {
    "prompt_id": "0b7a5a5e-4c1f-4a64-9d55-4f3c6f1b2a10",
    "prompt": "Approve?",
    "response_schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
}


def _status(state: TaskState, envelope: Any = None) -> TaskStatus:
    metadata = {EXTENSION_URI: envelope} if envelope is not None else None
    message = Message("m1", Role.AGENT, [Part(text="Approve?")], metadata=metadata)
    return TaskStatus(state, message)


async def _events(*events: ClientEvent) -> AsyncGenerator[ClientEvent, None]:
    for event in events:
        yield event


def _pairs(*events: ClientEvent) -> list[tuple[ClientEvent, Any]]:
    async def collect() -> list[tuple[ClientEvent, Any]]:
        return [pair async for pair in _paired(_events(*events))]

    return asyncio.run(collect())


def test_a_status_travels_with_the_prompt_the_client_read_in_it() -> None:
    asking = Task("t1", "c1", _status(TaskState.INPUT_REQUIRED, ENVELOPE))
    prompt = prompt_of(asking)
    assert isinstance(prompt, PromptEvent)
    working = StatusEvent("t1", "c1", _status(TaskState.WORKING), "1")
    snapshot = TaskEvent(asking, "2")
    own = PromptEvent("t1", "c1", prompt.envelope, "2")
    pairs = _pairs(working, snapshot, own)
    assert pairs == [(working, None), (snapshot, own)]


def test_a_status_without_its_prompt_goes_on_alone_and_a_stray_prompt_too() -> None:
    asking = Task("t1", "c1", _status(TaskState.INPUT_REQUIRED, ENVELOPE))
    prompt = prompt_of(asking)
    assert isinstance(prompt, PromptEvent)
    plain = StatusEvent("t1", "c1", _status(TaskState.INPUT_REQUIRED), "3")
    other = PromptEvent("t2", "c2", prompt.envelope, "3")  # another task's: not this one's
    last = TaskEvent(Task("t1", "c1", _status(TaskState.INPUT_REQUIRED)))
    assert _pairs(plain, other, last) == [(plain, None), (other, None), (last, None)]


class _Source:
    def __init__(self, fail: int) -> None:
        self.fail = fail
        self.looks = 0
        self.closed = False

    async def list(self) -> Any:
        self.looks += 1
        if self.looks <= self.fail:
            raise AgentUnreachable("down")
        return ["listing", self.looks]

    async def aclose(self) -> None:
        self.closed = True


class _Lister:
    def __init__(self) -> None:
        self.shown: list[Any] = []

    def _apply(self, listing: Any) -> None:
        self.shown.append(listing)

    def _unreadable(self, problem: str) -> None:
        self.shown.append(problem)


def test_the_list_is_looked_at_when_woken_says_why_not_and_ends_when_forgotten() -> None:
    source, lister = _Source(fail=1), _Lister()
    shown = lister.shown
    looking = Looking(shared_loop(), lister, source, interval=3600)
    looking.wake()
    until(lambda: shown == ["down"], what="the problem said")
    looking.wake()
    until(lambda: shown == ["down", ["listing", 2]], what="the listing shown")
    del lister  # held only weakly: forgotten, the looking ends at its next step
    gc.collect()
    looking.wake()
    until(lambda: looking.future.done(), what="the looking to end")
    assert source.closed  # its connections go with it


def test_a_looking_stopped_shows_nothing_more() -> None:
    lister = _Lister()
    looking = Looking(shared_loop(), lister, _Source(fail=0), interval=3600)
    looking.stop()
    until(lambda: looking.future.done(), what="the looking to stop")
    looking.wake()
    assert lister.shown == []
