"""The middleware on the wire: the card's entry whole, the echo, no envelope without
activation (JSON and server-sent events, both bindings), bodies too large to read."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx

from hitl_nb.spec import EXTENSION_URI, agent_card_extension
from tests.helpers.ask_agent import AskAgent
from tests.helpers.mock_agent_client import Collector, headers


def _message(text: str, **extra: Any) -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}], **extra}


def _send(url: str, *, activated: bool) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": _message("go")},
    }
    return httpx.post(url + "/", json=body, headers=headers(activated=activated), timeout=30)


def test_the_card_declares_the_extension_whole(ask_agent: AskAgent) -> None:
    r = httpx.get(ask_agent.url + "/.well-known/agent-card.json", timeout=30)
    (entry,) = r.json()["capabilities"]["extensions"]
    assert entry == agent_card_extension()  # "required": false and "params": {} written out
    assert int(r.headers["content-length"]) == len(r.content)
    again = httpx.get(
        ask_agent.url + "/.well-known/agent-card.json",
        headers={"If-None-Match": r.headers["etag"]},
        timeout=30,
    )
    assert again.status_code == 304  # the SDK's cache validation still works


def test_every_answer_to_an_activated_request_echoes_it(ask_agent: AskAgent) -> None:
    sent = _send(ask_agent.url, activated=True)
    assert sent.headers["A2A-Extensions"] == EXTENSION_URI
    task_id = sent.json()["result"]["task"]["id"]
    rest = httpx.get(f"{ask_agent.url}/rest/tasks/{task_id}", headers=headers(), timeout=30)
    assert rest.headers["A2A-Extensions"] == EXTENSION_URI
    refused = httpx.post(
        ask_agent.url + "/rest/message:send",
        json={"message": _message("x", taskId=task_id, metadata={"hitl_response_for": "no"})},
        headers=headers(),
        timeout=30,
    )
    assert refused.status_code == 400 and refused.headers["A2A-Extensions"] == EXTENSION_URI
    legacy = httpx.post(
        ask_agent.url + "/",
        json={"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task_id}},
        headers=headers("0.3"),
        timeout=30,
    )
    assert legacy.headers["X-A2A-Extensions"] == EXTENSION_URI
    assert "A2A-Extensions" not in _send(ask_agent.url, activated=False).headers


def test_no_envelope_reaches_a_client_that_did_not_activate_it(ask_agent: AskAgent) -> None:
    task = _send(ask_agent.url, activated=True).json()["result"]["task"]
    assert EXTENSION_URI in json.dumps(task)
    plain = headers(activated=False)
    rest = httpx.get(f"{ask_agent.url}/rest/tasks/{task['id']}", headers=plain, timeout=30)
    assert rest.status_code == 200 and EXTENSION_URI not in rest.text
    assert int(rest.headers["content-length"]) == len(rest.content)
    assert rest.json()["status"]["message"]["parts"] == [{"text": "Approve the release? <b>v2</b>"}]
    body = {"jsonrpc": "2.0", "id": 3, "method": "SubscribeToTask", "params": {"id": task["id"]}}
    stream = Collector(ask_agent.url, "/", body, plain)
    (event,) = stream.wait_for(1)[:1]
    snapshot = event[1]["result"]["task"]
    assert snapshot["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert EXTENSION_URI not in json.dumps(snapshot)
    body = {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "SendStreamingMessage",
        "params": {"message": _message("go")},
    }
    streamed = Collector(ask_agent.url, "/", body, plain).join()
    assert [e[1]["result"].keys() for e in streamed][-1] == {"statusUpdate"}
    assert EXTENSION_URI not in json.dumps(streamed)
    last = streamed[-1][1]["result"]["statusUpdate"]["status"]
    assert last["state"] == "TASK_STATE_INPUT_REQUIRED" and "metadata" not in last["message"]


def test_a_large_body_that_is_not_an_answer_goes_to_the_sdk_unread(ask_agent: AskAgent) -> None:
    big = _message("x" * 5_000_000)
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": big}}
    r = httpx.post(ask_agent.url + "/", json=body, headers=headers(), timeout=60)
    assert r.json()["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
