"""The wrapped executor across requests and across a restart of the agent process on
the SDK's SQLite ``DatabaseTaskStore``: the prompt is still there (GetTask, a
resubscription replays it), its answer is checked and accepted, and the executor, run
again from the top, is given back the answers it already had."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from hitl_nb.a2a import TaskState
from hitl_nb.client import PromptEvent, SyncHitlClient, prompt_of
from hitl_nb.errors import PromptConflict, ResponseInvalid
from tests.helpers.ask_agent import AskAgent, ReleaseExecutor
from tests.helpers.mock_agent_client import Collector, envelope_of, headers

pytest.importorskip("aiosqlite")


def _subscribe_first_event(url: str, task_id: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}
    stream = Collector(url, "/", body, headers())
    (first,) = stream.wait_for(1)[:1]
    task: dict[str, Any] = first[1]["result"]["task"]
    return task


def test_a_prompt_outlives_a_restart_on_the_sqlite_store(tmp_path: Path) -> None:
    db = tmp_path / "tasks.sqlite"
    with AskAgent(db=db) as first, SyncHitlClient(first.url) as client:
        prompt = list(client.stream("release"))[-1]
        assert isinstance(prompt, PromptEvent)
    with AskAgent(db=db) as again, SyncHitlClient(again.url) as client:
        task = client.get_task(prompt.task_id)
        assert task.status.state is TaskState.INPUT_REQUIRED
        assert prompt_of(task).prompt_id == prompt.prompt_id  # type: ignore[union-attr]
        # CF-6 after the restart: a resubscription opens with the task, prompt and all.
        replayed = _subscribe_first_event(again.url, prompt.task_id)
        assert envelope_of(replayed)["prompt_id"] == prompt.prompt_id
        assert envelope_of(replayed)["response_schema"]["properties"]["copies"]["maximum"] == 3
        # Checked against the stored schema: 422, nothing reaches the code.
        with pytest.raises(ResponseInvalid):
            client.respond(prompt.task_id, prompt.prompt_id, {"copies": 9}, validate=False)
        assert again.executor.answers == [] and again.executor.runs == 0
        client.respond(prompt.task_id, prompt.prompt_id, {"approved": True, "copies": 3}, wait=True)
        done = client.get_task(prompt.task_id)
        assert done.status.state is TaskState.COMPLETED
        # The body ran again from the top; ask() returned this answer without asking.
        assert again.executor.runs == 1
        assert again.executor.answers == [{"approved": True, "copies": 3}]
        assert type(again.executor.answers[0]["copies"]) is int
        with pytest.raises(PromptConflict):
            client.respond(prompt.task_id, prompt.prompt_id, {"approved": True})


def test_answers_given_before_a_restart_are_given_back(tmp_path: Path) -> None:
    db = tmp_path / "tasks.sqlite"
    with AskAgent(db=db, two_questions=True) as first, SyncHitlClient(first.url) as client:
        prompt = list(client.stream("release"))[-1]
        assert isinstance(prompt, PromptEvent)
        client.respond(prompt.task_id, prompt.prompt_id, {"approved": True, "copies": 2}, wait=True)
        note = prompt_of(client.get_task(prompt.task_id))
        assert isinstance(note, PromptEvent)
    with AskAgent(db=db, two_questions=True) as again, SyncHitlClient(again.url) as client:
        # The first prompt is answered: only the note is open.
        with pytest.raises(PromptConflict):
            client.respond(prompt.task_id, prompt.prompt_id, {"approved": False})
        client.respond(note.task_id, note.prompt_id, {"text": "Faster builds."}, wait=True)
        done = client.get_task(prompt.task_id)
        assert done.status.state is TaskState.COMPLETED
        assert done.status.message is not None
        assert done.status.message.parts[0].text == "approved: Faster builds."
        # The first answer came back from the store (whole numbers as ints again).
        assert again.executor.answers == [
            {"approved": True, "copies": 2},
            {"text": "Faster builds."},
        ]
        assert type(again.executor.answers[0]["copies"]) is int


def test_a_message_after_a_restart_that_answers_nothing_keeps_the_prompt(tmp_path: Path) -> None:
    db = tmp_path / "tasks.sqlite"
    with AskAgent(db=db) as first, SyncHitlClient(first.url) as client:
        prompt = list(client.stream("release"))[-1]
        assert isinstance(prompt, PromptEvent)
    with AskAgent(db=db) as again, SyncHitlClient(again.url) as client:
        events = list(
            client.stream("what is this?", task_id=prompt.task_id, context_id=prompt.context_id)
        )
        # The code before ask() ran again (its "working"), then the same prompt, still open.
        assert [e.prompt_id for e in events if isinstance(e, PromptEvent)] == [prompt.prompt_id]
        assert client.get_task(prompt.task_id).status.state is TaskState.INPUT_REQUIRED
        assert again.executor.answers == []
        client.respond(prompt.task_id, prompt.prompt_id, {"approved": False}, wait=True)
        assert client.get_task(prompt.task_id).status.state is TaskState.COMPLETED
        assert again.executor.answers == [{"approved": False}]


def test_code_that_asks_something_else_after_a_restart_fails_clearly(tmp_path: Path) -> None:
    db = tmp_path / "tasks.sqlite"
    with AskAgent(db=db) as first, SyncHitlClient(first.url) as client:
        prompt = list(client.stream("release"))[-1]
        assert isinstance(prompt, PromptEvent)
    changed = ReleaseExecutor(question="Ship it on Friday?")
    with AskAgent(db=db, executor=changed) as again:
        message = {
            "messageId": "m-1",
            "role": "ROLE_USER",
            "parts": [{"text": "yes"}],
            "taskId": prompt.task_id,
            "contextId": prompt.context_id,
            "metadata": {
                "hitl_response_for": {"prompt_id": prompt.prompt_id, "payload": {"approved": True}}
            },
        }
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
        reply = httpx.post(again.url + "/", json=body, headers=headers(), timeout=30).json()
        assert "asks 'Ship it on Friday?'" in reply["error"]["message"], reply
        assert "same questions in the same order" in reply["error"]["message"]
        assert changed.answers == []
