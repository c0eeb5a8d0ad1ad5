"""The server's Authorizer decides on the ``hitl`` resource, for the gateway and the agent."""

from __future__ import annotations

from typing import Any

import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers.jupyter_users import NamedTokens, NoHitlForBob
from tests.helpers.tasks import answers_at_agent, start_task

pytestmark = pytest.mark.kernel


@pytest.fixture
def jp_server_config(tmp_path: Any) -> dict[str, Any]:
    return {
        "ServerApp": {
            "jpserver_extensions": {"hitl_nb.server": True},
            "identity_provider_class": NamedTokens,
            "authorizer_class": NoHitlForBob,
        },
        "HitlServer": {"state_dir": str(tmp_path / "hitl-state")},
    }


async def test_a_user_the_authorizer_refuses_gets_403_and_nothing_is_sent(
    api: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "approval")
    status, reg = await api(
        "POST", "hitl/api/tasks", body={"agent_url": agent.url, "task_id": task.id}
    )
    assert status == 201
    path = f"hitl/api/tasks/{reg['id']}/prompts/{reg['prompts'][0]['prompt_id']}/answer"
    status, body = await api("POST", path, user="bob", body={"payload": {"approve": True}})
    assert status == 403
    for method, where in [
        ("GET", "hitl/api/tasks"),
        ("GET", "hitl/api/me"),
        ("GET", "hitl/mock-agent/.well-known/agent-card.json"),
    ]:
        status, _ = await api(method, where, user="bob")
        assert status == 403, where
    assert await answers_at_agent(agent.url, task.id) == []
    status, _ = await api("POST", path, user="carol", body={"payload": {"approve": True}})
    assert status == 200
