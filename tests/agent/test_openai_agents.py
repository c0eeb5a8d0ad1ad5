"""An OpenAI Agents SDK agent served by hitl_nb.agent.openai_agents: each interruption a
prompt (a yes/no with a reason, a schema's fields), the answer handed back as the SDK's
own ``state.approve`` / ``state.reject(rejection_message=...)`` (a rejection with the
person's reason, the fields intact), a ``needs_approval`` callable asking only when it
says so, 409 / 422 before the agent runs, several interruptions one prompt after
another, a prompt that outlives a crash (kill -9) on SQLite pauses."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hitl_nb.a2a import TaskState
from hitl_nb.agent._pauses import Paused
from hitl_nb.agent._prompts import TAG_KEY
from hitl_nb.agent.openai_agents import APPROVAL_SCHEMA, MemoryPauses, SqlitePauses
from hitl_nb.agent.openai_agents._calls import pending_calls
from hitl_nb.client import PromptEvent, SyncHitlClient, prompt_of
from tests.helpers.openai_agent import OpenAIAgent, Settings, openai_process
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


def test_an_approval_is_a_yes_no_prompt_with_the_call_as_text(openai_agent: OpenAIAgent) -> None:
    with SyncHitlClient(openai_agent.url) as client:
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
        assert openai_agent.seen["deploy"] == {"build": 41, "env": "prod"}


def test_a_rejection_reaches_the_model_as_a_rejection_with_the_reason(
    openai_agent: OpenAIAgent,
) -> None:
    reason = "Not on a Friday — «jamais» 🚫"
    with SyncHitlClient(openai_agent.url) as client:
        assert denied_with_a_reason(openai_agent, client, reason) == f"deploy: {reason}"


def test_a_schemas_fields_reach_the_tool_intact(openai_agent: OpenAIAgent) -> None:
    schema = Settings.model_json_schema()
    with SyncHitlClient(openai_agent.url) as client:
        asked = "Approve the call to configure?\n\nTool: configure\n"
        text = fields_reach_the_tool(openai_agent, client, schema, asked)
    assert text == "configure: configured api"


def test_a_needs_approval_callable_asks_only_when_it_says_so(openai_agent: OpenAIAgent) -> None:
    with SyncHitlClient(openai_agent.url) as client:
        events = list(client.stream("scale 3"))
        assert not [e for e in events if isinstance(e, PromptEvent)]
        assert openai_agent.seen["scale"] == 3
        prompt = first_prompt(client, "scale 50")
        assert prompt.prompt.endswith('Arguments: {"replicas": 50}')
        client.respond(prompt.task_id, prompt.prompt_id, {"approved": True}, wait=True)
        assert said(client, prompt.task_id) == "scale: scaled to 50"


def test_several_interruptions_are_several_prompts(openai_agent: OpenAIAgent) -> None:
    with SyncHitlClient(openai_agent.url) as client:
        first = first_prompt(client, "both")
        assert first.prompt.startswith("Approve the call to deploy?")
        runs = openai_agent.runs["model"]
        client.respond(first.task_id, first.prompt_id, {"approved": True}, wait=True)
        second = prompt_of(client.get_task(first.task_id))
        assert isinstance(second, PromptEvent) and second.prompt_id != first.prompt_id
        assert second.prompt.startswith("Approve the call to configure?")
        assert openai_agent.runs["model"] == runs  # not resumed before every call is answered
        client.respond(first.task_id, second.prompt_id, FIELDS, wait=True)
        text = said(client, first.task_id)
        assert text == "deploy: deployed build 7 to staging; configure: configured web"


def test_an_invalid_answer_is_422_and_a_second_is_409_before_the_agent_runs() -> None:
    with OpenAIAgent() as agent, SyncHitlClient(agent.url) as client:
        refused_before_the_agent_runs(
            agent, client, "configure", [{"replicas": "two"}], FIELDS, FIELDS
        )


def test_a_message_that_answers_nothing_does_not_run_the_agent(openai_agent: OpenAIAgent) -> None:
    with SyncHitlClient(openai_agent.url) as client:
        answering_nothing_runs_nothing(openai_agent, client, "deploy")


def test_the_call_is_shown_as_the_model_wrote_it() -> None:
    """Arguments as text, whole numbers of any size exact, unicode as such; a tool named
    in ``schemas`` asks for its fields."""
    item = SimpleNamespace(
        call_id="c1",
        name="deploy",
        qualified_name="deploy",
        arguments=json.dumps({"build": 2**70 + 1, "env": "zürich 東京"}),
    )
    (pending,) = pending_calls([item], {})
    assert pending.args["build"] == 2**70 + 1 and pending.schema == APPROVAL_SCHEMA
    shown = 'Arguments: {"build": 1180591620717411303425, "env": "zürich 東京"}'
    assert pending.text.endswith(shown)
    (asked,) = pending_calls([item], {"deploy": Settings})
    assert asked.schema == Settings.model_json_schema()


def test_pauses_keep_the_run_state_as_text(tmp_path: Path) -> None:
    item = SimpleNamespace(call_id="x", name="t", qualified_name="t", arguments='{"n": 2}')
    paused = Paused('{"state": "東京"}', pending_calls([item], {}), {"y": {"big": 2**70}})

    async def round_trip(store: Any) -> None:
        await store.put("task", paused)
        again = await store.get("task")
        assert again == paused and again.answers["y"]["big"] == 2**70
        await store.delete("task")
        assert await store.get("task") is None

    for store in (MemoryPauses(), SqlitePauses(tmp_path / "p.sqlite")):
        asyncio.run(round_trip(store))


@pytest.mark.slow
def test_a_prompt_outlives_a_crash_on_sqlite_pauses(tmp_path: Path) -> None:
    """The agent process is killed (SIGKILL) while a prompt is open; a new process on the
    same SQLite task store and pauses takes the answer, and the run resumes from its
    RunState: the tool gets the fields."""
    received = answered_after_a_crash(
        openai_process, tmp_path, "configure", {"replicas": 1}, FIELDS, "configure: configured api"
    )
    assert received == FIELDS


def test_an_answer_whose_run_was_lost_fails_the_task_saying_what_to_do(tmp_path: Path) -> None:
    """The agent restarts on the same database task store, its pauses in memory: the
    prompt is still open, but no run waits on it; the answer is not run as a new input."""
    from a2a.server.tasks import DatabaseTaskStore
    from sqlalchemy.ext.asyncio import create_async_engine

    def store() -> DatabaseTaskStore:
        return DatabaseTaskStore(create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 't'}"))

    with OpenAIAgent(task_store=store()) as agent, SyncHitlClient(agent.url) as client:
        prompt = first_prompt(client, "deploy")
    with OpenAIAgent(task_store=store()) as agent, SyncHitlClient(agent.url) as client:
        with pytest.raises(Exception, match="SqlitePauses"):
            client.respond(prompt.task_id, prompt.prompt_id, {"approved": True})
        assert client.get_task(prompt.task_id).status.state is TaskState.FAILED
        assert "deploy" not in agent.seen
