"""HitlClient, unchanged, against an agent built on the official a2a-sdk server.

The agent (tests/helpers/sdk_agent.py) emits envelopes, rejects bad answers before its
executor runs, and never echoes A2A-Extensions, like every a2a-sdk 1.3.0 agent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from hitl_nb.a2a._model import TaskState
from hitl_nb.client import (
    HitlClient,
    PromptEvent,
    StatusEvent,
    SyncHitlClient,
    TaskEvent,
    prompt_of,
)
from hitl_nb.errors import PromptConflict, ResponseInvalid
from hitl_nb.spec import RESPONSE_KEY, PromptEnvelope
from tests.helpers.sdk_agent import SdkAgent

DIALECTS = [
    pytest.param(("JSONRPC", "1.0"), id="jsonrpc-1.0"),
    pytest.param(("HTTP+JSON", "1.0"), id="rest-1.0"),
    pytest.param(("JSONRPC", "0.3"), id="jsonrpc-0.3"),
]


@pytest.fixture(scope="module")
def agent() -> Iterator[SdkAgent]:
    with SdkAgent() as running:
        yield running


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_prompt_answer_and_rejections(agent: SdkAgent, dialect: tuple[str, str]) -> None:
    binding, version = dialect

    async def go() -> None:
        async with HitlClient(agent.url, binding=binding, version=version) as client:
            events = [e async for e in client.stream("release")]
            assert [type(e) for e in events] == [TaskEvent, StatusEvent, PromptEvent]
            prompt = events[-1]
            assert isinstance(prompt, PromptEvent)
            assert prompt.prompt.endswith("<script>alert(1)</script>")  # data, kept verbatim
            before = agent.prompts.executed_answers
            lax = PromptEnvelope(prompt.prompt_id, "x", {"type": "object"})
            with pytest.raises(ResponseInvalid) as invalid:
                await client.respond(prompt.task_id, prompt.prompt_id, {"approved": 1}, prompt=lax)
            assert invalid.value.validation_errors == [
                {"path": "/approved", "keyword": "type", "message": "expected boolean, got integer"}
            ]
            task = await client.get_task(prompt.task_id)
            assert task.status.state is TaskState.INPUT_REQUIRED
            done = await client.respond(prompt.task_id, prompt.prompt_id, {"approved": True})
            assert done.status.state is not TaskState.INPUT_REQUIRED  # type: ignore[union-attr]
            with pytest.raises(PromptConflict):
                await client.respond(prompt.task_id, prompt.prompt_id, {"approved": True})
            assert agent.prompts.executed_answers == before + 1  # rejections never ran it
            final = [e async for e in client.subscribe(prompt.task_id)]
            assert isinstance(final[-1], (TaskEvent, StatusEvent))
            assert final[-1].state is TaskState.COMPLETED
            assert client.activation_echoed is False

    run(go())


def test_blocking_send_and_no_envelope_without_activation(agent: SdkAgent) -> None:
    async def go() -> None:
        async with HitlClient(agent.url) as client:
            assert isinstance(prompt_of(await client.send("x")), PromptEvent)
        async with HitlClient(agent.url, activate_extension=False) as plain:
            task = await plain.send("x")
            assert task.status.state is TaskState.INPUT_REQUIRED  # type: ignore[union-attr]
            assert prompt_of(task) is None  # §Activation: no envelope unless activated

    run(go())


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_streamed_answer_is_followed_past_the_opening_snapshot(
    agent: SdkAgent, dialect: tuple[str, str]
) -> None:
    # The agent opens every streamed turn with the stored task: still INPUT_REQUIRED,
    # still carrying the prompt being answered. Before, the client took it for a new
    # prompt and stopped there: [TaskEvent(input_required), PromptEvent].
    binding, version = dialect
    with SyncHitlClient(agent.url, binding=binding, version=version, call_timeout=30) as client:
        prompt = list(client.stream("release"))[-1]
        assert isinstance(prompt, PromptEvent)
        answer = {RESPONSE_KEY: {"prompt_id": prompt.prompt_id, "payload": {"approved": True}}}
        events = list(client.stream("yes", task_id=prompt.task_id, metadata=answer))
    shown = [f"{type(e).__name__}({getattr(e, 'state', '')})" for e in events]
    assert shown == ["TaskEvent(TaskState.INPUT_REQUIRED)", "StatusEvent(TaskState.COMPLETED)"]
    assert not any(isinstance(e, PromptEvent) for e in events)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_answer_carries_the_tasks_context(agent: SdkAgent, dialect: tuple[str, str]) -> None:
    # Before, only an answer that needed a GetTask carried contextId; an SDK agent then
    # filed the reply under a new context.
    binding, version = dialect

    async def go() -> None:
        async with HitlClient(agent.url, binding=binding, version=version) as client:
            events = [e async for e in client.stream("release")]
            prompt = events[-1]
            assert isinstance(prompt, PromptEvent)
            await client.respond(prompt.task_id, prompt.prompt_id, {"approved": True})
            assert agent.prompts.answers_seen[-1] == (prompt.task_id, prompt.context_id)
        async with HitlClient(agent.url, binding=binding, version=version) as first:
            task = await first.send("release")
            found = prompt_of(task)
            assert isinstance(found, PromptEvent)
        async with HitlClient(agent.url, binding=binding, version=version) as other:
            # A client that never saw the task, given the envelope: it asks for the context.
            await other.respond(
                found.task_id, found.prompt_id, {"approved": True}, prompt=found.envelope
            )
            assert agent.prompts.answers_seen[-1] == (found.task_id, found.context_id)

    run(go())
