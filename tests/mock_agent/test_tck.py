"""The mock agent as an A2A 1.0 agent the official TCK can drive (hitl_nb.mock_agent._tck),
and the wire details the TCK and the SDKs rely on: answer streams open with the Task,
plain follow-ups are kept, GetTask takes history_length, mismatched contexts refused."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers.mock_agent_client import Wire, envelope_of, headers, user_message

PATHS = {"JSONRPC": "/", "HTTP+JSON": "/message:stream"}


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


@pytest.fixture
def wire(agent: MockAgent) -> Iterator[Wire]:
    w = Wire(agent.url)
    yield w
    w.close()


def tck(prefix: str, *, task_id: str | None = None, text: str = "hi") -> dict[str, Any]:
    message = user_message([{"text": text}], task_id=task_id)
    message["messageId"] = f"{prefix}-{uuid.uuid4()}"
    return message


def stream(wire: Wire, binding: str, message: dict[str, Any]) -> list[dict[str, Any]]:
    """The StreamResponse objects of one SendStreamingMessage on ``binding``."""
    if binding == "JSONRPC":
        _, events = wire.rpc_stream("SendStreamingMessage", {"message": message})
        return [data["result"] for _, data in events]
    _, events = wire.stream("POST", PATHS[binding], body={"message": message}, hdrs=headers())
    return [data for _, data in events]


def kinds(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for event in events:
        (kind,) = event.keys()
        value = event[kind]
        out.append(f"{kind}:{value['status']['state']}" if "status" in value else kind)
    return out


# -- the TCK's contract -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "kind", "check"),
    [
        ("tck-artifact-text", "text", lambda p: p["text"] == "Generated text content"),
        ("tck-artifact-file-url", "url", lambda p: p["url"] == "https://example.com/output.txt"),
        ("tck-artifact-file", "raw", lambda p: p["filename"] == "output.txt"),
        ("tck-artifact-data", "data", lambda p: p["data"] == {"key": "value", "count": 42}),
    ],
)
def test_tck_artifact_scenarios_complete_with_their_artifact(
    wire: Wire, prefix: str, kind: str, check: Any
) -> None:
    task = wire.result("SendMessage", {"message": tck(prefix)})["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    (artifact,) = task["artifacts"]
    (part,) = artifact["parts"]
    assert kind in part and check(part)


def test_tck_complete_message_response_input_required_and_reject(wire: Wire) -> None:
    done = wire.result("SendMessage", {"message": tck("tck-complete-task")})["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["status"]["message"]["parts"] == [{"text": "Hello from TCK"}]
    reply = wire.result("SendMessage", {"message": tck("tck-message-response")})
    assert list(reply) == ["message"]
    assert reply["message"]["parts"] == [{"text": "Direct message response"}]
    waiting = wire.result("SendMessage", {"message": tck("tck-input-required")})["task"]
    assert waiting["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert "metadata" not in waiting["status"]["message"]  # no envelope: not a hitl prompt
    rejected = wire.result("SendMessage", {"message": tck("tck-reject-task")})["task"]
    assert rejected["status"]["state"] == "TASK_STATE_REJECTED"


def test_tck_multi_turn_keeps_history_and_completes(wire: Wire) -> None:
    task = wire.result("SendMessage", {"message": tck("tck-input-required")})["task"]
    for text in ("TCK history message 1", "TCK history message 2"):
        again = wire.result(
            "SendMessage", {"message": tck("tck-input-required", task_id=task["id"], text=text)}
        )["task"]
        assert again["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    done = wire.result("SendMessage", {"message": tck("tck-complete-task", task_id=task["id"])})
    assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    users = [m["parts"][0]["text"] for m in done["task"]["history"] if m["role"] == "ROLE_USER"]
    assert users[1:3] == ["TCK history message 1", "TCK history message 2"]
    short = wire.result("GetTask", {"id": task["id"], "history_length": 1})
    assert len(short["history"]) == 1  # protobuf JSON's snake_case name is accepted too
    r, body = wire.rpc("GetTask", {"id": task["id"], "history_length": 1, "historyLength": 2})
    assert body["error"]["code"] == -32602  # both spellings at once: ambiguous


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        (
            "tck-stream-001",
            [
                "task",
                "statusUpdate:TASK_STATE_WORKING",
                "artifactUpdate",
                "statusUpdate:TASK_STATE_COMPLETED",
            ],
        ),
        ("tck-stream-002", ["task", "statusUpdate:TASK_STATE_COMPLETED"]),
        (
            "tck-stream-artifact-chunked",
            [
                "task",
                "statusUpdate:TASK_STATE_WORKING",
                "artifactUpdate",
                "artifactUpdate",
                "statusUpdate:TASK_STATE_COMPLETED",
            ],
        ),
        ("tck-message-response", ["message"]),
    ],
)
def test_tck_streaming_scenarios(
    wire: Wire, binding: str, prefix: str, expected: list[str]
) -> None:
    events = stream(wire, binding, tck(prefix))
    assert [k if not k.startswith("task") else "task" for k in kinds(events)] == expected
    chunks = [e["artifactUpdate"] for e in events if "artifactUpdate" in e]
    if prefix.endswith("chunked"):
        assert [c["artifact"]["parts"][0]["text"] for c in chunks] == ["chunk-1 ", "chunk-2"]
        assert chunks[0]["artifact"]["artifactId"] == chunks[1]["artifact"]["artifactId"]
        assert chunks[1].get("append") and chunks[1].get("lastChunk")


def test_resubscribe_scenario_runs_long_enough(
    agent: MockAgent, wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TCK_STREAMING_TIMEOUT", "0.2")  # 2 x 0.2 s of WORKING
    message = tck("test-resubscribe-message-id")
    task = wire.result(
        "SendMessage", {"message": message, "configuration": {"returnImmediately": True}}
    )["task"]
    assert task["status"]["state"] == "TASK_STATE_WORKING"
    _, events = wire.rpc_stream("SubscribeToTask", {"id": task["id"]})
    states = [d["result"] for _, d in events]
    assert kinds(states)[0] == "task:TASK_STATE_WORKING"
    assert kinds(states)[-1] == "statusUpdate:TASK_STATE_COMPLETED"


# -- answer streams and follow-ups on the hitl scenarios ------------------------------------


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_an_answer_stream_begins_with_the_task(wire: Wire, binding: str) -> None:
    # A2A 1.0 §3.1.2: "the stream MUST begin with the Task object". Before, an answer
    # stream began with a statusUpdate (WORKING).
    task = wire.start("multi-step")
    env = envelope_of(task)
    answer = user_message(
        [{"text": "ok"}],
        task_id=task["id"],
        response={"prompt_id": env["prompt_id"], "payload": {"name": "x"}},
    )
    events = stream(wire, binding, answer)
    assert kinds(events)[0] == "task:TASK_STATE_WORKING"
    assert events[0]["task"]["id"] == task["id"]
    assert kinds(events)[-1] == "statusUpdate:TASK_STATE_INPUT_REQUIRED"  # the next prompt


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_a_plain_follow_up_is_kept_and_the_prompt_stays_open(wire: Wire, binding: str) -> None:
    task = wire.start("approval")
    env = envelope_of(task)
    note = user_message([{"text": "Which release is this?"}], task_id=task["id"])
    events = stream(wire, binding, note)
    assert kinds(events) == ["task:TASK_STATE_INPUT_REQUIRED"]  # the task as it is: waiting
    assert envelope_of(events[0]["task"])["prompt_id"] == env["prompt_id"]
    after = wire.get_task(task["id"])
    assert after["history"][-1]["messageId"] == note["messageId"]
    assert after["history"][-1]["contextId"] == task["contextId"]
    r, body = wire.answer(task["id"], env["prompt_id"], {"approve": True})
    assert body["result"]["task"]["status"]["state"] != "TASK_STATE_INPUT_REQUIRED"


def test_a_message_in_another_context_is_refused(wire: Wire) -> None:
    task = wire.start("approval")
    message = {**user_message(task_id=task["id"]), "contextId": "someone-elses"}
    r, body = wire.rpc("SendMessage", {"message": message})
    assert body["error"]["code"] == -32602
    assert "someone-elses" in body["error"]["message"]
    assert wire.get_task(task["id"])["history"] == task["history"]  # nothing kept
