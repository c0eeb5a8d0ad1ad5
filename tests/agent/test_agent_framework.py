"""A Microsoft Agent Framework agent served by hitl_nb.agent.agent_framework: each
approval request a prompt (a yes/no with a reason, a schema's fields), the answer handed
back as the framework's own ``function_approval_response`` (a rejection as a rejection:
the tool does not run; the fields intact in the tool), a tool without approval running at
once, 409 / 422 before the agent runs, several requests one prompt after another, a
prompt that outlives a crash (kill -9) on SQLite pauses."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from hitl_nb.a2a import TaskState
from hitl_nb.agent._prompts import TAG_KEY
from hitl_nb.agent.agent_framework import APPROVAL_SCHEMA
from hitl_nb.agent.agent_framework._calls import pending_calls
from hitl_nb.client import PromptEvent, SyncHitlClient, prompt_of
from tests.helpers.maf_agent import MafAgent, Settings, maf_process
from tests.helpers.tool_bridges import (
    FIELDS,
    answered_after_a_crash,
    answering_nothing_runs_nothing,
    denied_with_a_reason,
    fields_reach_the_tool,
    first_prompt,
    refused_before_the_agent_runs,
    said,
)

#: What the framework tells the model of a rejected call (it has no place for a reason).
REJECTED = "Error: Tool call invocation was rejected by user."


def test_an_approval_is_a_yes_no_prompt_with_the_call_as_text(maf_agent: MafAgent) -> None:
    with SyncHitlClient(maf_agent.url) as client:
        prompt = first_prompt(client, "deploy")
        assert prompt.response_schema == APPROVAL_SCHEMA
        assert prompt.prompt == (
            'Approve the call to deploy?\n\nTool: deploy\nArguments: {"build": 41, "env": "prod"}'
        )
        message = client.get_task(prompt.task_id).status.message
        assert message is not None and (message.metadata or {})[TAG_KEY] == "call-deploy"
        assert uuid.UUID(prompt.prompt_id)
        client.respond(prompt.task_id, prompt.prompt_id, {"approved": True}, wait=True)
        assert said(client, prompt.task_id) == "deploy: deployed build 41 to prod"
        assert maf_agent.seen["deploy"] == {"build": 41, "env": "prod"}


def test_a_rejection_reaches_the_framework_as_a_rejection(maf_agent: MafAgent) -> None:
    with SyncHitlClient(maf_agent.url) as client:
        text = denied_with_a_reason(maf_agent, client, "Not on a Friday — «jamais» 🚫")
    assert text == f"deploy: {REJECTED}"


def test_a_schemas_fields_reach_the_tool_intact(maf_agent: MafAgent) -> None:
    schema = Settings.model_json_schema()
    with SyncHitlClient(maf_agent.url) as client:
        asked = "Approve the call to configure?\n\nTool: configure\n"
        text = fields_reach_the_tool(maf_agent, client, schema, asked)
    assert text == "configure: configured api"


def test_a_tool_without_approval_runs_without_a_prompt(maf_agent: MafAgent) -> None:
    with SyncHitlClient(maf_agent.url) as client:
        events = list(client.stream("status"))
        assert not [e for e in events if isinstance(e, PromptEvent)]
        assert maf_agent.seen["status"] == "api"


def test_several_requests_are_several_prompts(maf_agent: MafAgent) -> None:
    with SyncHitlClient(maf_agent.url) as client:
        first = first_prompt(client, "both")
        assert first.prompt.startswith("Approve the call to deploy?")
        runs = maf_agent.runs["model"]
        client.respond(first.task_id, first.prompt_id, {"approved": False}, wait=True)
        second = prompt_of(client.get_task(first.task_id))
        assert isinstance(second, PromptEvent) and second.prompt_id != first.prompt_id
        assert second.prompt.startswith("Approve the call to configure?")
        assert maf_agent.runs["model"] == runs  # not resumed before every call is answered
        client.respond(first.task_id, second.prompt_id, FIELDS, wait=True)
        text = said(client, first.task_id)
        assert text == f"deploy: {REJECTED}; configure: configured web"
        assert maf_agent.seen["configure"] == FIELDS


def test_an_invalid_answer_is_422_and_a_second_is_409_before_the_agent_runs() -> None:
    with MafAgent() as agent, SyncHitlClient(agent.url) as client:
        refused_before_the_agent_runs(
            agent, client, "configure", [{"replicas": "two"}], FIELDS, FIELDS
        )


def test_a_message_that_answers_nothing_does_not_run_the_agent(maf_agent: MafAgent) -> None:
    with SyncHitlClient(maf_agent.url) as client:
        answering_nothing_runs_nothing(maf_agent, client, "deploy")


def test_the_call_is_shown_as_the_model_wrote_it() -> None:
    """Arguments as text, whole numbers of any size exact, unicode as such; a tool named
    in ``schemas`` asks for its fields; without the model's call id, the request's own."""
    call = SimpleNamespace(
        call_id="c1",
        name="deploy",
        arguments=json.dumps({"build": 2**70 + 1, "env": "zürich 東京"}),
    )
    request = SimpleNamespace(id="af-call-1", function_call=call)
    (pending,) = pending_calls([request], {})
    assert pending.tool_call_id == "c1"
    assert pending.args["build"] == 2**70 + 1 and pending.schema == APPROVAL_SCHEMA
    shown = 'Arguments: {"build": 1180591620717411303425, "env": "zürich 東京"}'
    assert pending.text.endswith(shown)
    (asked,) = pending_calls([request], {"deploy": Settings})
    assert asked.schema == Settings.model_json_schema()
    bare = SimpleNamespace(
        id="af-call-2", function_call=SimpleNamespace(call_id=None, name="t", arguments="oops")
    )
    (odd,) = pending_calls([bare], {})
    assert odd.tool_call_id == "af-call-2" and odd.args == {"arguments": "oops"}


@pytest.mark.slow
def test_a_prompt_outlives_a_crash_on_sqlite_pauses(tmp_path: Path) -> None:
    """The agent process is killed (SIGKILL) while a prompt is open; a new process on the
    same SQLite task store and pauses takes the answer, and the run resumes in its
    session read back (the approval request the framework recorded matches): the tool
    gets the fields."""
    received = answered_after_a_crash(
        maf_process, tmp_path, "configure", {"replicas": 1}, FIELDS, "configure: configured api"
    )
    assert received == FIELDS


def test_an_answer_whose_run_was_lost_fails_the_task_saying_what_to_do(tmp_path: Path) -> None:
    """The agent restarts on the same database task store, its pauses in memory: the
    prompt is still open, but no run waits on it; the answer is not run as a new input."""
    from a2a.server.tasks import DatabaseTaskStore
    from sqlalchemy.ext.asyncio import create_async_engine

    def store() -> DatabaseTaskStore:
        return DatabaseTaskStore(create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 't'}"))

    with MafAgent(task_store=store()) as agent, SyncHitlClient(agent.url) as client:
        prompt = first_prompt(client, "deploy")
    with MafAgent(task_store=store()) as agent, SyncHitlClient(agent.url) as client:
        with pytest.raises(Exception, match="SqlitePauses"):
            client.respond(prompt.task_id, prompt.prompt_id, {"approved": True})
        assert client.get_task(prompt.task_id).status.state is TaskState.FAILED
        assert "deploy" not in agent.seen
