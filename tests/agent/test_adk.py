"""An ADK agent served by hitl_nb.agent.adk: each tool confirmation a prompt (a yes/no, a
payload's fields), the answer handed back as ADK's own ToolConfirmation (a rejection as
a rejection, the payload intact), 409 / 422 before the agent runs, two confirmations one
prompt after another, a prompt that outlives a crash (kill -9) on ADK's SQLite session
service."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from hitl_nb.a2a import TaskState
from hitl_nb.agent._prompts import TAG_KEY
from hitl_nb.agent.adk import CONFIRM_SCHEMA, shape_schema
from hitl_nb.agent.adk._confirmations import Pending, response_for, schema_for
from hitl_nb.client import PromptEvent, SyncHitlClient, prompt_of
from hitl_nb.validation import validate_payload
from tests.helpers.adk_agent import OFFERED, AdkAgent, adk_process
from tests.helpers.tool_bridges import (
    FIELDS,
    answered_after_a_crash,
    answering_nothing_runs_nothing,
    first_prompt,
    plain_send,
    refused_before_the_agent_runs,
    said,
)

REJECTED = 'deploy: {"error": "This tool call is rejected."}'


def test_a_confirmation_is_a_yes_no_prompt_with_the_call_as_text(adk_agent: AdkAgent) -> None:
    with SyncHitlClient(adk_agent.url) as client:
        prompt = first_prompt(client, "deploy")
        assert prompt.response_schema == CONFIRM_SCHEMA
        assert prompt.prompt == (
            'Confirm the call to deploy?\n\nTool: deploy\nArguments: {"build": 41, "env": "prod"}'
        )
        message = client.get_task(prompt.task_id).status.message
        assert message is not None and (message.metadata or {})[TAG_KEY].startswith("adk-")
        assert uuid.UUID(prompt.prompt_id)
        client.respond(prompt.task_id, prompt.prompt_id, {"confirmed": True}, wait=True)
        assert said(client, prompt.task_id) == 'deploy: {"result": "deployed build 41 to prod"}'
        assert adk_agent.seen["deploy"] == {"build": 41, "env": "prod"}


def test_a_rejection_reaches_adk_as_a_rejection() -> None:
    with AdkAgent() as agent, SyncHitlClient(agent.url) as client:
        prompt = first_prompt(client, "deploy")
        client.respond(prompt.task_id, prompt.prompt_id, {"confirmed": False}, wait=True)
        assert said(client, prompt.task_id) == REJECTED
        assert "deploy" not in agent.seen  # ADK did not run the tool


def test_a_payload_reaches_the_tool_intact(adk_agent: AdkAgent) -> None:
    with SyncHitlClient(adk_agent.url) as client:
        prompt = first_prompt(client, "configure")
        payload = prompt.response_schema["properties"]["payload"]
        assert payload["default"] == OFFERED
        assert payload["properties"]["regions"] == {
            "type": "array",
            "items": {"type": "array", "items": {"type": "string"}},
        }
        assert prompt.prompt.startswith("Settings for api?\n\nTool: configure\n")
        answer = {"confirmed": True, "payload": FIELDS}
        client.respond(prompt.task_id, prompt.prompt_id, answer, wait=True)
        assert said(client, prompt.task_id) == 'configure: {"configured": "api"}'
        got = adk_agent.seen["configure"]
        assert got == answer and type(got["payload"]["replicas"]) is int


def test_a_rejected_payload_reaches_the_tool_as_a_rejection(adk_agent: AdkAgent) -> None:
    with SyncHitlClient(adk_agent.url) as client:
        prompt = first_prompt(client, "configure")
        client.respond(prompt.task_id, prompt.prompt_id, {"confirmed": False}, wait=True)
        assert said(client, prompt.task_id) == 'configure: {"configured": null}'
        assert adk_agent.seen["configure"] == {"confirmed": False, "payload": None}


def test_two_confirmations_are_two_prompts(adk_agent: AdkAgent) -> None:
    with SyncHitlClient(adk_agent.url) as client:
        first = first_prompt(client, "both")
        assert first.prompt.startswith("Confirm the call to deploy?")
        runs = adk_agent.runs["model"]
        client.respond(first.task_id, first.prompt_id, {"confirmed": True}, wait=True)
        second = prompt_of(client.get_task(first.task_id))
        assert isinstance(second, PromptEvent) and second.prompt_id != first.prompt_id
        assert second.prompt.startswith("Settings for web?")
        assert adk_agent.runs["model"] == runs  # not resumed before both are answered
        answer = {"confirmed": True, "payload": FIELDS}
        client.respond(first.task_id, second.prompt_id, answer, wait=True)
        assert said(client, first.task_id) == (
            'deploy: {"result": "deployed build 7 to staging"}; configure: {"configured": "web"}'
        )
        assert adk_agent.seen["configure"] == answer


def test_an_invalid_answer_is_422_and_a_second_is_409_before_the_agent_runs() -> None:
    with AdkAgent() as agent, SyncHitlClient(agent.url) as client:
        refused_before_the_agent_runs(
            agent,
            client,
            "configure",
            [{"confirmed": True}, {"confirmed": True, "payload": {"replicas": "two"}}],
            {"confirmed": True, "payload": FIELDS},
            {"confirmed": False},
        )


def test_a_message_that_answers_nothing_does_not_run_the_agent(adk_agent: AdkAgent) -> None:
    with SyncHitlClient(adk_agent.url) as client:
        answering_nothing_runs_nothing(adk_agent, client, "deploy")


def test_a_plain_client_answers_with_a_data_part(adk_agent: AdkAgent) -> None:
    with httpx.Client(timeout=30) as http:

        def send(**message: Any) -> dict[str, Any]:
            return plain_send(http, adk_agent.url, **message)

        task = send(parts=[{"text": "deploy"}])
        assert task["status"]["message"]["parts"][0]["text"].startswith("Confirm the call")
        assert "hitl-prompt" not in json.dumps(task)
        done = send(
            parts=[{"data": {"confirmed": False}}], taskId=task["id"], contextId=task["contextId"]
        )
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"


class Details(BaseModel):
    """A model within the payload's (its schema a ``$defs`` entry)."""

    text: str


class Limits(BaseModel):
    """A payload's model, given by tool name."""

    replicas: int
    note: Details | None = None


def test_payload_schemas_from_a_model_or_the_shape() -> None:
    pending = Pending("c", "scale", {"n": 1}, "Scale?", {"replicas": 3, "note": None})
    schema = schema_for(pending, {"scale": Limits})
    assert "$defs" in schema and "$defs" not in schema["properties"]["payload"]
    ok = {"confirmed": True, "payload": {"replicas": 4, "note": {"text": "ünï"}}}
    assert validate_payload(schema, ok) == []
    assert validate_payload(schema, {"confirmed": True, "payload": {"note": None}})
    shaped = schema_for(pending, {})
    assert shaped["properties"]["payload"]["default"] == {"replicas": 3, "note": None}
    assert (
        validate_payload(shaped, {"confirmed": True, "payload": {"replicas": 1, "note": None}})
        == []
    )
    assert validate_payload(shaped, {"confirmed": True, "payload": {"replicas": 1}})
    assert validate_payload(shaped, {"confirmed": False}) == []
    assert validate_payload(shaped, {"confirmed": True})  # a confirmation needs the payload
    assert shape_schema([1, "a", 2]) == {
        "type": "array",
        "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    }
    assert schema_for(Pending("c", "t", {}, "", None), {}) == CONFIRM_SCHEMA


def test_the_answers_in_adks_own_types() -> None:
    pending = [Pending("a", "t", {}, "", None), Pending("b", "u", {}, "", {"n": 1})]
    made = response_for(
        pending, {"a": {"confirmed": False}, "b": {"confirmed": True, "payload": {"n": 2**70}}}
    )
    responses = [p.function_response for p in made.parts or []]
    assert made.role == "user"
    assert [(r.id, r.name, r.response) for r in responses if r is not None] == [
        ("a", "adk_request_confirmation", {"hint": "", "confirmed": False}),
        ("b", "adk_request_confirmation", {"hint": "", "confirmed": True, "payload": {"n": 2**70}}),
    ]


def test_a_prompt_outlives_a_crash_on_adks_sqlite_sessions(tmp_path: Path) -> None:
    """The agent process is killed (SIGKILL) while a prompt is open; a new process on the
    same SQLite task store and ADK session service takes the answer, and the run resumes
    from the session: the tool gets the payload."""
    answer = {"confirmed": True, "payload": FIELDS}
    received = answered_after_a_crash(
        adk_process,
        tmp_path,
        "configure",
        {"confirmed": True},
        answer,
        'configure: {"configured": "api"}',
    )
    assert received == answer


def test_an_answer_whose_session_was_lost_fails_the_task_saying_what_to_do(
    tmp_path: Path,
) -> None:
    """The task store outlives a restart, the in-memory sessions do not: the answer is
    not run as a new input."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'tasks.sqlite'}"
    with AdkAgent(task_store=url) as agent, SyncHitlClient(agent.url) as client:
        prompt = first_prompt(client, "deploy")
    with AdkAgent(task_store=url) as agent, SyncHitlClient(agent.url) as client:
        with pytest.raises(Exception, match="DatabaseSessionService"):
            client.respond(prompt.task_id, prompt.prompt_id, {"confirmed": True})
        assert client.get_task(prompt.task_id).status.state is TaskState.FAILED
        assert agent.runs["model"] == 0 and not agent.seen
