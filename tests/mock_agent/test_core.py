"""The core (hitl_nb.mock_agent._core): which part a message goes to, and that a refused
message leaves nothing behind. Driven directly, no HTTP: the bindings are tested on the
wire in test_agent.py."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.a2a import Message, Part, PushConfig, Role, TaskState
from hitl_nb.errors import InvalidParams, PromptConflict, UnsupportedOperation
from hitl_nb.mock_agent import MemoryTaskStore, ScenarioRegistry, SQLiteTaskStore
from hitl_nb.mock_agent._core import AgentCore
from hitl_nb.mock_agent._push_configs import IncomingPush
from hitl_nb.mock_agent._records import TaskRecord
from hitl_nb.spec import RESPONSE_KEY


def _message(
    *parts: Part,
    task_id: str | None = None,
    message_id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Message:
    mid = message_id or str(uuid.uuid4())
    return Message(mid, Role.USER, list(parts), task_id=task_id, metadata=metadata)


def _core(store: Any = None) -> AgentCore:
    core = AgentCore(scenarios=ScenarioRegistry(), store=store or MemoryTaskStore())
    core.attach(asyncio.get_running_loop())
    return core


def _task(result: tuple[TaskRecord | Message, int]) -> TaskRecord:
    rec, _ = result
    assert isinstance(rec, TaskRecord)
    return rec


def test_a_tck_message_goes_to_the_tck_contract_and_others_to_the_script() -> None:
    async def run() -> None:
        core = _core()
        tck = _task(core.send(_message(Part(text="hi"), message_id="tck-reject-task-1")))
        assert tck.scenario == "tck" and tck.task.status.state is TaskState.REJECTED
        plain = _task(core.send(_message(Part(text="multi-step"))))
        assert plain.scenario == "multi-step" and plain.prompt is not None
        reply, start = core.send(_message(Part(text="hi"), message_id="tck-message-response-1"))
        assert isinstance(reply, Message) and reply.role is Role.AGENT and start == 0
        assert set(core.book.tasks) == {tck.id, plain.id}  # a direct reply makes no task
        core.close()

    asyncio.run(run())


def test_a_refused_webhook_leaves_no_task() -> None:
    async def run() -> None:
        core = _core()
        bad: IncomingPush = (PushConfig("ftp://127.0.0.1/hook"), "1.0", True)
        scripted = _message(Part(text="approval"))
        tck = _message(Part(text="hi"), message_id="tck-complete-task-1")
        for first in (scripted, tck):
            with pytest.raises(InvalidParams, match="http"):
                core.send(first, bad)
        assert core.book.tasks == {}
        core.close()

    asyncio.run(run())


def test_messages_on_a_waiting_task() -> None:
    async def run() -> None:
        core = _core()
        rec = _task(core.send(_message(Part(text="approval"))))
        assert rec.prompt is not None
        pid, history = rec.prompt.prompt_id, len(rec.task.history)
        # a plain message is kept; the prompt stays open
        _, start = core.send(_message(Part(text="which build?"), task_id=rec.id))
        assert start == rec.outbox.last_id and len(rec.task.history) == history + 1
        assert rec.prompt is not None and rec.prompt.prompt_id == pid
        # an answer to another prompt id is refused; a data part answers the open one
        other = {RESPONSE_KEY: {"prompt_id": str(uuid.uuid4()), "payload": {"approve": True}}}
        with pytest.raises(PromptConflict):
            core.send(_message(Part(text="yes"), task_id=rec.id, metadata=other))
        core.send(_message(Part(data={"approve": True}), task_id=rec.id))
        await core.settled(rec)
        assert rec.task.status.state is TaskState.COMPLETED
        with pytest.raises(UnsupportedOperation, match="completed"):
            core.send(_message(Part(text="more?"), task_id=rec.id))
        core.close()

    asyncio.run(run())


def test_an_answer_must_name_its_task() -> None:
    async def run() -> None:
        core = _core()
        answer = {RESPONSE_KEY: {"prompt_id": str(uuid.uuid4()), "payload": {}}}
        with pytest.raises(InvalidParams, match="taskId"):
            core.send(_message(Part(text="yes"), metadata=answer))
        assert core.book.tasks == {}
        core.close()

    asyncio.run(run())


def test_a_task_stopped_between_an_answer_and_its_next_step_carries_on(tmp_path: Path) -> None:
    async def first_life() -> str:
        core = _core(SQLiteTaskStore(tmp_path / "a.db"))
        rec = _task(core.send(_message(Part(text="approval"))))
        core.send(_message(Part(data={"approve": True}), task_id=rec.id))
        assert rec.task.status.state is TaskState.WORKING  # the end is one loop turn away
        core.close()  # ... which never comes
        return rec.id

    async def second_life(task_id: str) -> TaskState:
        core = _core(SQLiteTaskStore(tmp_path / "a.db"))
        rec = core.get(task_id)
        await core.settled(rec)
        state = rec.task.status.state
        core.close()
        return state

    task_id = asyncio.run(first_life())
    assert asyncio.run(second_life(task_id)) is TaskState.COMPLETED


def test_a_refused_follow_up_takes_its_webhook_back() -> None:
    async def run() -> None:
        core = _core()
        rec = _task(core.send(_message(Part(text="approval"))))
        kept: IncomingPush = (PushConfig("http://127.0.0.1:9/kept", id="kept"), "1.0", True)
        core.send(_message(Part(text="which build?"), task_id=rec.id), kept)
        assert set(rec.push) == {"kept"}
        wrong_answer = {RESPONSE_KEY: {"prompt_id": str(uuid.uuid4()), "payload": {}}}
        refused = [
            (InvalidParams, _message(Part(text="x"), task_id=rec.id)),
            (PromptConflict, _message(Part(text="x"), task_id=rec.id, metadata=wrong_answer)),
        ]
        refused[0][1].context_id = "another-context"
        for error, message in refused:
            for config_id in ("new", "kept"):  # a new webhook, and one replacing ours
                push: IncomingPush = (
                    PushConfig("http://127.0.0.1:9/other", id=config_id),
                    "1.0",
                    True,
                )
                with pytest.raises(error):
                    core.send(message, push)
                assert set(rec.push) == {"kept"}
                assert rec.push["kept"].config.url == "http://127.0.0.1:9/kept"
        core.close()

    asyncio.run(run())
