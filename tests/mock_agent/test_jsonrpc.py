"""The JSON-RPC binding (hitl_nb.mock_agent._jsonrpc), A2A 1.0 and 0.3: the other
methods, method and version errors, the 0.3 error and stream shapes, the version as a
query parameter (answers are in test_acceptance.py, scenarios in test_script.py)."""

from __future__ import annotations

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


def test_list_and_cancel(wire: Wire) -> None:
    task = wire.start()
    listed = wire.result("ListTasks", {"contextId": task["contextId"]})
    assert [t["id"] for t in listed["tasks"]] == [task["id"]]
    assert listed["totalSize"] == 1 and listed["nextPageToken"] == ""
    canceled = wire.result("CancelTask", {"id": task["id"]})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    _, body = wire.rpc("CancelTask", {"id": task["id"]})
    assert body["error"]["code"] == -32002
    pid = envelope_of(task)["prompt_id"]
    assert wire.answer(task["id"], pid, {"approve": True})[1]["error"]["code"] == -32010
    page = wire.result("ListTasks", {"pageSize": 1, "status": "TASK_STATE_CANCELED"})
    assert len(page["tasks"]) == 1 and all(
        t["status"]["state"] == "TASK_STATE_CANCELED" for t in page["tasks"]
    )


@pytest.mark.parametrize(
    ("method", "version", "code"),
    [
        ("CreateTaskPushNotificationConfig", "1.0", -32602),  # no url, no taskId
        ("GetTaskPushNotificationConfig", "1.0", -32602),  # no taskId
        ("tasks/pushNotificationConfig/set", None, -32602),  # no pushNotificationConfig
        ("GetExtendedAgentCard", "1.0", -32007),
        ("message/send", "1.0", -32601),
        ("SendMessage", None, -32601),
        ("SendMessage", "2.0", -32009),
    ],
)
def test_method_and_version_errors(wire: Wire, method: str, version: str | None, code: int) -> None:
    _, body = wire.rpc(method, {"id": "x"}, version=version)
    assert body["error"]["code"] == code


def test_v03_invalid_response_vector(wire: Wire) -> None:
    """The extension's invalid-response-422 example, with our own ids, over 0.3."""
    res = wire.result(
        "message/send",
        {"message": user_message([{"text": "approval"}], v03=True)},
        version=None,
    )
    pid = res["status"]["message"]["metadata"][URI]["prompt_id"]
    request = {
        "kind": "message",
        "messageId": "msg-bad-0001",
        "taskId": res["id"],
        "contextId": res["contextId"],
        "role": "user",
        "parts": [{"kind": "text", "text": "(wrong type and an unknown field)"}],
        "metadata": {
            "hitl_response_for": {
                "prompt_id": pid,
                "payload": {"approve": "yes please", "extra_unknown_field": 42},
            }
        },
    }
    r, body = wire.rpc("message/send", {"message": request}, version=None)
    assert r.status_code == 422  # the example's httpStatus
    assert r.reason_phrase == "Unprocessable Entity"
    assert r.headers["X-A2A-Extensions"] == URI
    assert body["error"]["code"] == -32011
    assert body["error"]["message"] == "hitl_response_invalid"
    assert body["error"]["data"] == {
        "extension": URI,
        "prompt_id": pid,
        "validation_errors": [
            {"path": "/approve", "keyword": "type", "message": "expected boolean, got string"},
            {
                "path": "/extra_unknown_field",
                "keyword": "additionalProperties",
                "message": "additional property 'extra_unknown_field' is not permitted",
            },
        ],
    }
    after = wire.result("tasks/get", {"id": res["id"]}, version=None)
    assert after["status"]["state"] == "input-required"


def test_v03_message_stream_has_kinds_and_final(wire: Wire) -> None:
    msg = user_message([{"text": "approval"}], v03=True)
    r, events = wire.rpc_stream("message/stream", {"message": msg}, version=None)
    assert r.headers["X-A2A-Extensions"] == URI
    kinds = [e["result"]["kind"] for _, e in events]
    assert kinds == ["task", "status-update", "status-update"]
    assert [e["result"].get("final") for _, e in events[1:]] == [False, True]
    assert events[-1][1]["result"]["status"]["state"] == "input-required"


def test_version_as_query_parameter(wire: Wire) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"pageSize": 1}}
    r = wire.http.post(wire.url + "/?A2A-Version=1.0", json=body)
    assert "tasks" in r.json()["result"]
