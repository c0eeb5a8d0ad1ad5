"""What the tests of the tool-call bridges (Pydantic AI, OpenAI Agents, ADK, the Agent
Framework) share on the client's side: the fields a tool must receive exactly, a new
task's first prompt, what a completed task said, a message from a client that did not
activate the extension, and the checks every bridge passes the same way (a denial with a
reason; a schema's fields reaching the tool; answers refused before the agent runs; a
message that answers nothing; a prompt answered after the agent's process was killed)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

import httpx
import pytest

from hitl_nb.a2a import TaskState
from hitl_nb.client import PromptEvent, SyncHitlClient, prompt_of
from hitl_nb.errors import PromptConflict, ResponseInvalid
from tests.helpers.mock_agent_client import headers

#: What the tool must receive exactly: unicode, nested arrays, an integer past 2**64.
FIELDS = {"replicas": 2**70 + 1, "regions": [["eu-west", "zürich"], [], ["東京"]], "label": "🚀 ok"}


def first_prompt(client: SyncHitlClient, text: str) -> PromptEvent:
    """The prompt a new task on ``text`` stops on."""
    prompt = list(client.stream(text))[-1]
    assert isinstance(prompt, PromptEvent)
    return prompt


def said(client: SyncHitlClient, task_id: str) -> str:
    """The text a completed task ended with."""
    task = client.get_task(task_id)
    assert task.status.state is TaskState.COMPLETED
    assert task.status.message is not None
    return str(task.status.message.parts[0].text)


def plain_send(http: httpx.Client, url: str, **message: Any) -> dict[str, Any]:
    """``SendMessage`` on JSON-RPC from a client that did not activate the extension (a
    plain A2A client): the task the agent answers with."""
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", **message}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    reply = http.post(url + "/", json=body, headers=headers(activated=False))
    task: dict[str, Any] = reply.json()["result"]["task"]
    return task


class Bridged(Protocol):
    """A test agent of a bridge: how often its model ran, what its tools received."""

    runs: dict[str, int]
    seen: dict[str, Any]


def denied_with_a_reason(agent: Bridged, client: SyncHitlClient, reason: str) -> str:
    """A "no" with ``reason`` to the ``deploy`` call: the tool does not run; what the
    task ended saying (each framework words the denial its own way)."""
    agent.seen.pop("deploy", None)
    prompt = first_prompt(client, "deploy")
    client.respond(
        prompt.task_id, prompt.prompt_id, {"approved": False, "reason": reason}, wait=True
    )
    text = said(client, prompt.task_id)
    assert "deploy" not in agent.seen  # the tool did not run
    return text


def fields_reach_the_tool(
    agent: Bridged, client: SyncHitlClient, schema: dict[str, Any], asked: str
) -> str:
    """The ``configure`` call asks for ``schema``'s fields, its question beginning with
    ``asked``; :data:`FIELDS` reach the tool exactly (the integer past 2**64 still an
    int). What the task ended saying."""
    prompt = first_prompt(client, "configure")
    assert prompt.response_schema == schema
    assert prompt.prompt.startswith(asked)
    client.respond(prompt.task_id, prompt.prompt_id, FIELDS, wait=True)
    text = said(client, prompt.task_id)
    got = agent.seen["configure"]
    assert got == FIELDS and type(got["replicas"]) is int
    return text


def refused_before_the_agent_runs(
    agent: Bridged,
    client: SyncHitlClient,
    tool: str,
    wrong: Sequence[dict[str, Any]],
    right: dict[str, Any],
    again: dict[str, Any],
) -> None:
    """Each of ``wrong`` is a 422 with its validation errors, and after ``right`` another
    answer (``again``) is a 409: none of them runs the agent's model or reaches ``tool``."""
    prompt = first_prompt(client, tool)
    runs = agent.runs["model"]
    for answer in wrong:
        with pytest.raises(ResponseInvalid) as refused:
            client.respond(prompt.task_id, prompt.prompt_id, answer, validate=False)
        assert refused.value.validation_errors
    assert agent.runs["model"] == runs and tool not in agent.seen
    assert client.get_task(prompt.task_id).status.state is TaskState.INPUT_REQUIRED
    client.respond(prompt.task_id, prompt.prompt_id, right, wait=True)  # the run ended
    runs = agent.runs["model"]
    with pytest.raises(PromptConflict):
        client.respond(prompt.task_id, prompt.prompt_id, again)
    assert agent.runs["model"] == runs


def answering_nothing_runs_nothing(agent: Bridged, client: SyncHitlClient, tool: str) -> None:
    """A message on a waiting task that answers none of its prompts is told the prompt
    again, and the agent's model does not run."""
    prompt = first_prompt(client, tool)
    runs = agent.runs["model"]
    events = list(client.stream("hello?", task_id=prompt.task_id))
    assert [e.prompt_id for e in events if isinstance(e, PromptEvent)] == [prompt.prompt_id]
    assert agent.runs["model"] == runs
    assert client.get_task(prompt.task_id).status.state is TaskState.INPUT_REQUIRED


#: A bridge's agent served by another process on SQLite files: the task store, where the
#: paused run is kept (pauses, or ADK's sessions), and what the tools received.
Process = Callable[[Path, Path, Path], AbstractContextManager[str]]


def answered_after_a_crash(
    process: Process,
    folder: Path,
    tool: str,
    wrong: dict[str, Any],
    right: dict[str, Any],
    result: str,
) -> Any:
    """The agent's process is killed (SIGKILL) while ``tool``'s prompt is open; a new
    process on the same files still shows the prompt, refuses ``wrong`` against the
    stored schema (422), takes ``right`` and completes saying ``result``. Returns what
    ``tool`` received."""
    tasks, pauses, seen = folder / "tasks.sqlite", folder / "pauses.sqlite", folder / "s"
    with process(tasks, pauses, seen) as url, SyncHitlClient(url) as client:
        prompt = first_prompt(client, tool)
    with process(tasks, pauses, seen) as url, SyncHitlClient(url) as client:
        waiting = prompt_of(client.get_task(prompt.task_id))
        assert isinstance(waiting, PromptEvent) and waiting.prompt_id == prompt.prompt_id
        with pytest.raises(ResponseInvalid):  # checked against the stored schema
            client.respond(prompt.task_id, prompt.prompt_id, wrong, validate=False)
        client.respond(prompt.task_id, prompt.prompt_id, right, wait=True)
        assert said(client, prompt.task_id) == result
    return json.loads(seen.read_text(encoding="utf-8"))[tool]
