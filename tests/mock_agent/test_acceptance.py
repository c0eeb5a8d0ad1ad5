"""Acceptance and rejection (hitl_nb.mock_agent._acceptance): of racing answers exactly
one is accepted, 409 for an unknown or answered prompt, 422 with validation_errors and
the prompt still open, every check before any change."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from hitl_nb.a2a import Message, Part, Role, TaskState
from hitl_nb.errors import PromptConflict, ResponseInvalid
from hitl_nb.mock_agent import Faults, MemoryTaskStore, MockAgent, ScenarioRegistry
from hitl_nb.mock_agent._acceptance import Acceptance
from hitl_nb.mock_agent._records import TaskRecord, record_to_json
from hitl_nb.mock_agent._script import Script
from hitl_nb.mock_agent._task_book import TaskBook
from tests.helpers.mock_agent_client import URI, Wire, envelope_of, headers, user_message


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as a:
        yield a


@pytest.fixture()
def wire(agent: MockAgent) -> Iterator[Wire]:
    w = Wire(agent.url)
    yield w
    w.close()


def test_unactivated_client_can_answer_with_a_data_part(wire: Wire) -> None:
    task = wire.start(activated=False)
    msg = user_message([{"data": {"approve": True}}], task_id=task["id"])
    res = wire.result("SendMessage", {"message": msg}, activated=False)
    assert res["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_422_keeps_the_prompt_open_then_a_fix_is_accepted(wire: Wire) -> None:
    task = wire.start()
    pid = envelope_of(task)["prompt_id"]
    r, body = wire.answer(task["id"], pid, {"approve": "yes", "extra": 1})
    err = body["error"]
    assert err["code"] == -32011 and err["message"] == "hitl_response_invalid"
    info, detail = err["data"]
    assert (
        info["@type"].endswith("google.rpc.ErrorInfo") and info["reason"] == "HITL_RESPONSE_INVALID"
    )
    assert {(e["path"], e["keyword"]) for e in detail["validation_errors"]} == {
        ("/approve", "type"),
        ("/extra", "additionalProperties"),
    }
    assert wire.get_task(task["id"])["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    r, body = wire.answer(task["id"], pid, {"approve": True, "comment": "ok"})
    assert body["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_409_for_duplicate_unknown_and_foreign_prompt_ids(wire: Wire) -> None:
    a, b = wire.start(), wire.start()
    pa, pb = envelope_of(a)["prompt_id"], envelope_of(b)["prompt_id"]
    _, body = wire.answer(a["id"], pb, {"approve": True})  # another task's prompt
    assert body["error"]["code"] == -32010
    _, body = wire.answer(a["id"], str(uuid.uuid4()), {"approve": True})
    assert body["error"]["code"] == -32010
    assert wire.answer(a["id"], pa, {"approve": True})[1]["result"]
    _, body = wire.answer(a["id"], pa, {"approve": False})
    assert body["error"]["code"] == -32010
    assert body["error"]["message"] == "hitl_already_answered_or_unknown"
    info = body["error"]["data"][0]
    assert info["reason"] == "HITL_ALREADY_ANSWERED_OR_UNKNOWN"
    assert info["metadata"]["promptId"] == pa and "already answered" in info["metadata"]["detail"]
    assert wire.get_task(b["id"])["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"


def test_rest_statuses_409_and_422(wire: Wire, agent: MockAgent) -> None:
    task = wire.start()
    pid = envelope_of(task)["prompt_id"]

    def send(payload: Any) -> httpx.Response:
        msg = user_message(task_id=task["id"], response={"prompt_id": pid, "payload": payload})
        return wire.http.post(agent.url + "/message:send", json={"message": msg}, headers=headers())

    r = send({"approve": 3})
    assert r.status_code == 422 and r.headers["A2A-Extensions"] == URI
    assert r.reason_phrase == "Unprocessable Entity"  # the spec's words, on every Python
    assert r.headers["Content-Type"] == "application/a2a+json"
    error = r.json()["error"]
    assert (
        error["code"] == 422 and error["details"][1]["validation_errors"][0]["path"] == "/approve"
    )
    assert send({"approve": True}).status_code == 200
    r = send({"approve": True})
    assert r.status_code == 409
    assert r.json()["error"]["details"][0]["reason"] == "HITL_ALREADY_ANSWERED_OR_UNKNOWN"


def test_exactly_one_of_50_racing_answers_is_accepted(agent: MockAgent) -> None:
    wire = Wire(agent.url)
    task = wire.start()
    wire.close()
    pid = envelope_of(task)["prompt_id"]

    async def race() -> list[int]:
        limits = httpx.Limits(max_connections=50)
        async with httpx.AsyncClient(timeout=20, limits=limits) as http:

            async def one(i: int) -> int:
                msg = user_message(
                    task_id=task["id"],
                    response={"prompt_id": pid, "payload": {"approve": i % 2 == 0}},
                )
                body = {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "SendMessage",
                    "params": {"message": msg},
                }
                r = await http.post(agent.url + "/", json=body, headers=headers())
                out = r.json()
                return 0 if "result" in out else int(out["error"]["code"])

            return list(await asyncio.gather(*(one(i) for i in range(50))))

    codes = asyncio.run(race())
    assert codes.count(0) == 1
    assert codes.count(-32010) == 49


# -- the part on its own: a task book and a script, no HTTP --------------------------------


def _approval(faults: Faults) -> tuple[TaskBook, Acceptance, TaskRecord, list[int]]:
    """A started approval task (call on a running loop), and the commits heard."""
    book = TaskBook(MemoryTaskStore())
    book.attach(asyncio.get_running_loop())
    script = Script(book, ScenarioRegistry(), faults, {})
    first = Message(str(uuid.uuid4()), Role.USER, [Part(text="approval")])
    with book.open(first, script.plan(first)) as rec:
        script.begin(rec, first)
    heard: list[int] = []
    book.watch(lambda rec, events: heard.extend(seq for seq, _ in events))
    return book, Acceptance(book, script, faults), rec, heard


def _answer(rec: TaskRecord, payload: Any) -> Message:
    data = [Part(data=payload)]
    return Message(str(uuid.uuid4()), Role.USER, data, task_id=rec.id)


def test_a_refused_answer_changes_nothing() -> None:
    async def run() -> None:
        book, acceptance, rec, heard = _approval(Faults())
        assert rec.prompt is not None
        pid, before = rec.prompt.prompt_id, record_to_json(rec)
        with pytest.raises(ResponseInvalid) as invalid:
            acceptance.answer(rec, _answer(rec, {}), pid, {"approve": "yes"})
        assert [e["path"] for e in invalid.value.validation_errors] == ["/approve"]
        with pytest.raises(PromptConflict):
            acceptance.answer(rec, _answer(rec, {}), str(uuid.uuid4()), {"approve": True})
        assert record_to_json(rec) == before and heard == [] and rec.pending == 0

    asyncio.run(run())


def test_an_accepted_answer_leaves_input_required_at_once() -> None:
    async def run() -> None:
        book, acceptance, rec, heard = _approval(Faults())
        assert rec.prompt is not None
        pid = rec.prompt.prompt_id
        message = _answer(rec, {"approve": True})
        got, start = acceptance.answer(rec, message, pid, {"approve": True})
        assert got is rec and start == 3  # the Task, WORKING, INPUT_REQUIRED before it
        assert rec.task.status.state is TaskState.WORKING and rec.prompt is None
        assert rec.task.history[-1].message_id == message.message_id
        assert heard == [4]  # WORKING stored and told before the next step runs
        await book.settled(rec)
        assert rec.task.status.state is TaskState.COMPLETED
        with pytest.raises(PromptConflict):  # exactly once
            acceptance.answer(rec, message, pid, {"approve": True})

    asyncio.run(run())


def test_slow_resume_holds_the_task_and_blocking_sends_wait() -> None:
    async def run() -> None:
        book, acceptance, rec, _ = _approval(Faults(slow_resume_ms=50))
        assert rec.prompt is not None
        acceptance.answer(rec, _answer(rec, {}), rec.prompt.prompt_id, {"approve": False})
        assert rec.task.status.state is TaskState.INPUT_REQUIRED and rec.prompt is None
        await book.settled(rec)
        assert rec.task.status.state is TaskState.COMPLETED

    asyncio.run(run())


def test_never_resume_keeps_the_task_waiting() -> None:
    async def run() -> None:
        book, acceptance, rec, _ = _approval(Faults(never_resume=True))
        assert rec.prompt is not None
        acceptance.answer(rec, _answer(rec, {}), rec.prompt.prompt_id, {"approve": False})
        await book.settled(rec)
        assert rec.task.status.state is TaskState.INPUT_REQUIRED and rec.pending == 0

    asyncio.run(run())
