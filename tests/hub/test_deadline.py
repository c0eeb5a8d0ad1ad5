"""Deadline policies on a real JupyterHub whose hitl service is killed with -9 one second
before the deadline: the hub starts the service again, and after the deadline each
policy acts exactly once: ``default`` sends the registrant's answer to the agent once,
``cancel`` cancels the task once. Both tasks share one kill (a restart by the hub takes
up to its 30 s poll of its services).

The session's hub (tests/hub/conftest.py): test_end_to_end.py kills its service too.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from hitl_nb.a2a import TaskState
from hitl_nb.client import GatewayClient, GatewayInfo, HitlClient
from hitl_nb.mock_agent import MockAgent
from hitl_nb.spec import parse_rfc3339
from tests.helpers.hub import Hub, wait_for_service
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.until import until

pytestmark = [pytest.mark.slow, pytest.mark.kernel]

NO = {"approve": False}
#: Seconds from asking to the deadline: the registrations (through the hub's login) and
#: the kill fit in before it on a loaded machine.
DEADLINE_SECONDS = 8.0


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


def _register(hub: Hub, agent_url: str, task_id: str, policy: dict[str, Any]) -> dict[str, Any]:
    info = GatewayInfo(hub.service, hub.user_token("alice"), "alice", hub.service + "api/")
    with GatewayClient(info) as gw:
        return dict(gw.register(agent_url, task_id, deadline=policy))


def _deadline_entries(hub: Hub, reg_id: str) -> list[dict[str, Any]]:
    r = httpx.get(
        hub.service + "api/audit",
        params={"registration": reg_id},
        headers={"Authorization": f"token {hub.user_token('alice')}"},
        timeout=60,
    )
    assert r.status_code == 200, r.text
    return [e for e in r.json()["entries"] if "deadline" in (e["display_name"] or "")]


def _deadline(reg: dict[str, Any]) -> float:
    """The deadline the prompt's envelope states, in epoch seconds."""
    at = parse_rfc3339(reg["prompts"][0]["deadline"])
    assert at is not None
    return at.timestamp()


def _state(agent_url: str, task_id: str) -> TaskState:
    async def get() -> TaskState:
        async with HitlClient(agent_url) as client:
            return (await client.get_task(task_id)).status.state

    return asyncio.run(get())


@pytest.mark.timeout(300)
def test_the_service_killed_9_just_before_the_deadline_acts_once_after_its_restart(
    hub: Hub, agent: MockAgent
) -> None:
    given = asyncio.run(start_task(agent.url, "deadline", deadline_seconds=DEADLINE_SECONDS))
    doomed = asyncio.run(start_task(agent.url, "deadline", deadline_seconds=DEADLINE_SECONDS))
    default = _register(hub, agent.url, given.id, {"policy": "default", "answer": NO})
    cancel = _register(hub, agent.url, doomed.id, {"policy": "cancel"})
    assert cancel["deadline"] == {"policy": "cancel"}
    deadlines = [_deadline(r) for r in (default, cancel)]
    deadline = min(deadlines)

    pause = deadline - 1.0 - time.time()
    assert pause > 0, "the registrations took until the deadline: nothing left to test"
    time.sleep(pause)  # one second before the deadline
    before = hub.service_pid()
    os.kill(before, signal.SIGKILL)
    killed_at = time.time()
    assert killed_at < deadline
    # Nothing acted before the kill.
    assert asyncio.run(answers_at_agent(agent.url, given.id)) == []
    assert _state(agent.url, doomed.id) is TaskState.INPUT_REQUIRED

    # The hub notices (it polls its services) and starts the service again; the deadline
    # passed meanwhile, so the new service's first round finds both actions due.
    until(lambda: hub.service_pid() not in (0, before), timeout=120, what="a new service")
    wait_for_service(hub)
    answers = until(
        lambda: asyncio.run(answers_at_agent(agent.url, given.id)),
        timeout=60,
        what="the default answer at the agent",
    )
    until(
        lambda: _state(agent.url, doomed.id) is TaskState.CANCELED,
        timeout=60,
        what="the task cancelled",
    )
    # A round of the restarted service more (every lease_seconds / 3, 5 s here): each
    # action is claimed once in the store, so nothing acts again.
    time.sleep(6)
    assert [a["payload"] for a in asyncio.run(answers_at_agent(agent.url, given.id))] == [NO]
    assert len(answers) == 1
    ((sent,), (cancelled,)) = (
        _deadline_entries(hub, default["id"]),
        _deadline_entries(hub, cancel["id"]),
    )
    assert (sent["action"], sent["responder"]) == ("forwarded", "deadline default")
    assert cancelled["action"] == "cancelled"
    assert _state(agent.url, doomed.id) is TaskState.CANCELED
    # Both came after the deadline, from the service the hub started again.
    assert sent["at"] >= deadlines[0] and cancelled["at"] >= deadlines[1]
    assert sent["at"] > killed_at and cancelled["at"] > killed_at
    assert "Service hitl exited with status -9" in hub.log()
