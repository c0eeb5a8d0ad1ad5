"""The responder gateway in a real Jupyter server, with alice, bob and carol (S-3, S-4)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.until import until_async

pytestmark = pytest.mark.kernel

YES = {"approve": True}
NO = {"approve": False}


async def register(api: Any, agent_url: str, task_id: str, user: str = "alice") -> dict[str, Any]:
    status, reg = await api(
        "POST", "hitl/api/tasks", user=user, body={"agent_url": agent_url, "task_id": task_id}
    )
    assert status in (200, 201), reg
    return dict(reg)


def answer_path(reg: dict[str, Any]) -> str:
    (prompt,) = [p for p in reg["prompts"] if p["state"] == "open"]
    return f"hitl/api/tasks/{reg['id']}/prompts/{prompt['prompt_id']}/answer"


async def test_register_lists_the_open_prompt_with_policy_and_deadline(
    api: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "deadline", deadline_seconds=600)
    status, reg = await api(
        "POST", "hitl/api/tasks", body={"agent_url": agent.url, "task_id": task.id}
    )
    assert status == 201
    (prompt,) = reg["prompts"]
    assert prompt["state"] == "open" and prompt["may_answer"] is True
    assert prompt["deadline"] and 0 < prompt["seconds_left"] <= 600
    assert prompt["allowed_responders"] == ["any"]
    assert prompt["policy"] == {"specific": [], "needed": 1}
    assert prompt["response_schema"]["type"] == "object"
    assert reg["registered_by"] == "Alice"
    # Registering the same task again is the same registration (200, not 201).
    again, same = await api(
        "POST", "hitl/api/tasks", user="bob", body={"agent_url": agent.url, "task_id": task.id}
    )
    assert again == 200 and same["id"] == reg["id"]
    status, listed = await api("GET", "hitl/api/tasks", user="carol")
    assert status == 200 and [t["id"] for t in listed["tasks"]] == [reg["id"]]
    status, me = await api("GET", "hitl/api/me", user="carol")
    assert me == {"name": "carol", "display_name": "Carol", "identified": True, "admin": False}


async def test_specific_prompt_refuses_others_and_nothing_reaches_the_agent(
    api: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "specific", responder="bob")
    reg = await register(api, agent.url, task.id)
    path = answer_path(reg)
    assert reg["prompts"][0]["may_answer"] is False  # alice is looking
    status, refused = await api("POST", path, user="alice", body={"payload": YES})
    assert status == 403 and "bob" in refused["message"]
    # Forged identity headers change nothing: alice is still alice.
    forged = {
        "X-Forwarded-User": "bob",
        "X-Remote-User": "bob",
        "X-Jupyter-User": "bob",
        "X-Hitl-Responder": "bob",
    }
    status, _ = await api("POST", path, user="alice", body={"payload": YES}, headers=forged)
    assert status == 403
    # ... nor can the body name someone else.
    status, named = await api("POST", path, user="alice", body={"payload": YES, "responder": "bob"})
    assert status == 400 and "responder" in named["message"]
    assert await answers_at_agent(agent.url, task.id) == []
    status, done = await api("POST", path, user="bob", body={"payload": YES})
    assert status == 200 and done["status"] == "forwarded" and done["responders"] == ["bob"]
    assert [a["payload"] for a in await answers_at_agent(agent.url, task.id)] == [YES]


async def test_consensus_of_two_forwards_exactly_once(api: Any, agent: MockAgent) -> None:
    task = await start_task(agent.url, "consensus", n=2)
    reg = await register(api, agent.url, task.id)
    path = answer_path(reg)
    status, first = await api("POST", path, user="alice", body={"payload": YES})
    assert status == 202 and first["status"] == "collecting"
    assert (first["agreeing"], first["needed"]) == (1, 2)
    # The same user again is still one vote.
    status, again = await api("POST", path, user="alice", body={"payload": YES})
    assert status == 202 and again["agreeing"] == 1
    assert await answers_at_agent(agent.url, task.id) == []
    status, done = await api("POST", path, user="bob", body={"payload": YES})
    assert status == 200 and sorted(done["responders"]) == ["alice", "bob"]
    status, late = await api("POST", path, user="carol", body={"payload": YES})
    assert status == 409
    answers = await answers_at_agent(agent.url, task.id)
    assert [a["payload"] for a in answers] == [YES]
    status, view = await api("GET", f"hitl/api/tasks/{reg['id']}/prompts", user="carol")
    (prompt,) = view["prompts"]
    assert prompt["state"] == "forwarded" and sorted(prompt["forwarded_for"]) == ["alice", "bob"]


async def test_a_disagreement_is_reported_and_nothing_is_forwarded(
    api: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "consensus", n=2)
    reg = await register(api, agent.url, task.id)
    path = answer_path(reg)
    await api("POST", path, user="alice", body={"payload": YES})
    status, split = await api("POST", path, user="bob", body={"payload": NO})
    assert status == 202 and split["disagreement"] is True and split["agreeing"] == 1
    assert "differ" in split["message"]
    assert await answers_at_agent(agent.url, task.id) == []
    status, view = await api("GET", f"hitl/api/tasks/{reg['id']}", user="carol")
    (prompt,) = view["prompts"]
    assert prompt["state"] == "open" and prompt["disagreement"] is True
    assert prompt["answers"] == 2 and prompt["your_answer"] is None
    # Payloads equal as canonical JSON concur, whatever the key order or spacing.
    status, done = await api("POST", path, user="carol", raw=b'{"payload": {"approve" :  false}}')
    assert status == 200 and sorted(done["responders"]) == ["bob", "carol"]
    assert [a["payload"] for a in await answers_at_agent(agent.url, task.id)] == [NO]


async def test_fifty_racing_submissions_forward_exactly_one_answer(
    api: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "approval")
    reg = await register(api, agent.url, task.id)
    path = answer_path(reg)
    users = ["alice", "bob", "carol"]
    results = await asyncio.gather(
        *[
            api("POST", path, user=users[i % 3], body={"payload": {"approve": i % 2 == 0}})
            for i in range(50)
        ]
    )
    statuses = sorted(status for status, _ in results)
    assert statuses.count(200) == 1 and statuses.count(409) == 49, statuses
    assert len(await answers_at_agent(agent.url, task.id)) == 1


async def test_fifty_racing_consensus_votes_forward_exactly_one_answer(
    api: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "consensus", n=3)
    reg = await register(api, agent.url, task.id)
    path = answer_path(reg)
    users = ["alice", "bob", "carol"]
    results = await asyncio.gather(
        *[api("POST", path, user=users[i % 3], body={"payload": YES}) for i in range(50)]
    )
    statuses = [status for status, _ in results]
    assert statuses.count(200) == 1, results
    assert set(statuses) <= {200, 202, 409}
    (answer,) = await answers_at_agent(agent.url, task.id)
    assert answer["payload"] == YES


async def test_an_invalid_answer_gets_422_and_nothing_reaches_the_agent(
    api: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "approval")
    reg = await register(api, agent.url, task.id)
    status, bad = await api("POST", answer_path(reg), body={"payload": {"approve": "yes"}})
    assert status == 422 and bad["validation_errors"]
    assert bad["validation_errors"][0]["path"] == "/approve"
    assert await answers_at_agent(agent.url, task.id) == []
    status, _ = await api("POST", answer_path(reg), body={"payload": YES})
    assert status == 200


async def test_the_gateway_keeps_its_own_deadline_timer(api: Any, agent: MockAgent) -> None:
    # S-4: the agent keeps the prompt open after its deadline (keep-open); the gateway
    # closes it at the deadline by its own timer and forwards nothing after it.
    task = await start_task(agent.url, "deadline", deadline_seconds=1)
    reg = await register(api, agent.url, task.id)
    path = answer_path(reg)

    async def expired() -> Any:
        _status, view = await api("GET", f"hitl/api/tasks/{reg['id']}")
        return view if view["prompts"][0]["state"] == "expired" else None

    view = await until_async(expired, timeout=30, what="the gateway to close the prompt")
    (prompt,) = view["prompts"]
    assert prompt["state"] == "expired" and prompt["deadline_passed"] is True
    status, late = await api("POST", path, body={"payload": YES})
    assert status == 410 and "deadline" in late["message"]
    assert await answers_at_agent(agent.url, task.id) == []


async def test_the_hosted_agent_is_reached_through_the_gateway(api: Any, server_url: str) -> None:
    from tests.helpers.jupyter_users import auth

    url = server_url + "hitl/mock-agent"
    from hitl_nb.client import HitlClient

    async with HitlClient(url, headers=auth("carol")) as client:
        task = await client.send({"scenario": "specific", "responder": "carol"})
    reg = await register(api, url, task.id)
    status, done = await api("POST", answer_path(reg), user="carol", body={"payload": YES})
    assert status == 200, done
    # The gateway's secret header is the gateway's only: a forged one is refused.
    status, _ = await api(
        "GET", "hitl/mock-agent/tasks", user=None, headers={"X-Hitl-Gateway": "guess"}
    )
    assert status == 403
