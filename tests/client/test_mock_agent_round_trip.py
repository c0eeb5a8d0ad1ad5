"""HitlClient against the bundled mock agent: both bindings, both versions, every error
path, and a stream cut mid-way (socket closed) then replayed with no gap or duplicate."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from hitl_nb.a2a._model import TaskState
from hitl_nb.client import (
    HitlClient,
    HttpLimits,
    MalformedPromptEvent,
    PromptEvent,
    Reconnect,
    StatusEvent,
    SyncHitlClient,
    TaskEvent,
    prompt_of,
)
from hitl_nb.errors import (
    PromptConflict,
    ResponseInvalid,
    TaskNotFound,
    UnsupportedOperation,
)
from hitl_nb.mock_agent import MockAgent
from hitl_nb.spec import PromptEnvelope
from tests.helpers.proxy import cut_proxy

DIALECTS = [
    pytest.param(("JSONRPC", "1.0"), id="jsonrpc-1.0"),
    pytest.param(("HTTP+JSON", "1.0"), id="rest-1.0"),
    pytest.param(("JSONRPC", "0.3"), id="jsonrpc-0.3"),
]
LAX = {"type": "object"}


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


QUICK = Reconnect(backoff=0.02)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def client_for(url: str, dialect: tuple[str, str], **kw: Any) -> HitlClient:
    binding, version = dialect
    return HitlClient(url, binding=binding, version=version, reconnect=QUICK, **kw)


async def until_prompt(client: HitlClient, scenario: Any = "approval") -> PromptEvent:
    events = [e async for e in client.stream(scenario)]
    assert isinstance(events[-1], PromptEvent), events
    return events[-1]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_round_trip_and_every_rejection(agent: MockAgent, dialect: tuple[str, str]) -> None:
    async def go() -> None:
        async with client_for(agent.url, dialect) as client:
            assert client.selection is not None and client.selection.version == dialect[1]
            prompt = await until_prompt(client)
            assert prompt.envelope.response_schema["required"] == ["approve"]
            # local validation: nothing is sent
            with pytest.raises(ResponseInvalid, match="checked locally") as local:
                await client.respond(prompt.task_id, prompt.prompt_id, {"approve": "yes"})
            assert local.value.validation_errors[0]["path"] == "/approve"
            # the agent's own 422, reached by validating against a laxer schema
            lax = PromptEnvelope(prompt.prompt_id, "x", LAX)
            with pytest.raises(ResponseInvalid) as remote:
                await client.respond(prompt.task_id, prompt.prompt_id, {"nope": 1}, prompt=lax)
            assert "checked locally" not in str(remote.value)
            assert {e["path"] for e in remote.value.validation_errors} >= {"/approve"}
            assert (await client.get_task(prompt.task_id)).status.state is TaskState.INPUT_REQUIRED
            # accepted, then the same prompt again: 409
            done = await client.respond(prompt.task_id, prompt.prompt_id, {"approve": True})
            assert done.status.state is not TaskState.INPUT_REQUIRED
            with pytest.raises(PromptConflict):
                await client.respond(prompt.task_id, prompt.prompt_id, {"approve": True})
            final = [e async for e in client.subscribe(prompt.task_id)]
            assert isinstance(final[-1], (TaskEvent, StatusEvent))
            assert final[-1].state is TaskState.COMPLETED
            with pytest.raises(TaskNotFound):
                await client.get_task("no-such-task")

    run(go())


@pytest.mark.parametrize("dialect", DIALECTS)
def test_send_cancel_and_list(agent: MockAgent, dialect: tuple[str, str]) -> None:
    async def go() -> None:
        async with client_for(agent.url, dialect) as client:
            task = await client.send({"scenario": "multi-step"})
            prompt = prompt_of(task)
            assert isinstance(prompt, PromptEvent) and "Step 1 of 3" in prompt.prompt
            canceled = await client.cancel(task.id)  # type: ignore[union-attr]
            assert canceled.status.state is TaskState.CANCELED
            if dialect[1] == "0.3":
                with pytest.raises(UnsupportedOperation):
                    await client.list_tasks()
            else:
                page = await client.list_tasks(context_id=task.context_id)  # type: ignore[union-attr]
                assert [t.id for t in page.tasks] == [task.id]  # type: ignore[union-attr]

    run(go())


def test_multi_step_stream_subscribe_respond_loop(agent: MockAgent) -> None:
    answers = {"name": "v2", "replicas": 3, "ship": True}

    async def go() -> tuple[list[str], Any]:
        seen: list[str] = []
        async with HitlClient(agent.url, reconnect=QUICK) as client:
            last: Any = await until_prompt(client, {"scenario": "multi-step"})
            while isinstance(last, PromptEvent):
                seen.append(last.prompt)
                [key] = last.response_schema["required"]
                await client.respond(last.task_id, last.prompt_id, {key: answers[key]})
                last = [e async for e in client.subscribe(last.task_id)][-1]
        return seen, last

    seen, last = run(go())
    assert [s[:6] for s in seen] == ["Step 1", "Step 2", "Step 3"]
    assert last.state is TaskState.COMPLETED


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("cut_after", [1, 2])
def test_cut_mid_stream_replays_without_gap_or_duplicate(
    agent: MockAgent, dialect: tuple[str, str], cut_after: int
) -> None:
    def kinds(events: list[Any]) -> list[tuple[str, str]]:
        return [(type(e).__name__, getattr(e, "state", TaskState.UNKNOWN).value) for e in events]

    async def collect(url: str) -> list[Any]:
        no_reuse = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0))
        async with no_reuse, client_for(url, dialect, httpx_client=no_reuse) as client:
            return [e async for e in client.stream({"scenario": "multi-step"})]

    whole = run(collect(agent.url))
    with cut_proxy(agent.url) as proxy:
        proxy.cut_after_events = cut_after
        cut = run(collect(proxy.url))
        assert proxy.cuts == 1
        resumed = [r for r in proxy.requests if b"last-event-id" in r.lower()]
    assert resumed, "the client did not resume with Last-Event-ID"
    assert kinds(cut) == kinds(whole)
    ids = [e.event_id for e in cut if not isinstance(e, PromptEvent)]
    assert len(ids) == len(set(ids))


def test_no_replay_agent_resumes_from_the_snapshot(agent: MockAgent) -> None:
    with MockAgent(faults=["no-replay"]) as broken:

        async def collect(url: str) -> list[Any]:
            no_reuse = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0))
            async with no_reuse, HitlClient(url, httpx_client=no_reuse, reconnect=QUICK) as client:
                return [e async for e in client.stream("approval")]

        with cut_proxy(broken.url) as proxy:
            proxy.cut_after_events = 1
            events = run(collect(proxy.url))
    # The snapshot omits the envelope (the fault): the status is delivered, not twice.
    states = [e.state for e in events if isinstance(e, (TaskEvent, StatusEvent))]
    assert states[0] is TaskState.SUBMITTED and states[-1] is TaskState.INPUT_REQUIRED
    assert len(states) == len(set(states))


def test_oversize_schema_is_a_malformed_prompt_event() -> None:
    with MockAgent(faults=["oversize-schema"]) as broken:

        async def go() -> list[Any]:
            async with HitlClient(broken.url) as client:
                return [e async for e in client.stream("approval")]

        events = run(go())
    assert isinstance(events[-1], MalformedPromptEvent)
    assert "64 KiB" in events[-1].reason


def test_no_echo_is_noted_and_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    with MockAgent(faults=["no-echo"]) as broken:

        async def go() -> bool | None:
            async with HitlClient(broken.url) as client:
                await client.send("approval")
                await client.send("approval")
                return client.activation_echoed

        with caplog.at_level(logging.WARNING, logger="hitl_nb.client"):
            assert run(go()) is False
    assert len([r for r in caplog.records if "did not echo" in r.message]) == 1


def test_422_without_errors_still_typed() -> None:
    with MockAgent(faults=["422-without-errors"]) as broken:

        async def go() -> None:
            async with HitlClient(broken.url) as client:
                prompt = prompt_of(await client.send("approval"))
                assert isinstance(prompt, PromptEvent)
                lax = PromptEnvelope(prompt.prompt_id, "x", LAX)
                with pytest.raises(ResponseInvalid) as info:
                    await client.respond(prompt.task_id, prompt.prompt_id, {}, prompt=lax)
                assert info.value.validation_errors == []

        run(go())


def test_sync_facade(agent: MockAgent) -> None:
    with SyncHitlClient(agent.url, call_timeout=20) as client:
        events = list(client.stream("approval"))
        prompt = events[-1]
        assert isinstance(prompt, PromptEvent)
        result = client.respond(prompt.task_id, prompt.prompt_id, {"approve": False})
        assert result.status.state is not TaskState.INPUT_REQUIRED  # type: ignore[union-attr]
        assert client.get_task(prompt.task_id).id == prompt.task_id
        with pytest.raises(PromptConflict):
            client.respond(prompt.task_id, prompt.prompt_id, {"approve": False})
        first = client.stream("approval")
        assert isinstance(next(first), TaskEvent)
        first.close()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_subscribe_replays_after_a_last_event_id(
    agent: MockAgent, dialect: tuple[str, str]
) -> None:
    async def go() -> tuple[list[Any], list[Any]]:
        async with client_for(agent.url, dialect) as client:
            first = [e async for e in client.stream("approval")]
            replay = [e async for e in client.subscribe(first[0].task_id, last_event_id="1")]
            return first, replay

    first, replay = run(go())
    assert [e.event_id for e in first] == ["1", "2", "3", "3"]
    assert [(type(e), e.event_id) for e in replay] == [
        (StatusEvent, "2"),
        (StatusEvent, "3"),
        (PromptEvent, "3"),
    ]
    assert replay[-1].prompt_id == first[-1].prompt_id


@pytest.mark.parametrize("dialect", DIALECTS[:2])
def test_an_answer_that_landed_late_is_accepted_never_a_conflict(dialect: tuple[str, str]) -> None:
    # The agent takes 2.5 s to resume; the client gives up waiting after 0.5 s, asks,
    # and (before) resent the answer, got 409 and reported a conflict: yet the task's
    # history held our answer and the task went on to COMPLETED.
    with MockAgent(faults=["slow-resume=2500"]) as slow:

        async def go() -> None:
            async with client_for(slow.url, dialect, limits=HttpLimits(timeout=0.5)) as client:
                prompt = prompt_of(await client.send("approval"))
                assert isinstance(prompt, PromptEvent)
                result = await client.respond(
                    prompt.task_id, prompt.prompt_id, {"approve": True}, wait=True
                )
                assert result is not None
                receipt = client.receipt(prompt.prompt_id)
                assert receipt is not None and receipt.recovered and receipt.slow
                assert "extension asks" in receipt.describe()
                task = await client.get_task(prompt.task_id)
                ours = [m for m in task.history if m.metadata and "hitl_response_for" in m.metadata]
                assert len(ours) == 1 and ours[0].context_id == prompt.context_id

        run(go())


def test_a_fast_answer_gets_a_receipt_within_the_budget(agent: MockAgent) -> None:
    async def go() -> None:
        async with client_for(agent.url, ("JSONRPC", "1.0")) as client:
            prompt = await until_prompt(client)
            await client.respond(prompt.task_id, prompt.prompt_id, {"approve": True})
            receipt = client.receipt(prompt.prompt_id)
            assert receipt is not None and not receipt.recovered and not receipt.slow
            assert receipt.resume_seconds is not None
            assert receipt.describe() == "the agent accepted the answer"

    run(go())
