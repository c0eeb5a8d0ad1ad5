"""Restarts lose nothing: collected answers survive, a forward in doubt is settled once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from hitl_nb.client import HitlClient
from hitl_nb.gateway import AgentPool, Caller, Gateway, GatewaySettings, message_for
from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.mock_agent import MockAgent
from tests.helpers.jupyter_process import jupyter_server
from tests.helpers.jupyter_users import auth
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.until import until_async

YES = {"approve": True}


@pytest.mark.kernel
@pytest.mark.slow
def test_a_restart_while_collecting_keeps_the_collected_answers(tmp_path: Path) -> None:
    with MockAgent(store=tmp_path / "agent.sqlite") as agent:
        task = asyncio.run(start_task(agent.url, "consensus", n=2))
        with jupyter_server(tmp_path, ready_headers=auth("alice")) as url:
            r = httpx.post(
                url + "hitl/api/tasks",
                headers=auth("alice"),
                json={"agent_url": agent.url, "task_id": task.id},
            )
            assert r.status_code == 201, r.text
            reg = r.json()
            (prompt,) = reg["prompts"]
            path = f"{url}hitl/api/tasks/{reg['id']}/prompts/{prompt['prompt_id']}/answer"
            r = httpx.post(path, headers=auth("alice"), json={"payload": YES})
            assert r.status_code == 202 and r.json()["agreeing"] == 1
        with jupyter_server(tmp_path, ready_headers=auth("alice")) as url:
            view = httpx.get(f"{url}hitl/api/tasks/{reg['id']}", headers=auth("bob")).json()
            (kept,) = view["prompts"]
            assert kept["state"] == "open" and kept["answers"] == 1 and kept["agreeing"] == 1
            r = httpx.post(
                path.replace(path.split("/hitl/")[0] + "/", url),
                headers=auth("bob"),
                json={"payload": YES},
            )
            assert r.status_code == 200, r.text
            assert sorted(r.json()["responders"]) == ["alice", "bob"]
        assert [a["payload"] for a in asyncio.run(answers_at_agent(agent.url, task.id))] == [YES]


async def _gateway(path: Path) -> Gateway:
    return Gateway(SQLiteStore(path), AgentPool([], 5.0), GatewaySettings())


async def _wait_settled(gw: Gateway, reg_id: str, prompt_id: str) -> Any:
    async def settled() -> Any:
        fwd = await gw.store.forward(reg_id, prompt_id)
        return fwd if fwd is not None and fwd.state != "forwarding" else None

    return await until_async(settled, timeout=30, what="the forward to be settled")


async def _history_ids(url: str, task_id: str) -> list[str]:
    async with HitlClient(url) as client:
        task = await client.get_task(task_id)
    return [m.message_id for m in task.history if m.metadata and "hitl_response_for" in m.metadata]


async def test_a_crash_before_sending_sends_once_after_restart(
    agent: MockAgent, tmp_path: Path
) -> None:
    task = await start_task(agent.url, "approval")
    gw = await _gateway(tmp_path / "gw.sqlite")
    _, reg = await gw.register(Caller("alice", "Alice"), agent.url, task.id)
    (prompt,) = reg["prompts"]
    # The write-ahead record is on disk; the process "dies" before the send.
    assert await gw.store.begin_forward(
        reg["id"], prompt["prompt_id"], "msg-1", '{"approve":true}', ["alice"]
    )
    await gw.close()
    assert await answers_at_agent(agent.url, task.id) == []
    again = await _gateway(tmp_path / "gw.sqlite")
    await again.start()
    fwd = await _wait_settled(again, reg["id"], prompt["prompt_id"])
    assert fwd.state == "forwarded" and fwd.detail == "the agent accepted the answer"
    assert await _history_ids(agent.url, task.id) == ["msg-1"]
    await again.close()


async def test_a_crash_after_sending_is_not_sent_again(agent: MockAgent, tmp_path: Path) -> None:
    task = await start_task(agent.url, "approval")
    gw = await _gateway(tmp_path / "gw.sqlite")
    _, reg = await gw.register(Caller("alice", "Alice"), agent.url, task.id)
    (prompt,) = reg["prompts"]
    assert await gw.store.begin_forward(
        reg["id"], prompt["prompt_id"], "msg-2", '{"approve":true}', ["alice"]
    )
    claimed = await gw.store.forward(reg["id"], prompt["prompt_id"])
    assert claimed is not None
    # The message reached the agent; the process died before recording it.
    async with HitlClient(agent.url) as client:
        await client.send(message_for(claimed, task.id, task.context_id), return_immediately=True)
    await gw.close()
    again = await _gateway(tmp_path / "gw.sqlite")
    await again.start()
    fwd = await _wait_settled(again, reg["id"], prompt["prompt_id"])
    # Settled by reading the task's history (GetTask), not by sending again.
    assert fwd.state == "forwarded" and fwd.detail == "the agent had accepted the answer"
    assert await _history_ids(agent.url, task.id) == ["msg-2"]
    await again.close()
