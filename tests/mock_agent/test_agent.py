"""The mock agent on the wire: card, both bindings, both versions, activation, streams
and replay, the other methods (answers are in test_acceptance.py, scenarios in
test_script.py)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator

import pytest

from hitl_nb.mock_agent import BUILTIN_SCENARIOS, MockAgent
from hitl_nb.spec import check_prompt
from tests.helpers.mock_agent_client import URI, Collector, Wire, envelope_of, headers, user_message


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent(deadline_seconds=0.3) as a:
        yield a


@pytest.fixture()
def wire(agent: MockAgent) -> Iterator[Wire]:
    w = Wire(agent.url)
    yield w
    w.close()


# -- card ---------------------------------------------------------------------------------


def test_card(wire: Wire, agent: MockAgent) -> None:
    card = wire.http.get(agent.card_url).json()
    assert card["supportedInterfaces"] == [
        {"url": agent.url + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": agent.url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ]
    caps = card["capabilities"]
    assert caps["streaming"] is True and caps["pushNotifications"] is True
    assert caps["extensions"] == [
        {
            "uri": URI,
            "description": "Structured HITL prompt envelope on INPUT_REQUIRED state.",
            "required": False,
            "params": {},
        }
    ]
    assert [s["id"] for s in card["skills"]] == [s.name for s in BUILTIN_SCENARIOS]
    assert all('"scenario"' in s["description"] for s in card["skills"])


# -- activation ---------------------------------------------------------------------------


def test_activated_prompt_is_strict_valid_and_echoed(wire: Wire) -> None:
    r, body = wire.rpc("SendMessage", {"message": user_message([{"text": "approval"}])})
    assert r.headers["A2A-Extensions"] == URI
    task = body["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    message = task["status"]["message"]
    assert URI in message["extensions"]
    env = envelope_of(task)
    assert [f for f in check_prompt(env, mode="strict") if f.severity == "error"] == []
    assert uuid.UUID(env["prompt_id"])


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


def test_activation_header_is_comma_separated_and_case_insensitive(wire: Wire) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": user_message([{"text": "approval"}])},
    }
    r = wire.rpc_raw(body, hdrs={"a2a-version": "1.0", "a2a-extensions": f"urn:other, {URI}"})
    assert r.headers["A2A-Extensions"] == URI
    assert envelope_of(r.json()["result"]["task"])


# -- streaming and replay -----------------------------------------------------------------


def test_streaming_send_ends_at_input_required(wire: Wire) -> None:
    r, events = wire.rpc_stream(
        "SendStreamingMessage", {"message": user_message([{"text": "echo"}])}
    )
    assert r.headers["A2A-Extensions"] == URI
    ids = [int(i or 0) for i, _ in events]
    assert ids == list(range(1, len(events) + 1))
    kinds = [next(iter(e["result"])) for _, e in events]
    assert kinds == ["task", "statusUpdate", "statusUpdate"]
    last = events[-1][1]["result"]["statusUpdate"]
    assert last["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert envelope_of(last)


def test_subscribe_snapshot_then_live_then_replay(wire: Wire, agent: MockAgent) -> None:
    task = wire.start("multi-step")
    env = envelope_of(task)
    body = {"jsonrpc": "2.0", "id": 9, "method": "SubscribeToTask", "params": {"id": task["id"]}}
    sub = Collector(agent.url, "/", body, headers())
    first = sub.wait_for(1)
    snap = first[0][1]["result"]["task"]
    assert envelope_of(snap) == env  # the open envelope, identical
    wire.answer(task["id"], env["prompt_id"], {"name": "x"})
    events = sub.join()
    states = [e["result"]["statusUpdate"]["status"]["state"] for _, e in events[1:]]
    assert states == ["TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"]
    # Replay after the snapshot's id: exactly the same events, same ids.
    _, replay = wire.rpc_stream(
        "SubscribeToTask", {"id": task["id"]}, last_event_id=str(first[0][0])
    )
    assert [(i, e["result"]) for i, e in replay] == [(i, e["result"]) for i, e in events[1:]]
    # After the last id there is nothing to replay yet: the stream waits for live events.
    sub2 = Collector(agent.url, "/", body, {**headers(), "Last-Event-ID": events[-1][0] or ""})
    nxt = envelope_of(wire.get_task(task["id"]))
    wire.answer(task["id"], nxt["prompt_id"], {"replicas": 2})
    tail = sub2.join()
    assert [int(i or 0) for i, _ in tail] == [
        int(events[-1][0] or 0) + 1,
        int(events[-1][0] or 0) + 2,
    ]


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


def test_subscribe_to_terminal_task_is_unsupported_but_replay_works(wire: Wire) -> None:
    task = wire.start()
    wire.answer(task["id"], envelope_of(task)["prompt_id"], {"approve": True})
    r, events = wire.rpc_stream("SubscribeToTask", {"id": task["id"]})
    assert events[0][1]["error"]["code"] == -32004
    # Events: 1 task, 2 working, 3 input-required, 4 working, 5 completed. A replay
    # stops after an interrupted state, like any stream.
    _, first = wire.rpc_stream("SubscribeToTask", {"id": task["id"]}, last_event_id="1")
    assert [i for i, _ in first] == ["2", "3"]
    _, replay = wire.rpc_stream("SubscribeToTask", {"id": task["id"]}, last_event_id="3")
    states = [e["result"]["statusUpdate"]["status"]["state"] for _, e in replay]
    assert states == ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    last = replay[-1][0] or ""
    _, nothing = wire.rpc_stream("SubscribeToTask", {"id": task["id"]}, last_event_id=last)
    assert nothing[0][1]["error"]["code"] == -32004


# -- the other methods ----------------------------------------------------------------------


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


def test_list_is_by_status_time_newest_first_and_filters_by_it(wire: Wire) -> None:
    a = wire.start()
    b = wire.start()
    time.sleep(0.002)
    wire.answer(a["id"], envelope_of(a)["prompt_id"], {"approve": True})  # a changes last
    ids = [t["id"] for t in wire.result("ListTasks", {"pageSize": 100})["tasks"]]
    assert ids.index(a["id"]) < ids.index(b["id"])
    since = wire.get_task(b["id"])["status"]["timestamp"]
    recent = wire.result("ListTasks", {"statusTimestampAfter": since})["tasks"]
    assert a["id"] in [t["id"] for t in recent] and b["id"] not in [t["id"] for t in recent]
    _, body = wire.rpc("ListTasks", {"statusTimestampAfter": "yesterday"})
    assert body["error"]["code"] == -32602


def test_rest_get_list_cancel(wire: Wire, agent: MockAgent) -> None:
    task = wire.start()
    h = headers()
    got = wire.http.get(f"{agent.url}/tasks/{task['id']}?historyLength=1", headers=h).json()
    assert len(got["history"]) == 1
    listed = wire.http.get(f"{agent.url}/tasks?contextId={task['contextId']}", headers=h).json()
    assert listed["tasks"][0]["id"] == task["id"]
    r = wire.http.post(f"{agent.url}/tasks/{task['id']}:cancel", headers=h)
    assert r.json()["status"]["state"] == "TASK_STATE_CANCELED"


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


def test_idle_streams_send_keep_alive_pings() -> None:
    with MockAgent(ping_interval=0.05) as agent:
        wire = Wire(agent.url)
        task = wire.start()
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SubscribeToTask",
            "params": {"id": task["id"]},
        }
        seen = b""
        with wire.http.stream("POST", agent.url + "/", json=body, headers=headers()) as r:
            for chunk in r.iter_bytes():
                seen += chunk
                if b": ping" in seen:
                    break
        assert seen.index(b"data:") < seen.index(b": ping")  # snapshot first, then pings
        wire.close()


def test_lifecycle_errors_and_stop_from_the_agent_thread() -> None:
    agent = MockAgent()
    with pytest.raises(RuntimeError, match="not running"):
        _ = agent.url
    with pytest.raises(ValueError, match="on_deadline"):
        MockAgent(on_deadline="never")
    agent.start()
    with pytest.raises(RuntimeError, match="already started"):
        agent.start()
    assert agent._loop is not None and agent._thread is not None
    agent._loop.call_soon_threadsafe(agent.stop)  # e.g. a scenario stopping its agent
    agent._thread.join(5)
    assert not agent.running
    agent.stop()  # idempotent


def test_port_in_use_is_reported_by_start() -> None:
    with MockAgent() as first:
        with pytest.raises(OSError):
            MockAgent(port=first.port).start()
