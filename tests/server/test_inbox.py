"""The inbox: registered tasks are watched (stream or poll) and their open prompts listed
across tasks and agents, soonest deadline first."""

from __future__ import annotations

from typing import Any

import pytest

from hitl_nb.client import HitlClient, PromptEvent, prompt_of
from hitl_nb.mock_agent import MockAgent
from tests.helpers.tasks import start_task
from tests.helpers.until import until_async

pytestmark = pytest.mark.kernel


async def _register(api: Any, url: str, task_id: str) -> dict[str, Any]:
    status, reg = await api("POST", "hitl/api/tasks", body={"agent_url": url, "task_id": task_id})
    assert status == 201, reg
    return dict(reg)


async def _inbox(api: Any, user: str = "alice", **params: str) -> list[dict[str, Any]]:
    status, body = await api("GET", "hitl/api/prompts", user=user, params=params)
    assert status == 200, body
    assert body["total"] >= len(body["prompts"])
    return list(body["prompts"])


async def _answer_at_agent(url: str, task_id: str, payload: dict[str, Any]) -> None:
    async with HitlClient(url) as client:
        task = await client.get_task(task_id)
        prompt = prompt_of(task)
        assert isinstance(prompt, PromptEvent)
        await client.respond(task_id, prompt.prompt_id, payload)


async def test_a_streaming_agent_is_subscribed_while_it_works(api: Any, gateway: Any) -> None:
    # An agent without push notifications (those that push are not subscribed to).
    with MockAgent(push_notifications=False) as agent:
        await _streaming_agent_is_subscribed(api, gateway, agent)


async def _streaming_agent_is_subscribed(api: Any, gateway: Any, agent: MockAgent) -> None:
    # Polling is slowed to a minute: only the subscription can bring the prompt sooner.
    gateway.watchers.poll_interval = 60.0
    async with HitlClient(agent.url) as client:
        task = await client.send(
            {"scenario": "approval", "start_delay_seconds": 2}, return_immediately=True
        )
    reg = await _register(api, agent.url, task.id)
    assert reg["prompts"] == []  # still working

    async def subscribed() -> bool:
        return reg["id"] in gateway.watchers.streaming

    await until_async(subscribed)
    (listed,) = await until_async(_inbox_of(api, task.id))
    assert listed["prompt"].startswith("Approve")

    # While the prompt is open nothing streams (A2A ends streams at an interruption).
    async def idle() -> bool:
        return not gateway.watchers.streaming

    await until_async(idle)


def _inbox_of(api: Any, task_id: str) -> Any:
    async def listed() -> list[dict[str, Any]]:
        return [p for p in await _inbox(api) if p["task_id"] == task_id]

    return listed


async def test_an_answer_given_at_the_agent_is_noticed_by_polling(
    api: Any, gateway: Any, agent: MockAgent
) -> None:
    gateway.watchers.poll_interval = 0.2
    task = await start_task(agent.url, "multi-step")
    reg = await _register(api, agent.url, task.id)
    (first,) = reg["prompts"]
    # Somebody answers at the agent directly; nobody asks the gateway anything.
    await _answer_at_agent(agent.url, task.id, {"name": "r1"})

    async def second_listed() -> list[dict[str, Any]]:
        return [p for p in await _inbox(api) if p["prompt_id"] != first["prompt_id"]]

    (second,) = await until_async(second_listed)
    assert second["prompt"].startswith("Step 2 of 3") and second["task_id"] == task.id
    assert first["prompt_id"] not in {p["prompt_id"] for p in await _inbox(api)}


async def test_an_answer_through_the_gateway_brings_the_next_prompt_at_once(
    api: Any, gateway: Any, agent: MockAgent
) -> None:
    gateway.watchers.poll_interval = 60.0  # only the gateway's own poke can be quick
    task = await start_task(agent.url, "multi-step")
    reg = await _register(api, agent.url, task.id)
    (first,) = reg["prompts"]
    path = f"hitl/api/tasks/{reg['id']}/prompts/{first['prompt_id']}/answer"
    status, _ = await api("POST", path, body={"payload": {"name": "r1"}})
    assert status == 200

    async def second_listed() -> list[dict[str, Any]]:
        return [p for p in await _inbox(api) if p["prompt_id"] != first["prompt_id"]]

    (second,) = await until_async(second_listed)
    assert second["prompt"].startswith("Step 2 of 3")


async def test_a_finished_task_is_no_longer_watched(
    api: Any, gateway: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "approval")
    reg = await _register(api, agent.url, task.id)
    assert gateway.watchers.watching(reg["id"])
    path = f"hitl/api/tasks/{reg['id']}/prompts/{reg['prompts'][0]['prompt_id']}/answer"
    status, _ = await api("POST", path, body={"payload": {"approve": True}})
    assert status == 200

    async def stopped() -> bool:
        return not gateway.watchers.watching(reg["id"])

    await until_async(stopped)
    assert await _inbox(api) == []


async def test_the_inbox_lists_soonest_deadline_first_and_filters(
    api: Any, agent: MockAgent
) -> None:
    later = await start_task(agent.url, "deadline", deadline_seconds=600)
    sooner = await start_task(agent.url, "deadline", deadline_seconds=300)
    none = await start_task(agent.url, "approval")
    bobs = await start_task(agent.url, "specific", responder="bob")
    for task in (none, later, bobs, sooner):
        await _register(api, agent.url, task.id)
    listed = await _inbox(api)
    assert [p["task_id"] for p in listed] == [sooner.id, later.id, none.id, bobs.id]
    assert listed[0]["seconds_left"] <= 300 and listed[2]["deadline"] is None
    assert [p["task_id"] for p in await _inbox(api, due_within="400")] == [sooner.id]
    mine = [p["task_id"] for p in await _inbox(api, responder="me")]
    assert bobs.id not in mine and len(mine) == 3
    assert [p["task_id"] for p in await _inbox(api, responder="bob")] == [
        sooner.id,
        later.id,
        none.id,
        bobs.id,
    ]
    assert await _inbox(api, agent="http://other.example") == []
    assert len(await _inbox(api, agent=agent.url)) == 4
    status, page = await api("GET", "hitl/api/prompts", params={"limit": "2"})
    assert len(page["prompts"]) == 2 and page["total"] == 4
    for bad in ("due_within=-1", "limit=0", "limit=abc", "due_within=nan", "limit=99999"):
        name, value = bad.split("=")
        status, body = await api("GET", "hitl/api/prompts", params={name: value})
        assert status == 400 and bad.split("=")[0] in body["message"], bad
    status, _ = await api("GET", "hitl/api/prompts", user=None)
    assert status == 403
