"""The tornado plumbing both bindings share (hitl_nb.mock_agent._http): activation and
its echo, streams that end at INPUT_REQUIRED, subscriptions (snapshot, live, replay after
Last-Event-ID), keep-alive pings."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from hitl_nb.mock_agent import MockAgent
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
