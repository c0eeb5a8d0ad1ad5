"""The HTTP+JSON binding (hitl_nb.mock_agent._rest): subscribe (beside a 0.3
resubscribe), get, list and cancel."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers.mock_agent_client import URI, Collector, Wire, envelope_of, headers


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent(deadline_seconds=0.3) as a:
        yield a


@pytest.fixture()
def wire(agent: MockAgent) -> Iterator[Wire]:
    w = Wire(agent.url)
    yield w
    w.close()


def test_rest_subscribe_and_v03_resubscribe(wire: Wire, agent: MockAgent) -> None:
    task = wire.start()
    env = envelope_of(task)
    rest = Collector(agent.url, f"/tasks/{task['id']}:subscribe", None, headers())
    old = Collector(
        agent.url,
        "/",
        {"jsonrpc": "2.0", "id": "o", "method": "tasks/resubscribe", "params": {"id": task["id"]}},
        headers("0.3"),
    )
    assert rest.wait_for(1)[0][1]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    snap03 = old.wait_for(1)[0][1]["result"]
    assert snap03["kind"] == "task" and snap03["status"]["state"] == "input-required"
    assert snap03["status"]["message"]["metadata"][URI] == env
    wire.answer(task["id"], env["prompt_id"], {"approve": True})
    rest_states = [e.get("statusUpdate", {}).get("status", {}).get("state") for _, e in rest.join()]
    assert rest_states[-1] == "TASK_STATE_COMPLETED"
    tail03 = [e["result"] for _, e in old.join()][1:]
    assert tail03[0]["kind"] == "status-update" and tail03[0]["status"]["state"] == "working"
    assert tail03[-1]["final"] is True and tail03[-1]["status"]["state"] == "completed"


def test_rest_get_list_cancel(wire: Wire, agent: MockAgent) -> None:
    task = wire.start()
    h = headers()
    got = wire.http.get(f"{agent.url}/tasks/{task['id']}?historyLength=1", headers=h).json()
    assert len(got["history"]) == 1
    listed = wire.http.get(f"{agent.url}/tasks?contextId={task['contextId']}", headers=h).json()
    assert listed["tasks"][0]["id"] == task["id"]
    r = wire.http.post(f"{agent.url}/tasks/{task['id']}:cancel", headers=h)
    assert r.json()["status"]["state"] == "TASK_STATE_CANCELED"
