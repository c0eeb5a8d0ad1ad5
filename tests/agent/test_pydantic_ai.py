"""A Pydantic AI agent served by hitl_nb.agent.pydantic_ai: each deferred tool call a
prompt (a yes/no with a reason, a Pydantic model's fields, a question), the answer
handed back as Pydantic AI's own DeferredToolResults (a denial with the person's reason,
the fields intact), 409 / 422 before the agent runs, several calls one prompt after
another, a prompt that outlives a crash (kill -9) on SQLite pauses."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai import DeferredToolRequests, ToolApproved, ToolDenied
from pydantic_ai.messages import ToolCallPart

from hitl_nb.a2a import TaskState
from hitl_nb.agent._pauses import Paused
from hitl_nb.agent._prompts import TAG_KEY
from hitl_nb.agent.pydantic_ai import APPROVAL_SCHEMA, MemoryPauses, SqlitePauses
from hitl_nb.agent.pydantic_ai._calls import pending_calls, results_for
from hitl_nb.client import PromptEvent, SyncHitlClient, prompt_of
from tests.helpers.pydantic_agent import Details, PydanticAgent, Settings, pydantic_process
from tests.helpers.tool_bridges import (
    FIELDS,
    answered_after_a_crash,
    answering_nothing_runs_nothing,
    denied_with_a_reason,
    fields_reach_the_tool,
    first_prompt,
    plain_send,
    refused_before_the_agent_runs,
    said,
)


def test_an_approval_is_a_yes_no_prompt_with_the_call_as_text(
    pydantic_agent: PydanticAgent,
) -> None:
    with SyncHitlClient(pydantic_agent.url) as client:
        prompt = first_prompt(client, "deploy")
        assert prompt.response_schema == APPROVAL_SCHEMA
        assert prompt.prompt == (
            'Approve the call to deploy?\n\nTool: deploy\nArguments: {"build": 41, "env": "prod"}'
        )
        message = client.get_task(prompt.task_id).status.message
        assert message is not None and (message.metadata or {})[TAG_KEY] == "call-deploy"
        assert uuid.UUID(prompt.prompt_id)
        client.respond(prompt.task_id, prompt.prompt_id, {"approved": True}, wait=True)
        assert said(client, prompt.task_id) == "deploy: deployed build 41 to prod (success)"
        assert pydantic_agent.seen["deploy"] == {"build": 41, "env": "prod"}


def test_a_denial_reaches_the_model_as_a_denial_with_the_reason() -> None:
    reason = "Not on a Friday — «jamais»"
    with PydanticAgent() as agent, SyncHitlClient(agent.url) as client:
        assert denied_with_a_reason(agent, client, reason) == f"deploy: {reason} (denied)"


def test_structured_fields_reach_the_tool_intact(pydantic_agent: PydanticAgent) -> None:
    schema = Settings.model_json_schema()
    with SyncHitlClient(pydantic_agent.url) as client:
        asked = "Settings for api?\n\nTool: configure\n"
        text = fields_reach_the_tool(pydantic_agent, client, schema, asked)
    assert text == "configure: configured api (success)"


def test_a_question_is_answered_with_its_fields_as_the_call_result(
    pydantic_agent: PydanticAgent,
) -> None:
    with SyncHitlClient(pydantic_agent.url) as client:
        prompt = first_prompt(client, "details")
        assert prompt.response_schema == Details.model_json_schema()
        assert prompt.prompt.startswith("Who owns launch?")
        answer = {"owner": "Zoë", "budget": 12345678901234567890}
        client.respond(prompt.task_id, prompt.prompt_id, answer, wait=True)
        text = said(client, prompt.task_id)
        assert text.startswith("details: ") and json.loads(text[9:-10]) == answer


def test_several_deferred_calls_are_several_prompts(pydantic_agent: PydanticAgent) -> None:
    with SyncHitlClient(pydantic_agent.url) as client:
        first = first_prompt(client, "both")
        questions = {"Approve the call to deploy?": {"approved": True}, "Settings for web?": FIELDS}
        asked = first.prompt.split("\n")[0]
        runs = pydantic_agent.runs["model"]
        client.respond(first.task_id, first.prompt_id, questions.pop(asked), wait=True)
        second = prompt_of(client.get_task(first.task_id))
        assert isinstance(second, PromptEvent) and second.prompt_id != first.prompt_id
        ((other, answer),) = questions.items()
        assert second.prompt.startswith(other)
        assert pydantic_agent.runs["model"] == runs  # not resumed before every call is answered
        client.respond(first.task_id, second.prompt_id, answer, wait=True)
        text = said(client, first.task_id)
        assert text == (
            "deploy: deployed build 7 to staging (success); configure: configured web (success)"
        )


def test_an_invalid_answer_is_422_and_a_second_is_409_before_the_agent_runs() -> None:
    with PydanticAgent() as agent, SyncHitlClient(agent.url) as client:
        refused_before_the_agent_runs(
            agent, client, "configure", [{"replicas": "two"}], FIELDS, FIELDS
        )


def test_a_message_that_answers_nothing_does_not_run_the_agent(
    pydantic_agent: PydanticAgent,
) -> None:
    with SyncHitlClient(pydantic_agent.url) as client:
        answering_nothing_runs_nothing(pydantic_agent, client, "deploy")


def test_a_plain_client_answers_an_approval_with_a_data_part(
    pydantic_agent: PydanticAgent,
) -> None:
    with httpx.Client(timeout=30) as http:

        def send(**message: Any) -> dict[str, Any]:
            return plain_send(http, pydantic_agent.url, **message)

        task = send(parts=[{"text": "deploy"}])
        assert task["status"]["message"]["parts"][0]["text"].startswith("Approve the call")
        assert "hitl-prompt" not in json.dumps(task)
        done = send(
            parts=[{"data": {"approved": False, "reason": "later"}}],
            taskId=task["id"],
            contextId=task["contextId"],
        )
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"


def test_the_answers_in_pydantic_ais_own_types() -> None:
    requests = DeferredToolRequests(
        approvals=[ToolCallPart("deploy", {"build": 1}, tool_call_id="a")],
        metadata={},
    )
    pending = pending_calls(requests)
    denied = results_for(pending, {"a": {"approved": False, "reason": "no"}})
    assert denied.approvals == {"a": ToolDenied("no")}
    blank = results_for(pending, {"a": {"approved": False, "reason": " "}})
    assert blank.approvals["a"] == ToolDenied("The person denied the call.")
    approved = results_for(pending, {"a": {"approved": True, "reason": "fine"}})
    assert approved.approvals == {"a": ToolApproved()}
    assert approved.metadata == {"a": {"approved": True, "reason": "fine"}}


def test_pauses_keep_the_run_as_json(tmp_path: Path) -> None:
    requests = DeferredToolRequests(approvals=[ToolCallPart("t", {"n": 2**70}, tool_call_id="x")])
    paused = Paused("[]", pending_calls(requests), {"y": {"big": 2**70}})

    async def round_trip(store: Any) -> None:
        await store.put("task", paused)
        again = await store.get("task")
        assert again == paused and again.pending[0].args["n"] == 2**70
        await store.delete("task")
        assert await store.get("task") is None

    for store in (MemoryPauses(), SqlitePauses(tmp_path / "p.sqlite")):
        asyncio.run(round_trip(store))


def test_a_prompt_outlives_a_crash_on_sqlite_pauses(tmp_path: Path) -> None:
    """The agent process is killed (SIGKILL) while a prompt is open; a new process on the
    same SQLite task store and pauses takes the answer, and the run resumes with its
    message history: the tool gets the fields."""
    received = answered_after_a_crash(
        pydantic_process,
        tmp_path,
        "configure",
        {"replicas": 1},
        FIELDS,
        "configure: configured api (success)",
    )
    assert received == FIELDS


def test_an_answer_whose_run_was_lost_fails_the_task_saying_what_to_do(tmp_path: Path) -> None:
    """The task store outlives the crash, the in-memory pauses do not: the answer is not
    run as a new input."""
    tasks, seen = tmp_path / "tasks.sqlite", tmp_path / "seen.json"
    with pydantic_process(tasks, None, seen) as url, SyncHitlClient(url) as client:
        prompt = first_prompt(client, "deploy")
    with pydantic_process(tasks, None, seen) as url, SyncHitlClient(url) as client:
        with pytest.raises(Exception, match="SqlitePauses"):
            client.respond(prompt.task_id, prompt.prompt_id, {"approved": True})
        assert client.get_task(prompt.task_id).status.state is TaskState.FAILED
    assert not seen.exists()
