"""What one client may see of a task (hitl_nb.mock_agent._views): without activation,
no envelope anywhere; a client that activates later sees the open prompt."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers.mock_agent_client import URI, Wire, envelope_of, user_message


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent(deadline_seconds=0.3) as a:
        yield a


@pytest.fixture()
def wire(agent: MockAgent) -> Iterator[Wire]:
    w = Wire(agent.url)
    yield w
    w.close()


def test_without_activation_no_envelope_anywhere(wire: Wire) -> None:
    r, body = wire.rpc(
        "SendMessage", {"message": user_message([{"text": "approval"}])}, activated=False
    )
    assert "A2A-Extensions" not in r.headers
    task = body["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert task["status"]["message"]["parts"][0]["text"].startswith("Approve")
    assert URI not in r.text and "prompt_id" not in r.text
    again = wire.get_task(task["id"], activated=False)
    assert URI not in json.dumps(again)
    # ... but a client that activates later sees the open prompt.
    assert envelope_of(wire.get_task(task["id"]))["prompt"].startswith("Approve")
