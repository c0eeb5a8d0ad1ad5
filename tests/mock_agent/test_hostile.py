"""Hostile input against both bindings: the right A2A error, the server keeps serving,
and no task changes state."""

# The corpus tables keep one case per line, however long.
# ruff: noqa: E501

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from hitl_nb.mock_agent import MockAgent, Scenario, Step
from tests.helpers.mock_agent_client import Wire, envelope_of, headers, user_message
from tests.helpers.until import until


@dataclass
class Ctx:
    """Ids a case may need: a task waiting on a prompt, and a completed one."""

    open_id: str
    open_pid: str
    done_id: str
    done_pid: str


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[MockAgent, Ctx]]:
    with MockAgent() as agent:
        wire = Wire(agent.url)
        open_task, done_task = wire.start(), wire.start()
        done_pid = envelope_of(done_task)["prompt_id"]
        wire.answer(done_task["id"], done_pid, {"approve": True})
        yield (
            agent,
            Ctx(open_task["id"], envelope_of(open_task)["prompt_id"], done_task["id"], done_pid),
        )
        wire.close()


def rpc(method: str, params: Any, rid: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def send(message: Any, **config: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"message": message}
    if config:
        params["configuration"] = config
    return rpc("SendMessage", params)


def answer(c: Ctx, response: Any, task_id: str | None = None) -> dict[str, Any]:
    return user_message(task_id=task_id or c.open_id, response=response)


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def escaped(value: Any, **marks: str) -> bytes:
    """``value`` as JSON text, each ``"@name"`` string (key or value) replaced by the
    escape text given for it (a lone surrogate: ``json.dumps`` cannot write one)."""
    text = json.dumps(value)
    for name, escape in marks.items():
        text = text.replace(f'"@{name}"', f'"{escape}"')
    return text.encode()


H = headers()
# A case: how to build the body (JSON value or raw bytes), extra headers, expected code.
RpcCase = tuple[Callable[[Ctx], Any], dict[str, str], int]

RPC_CASES: dict[str, RpcCase] = {
    "not-json": (lambda c: b"hello", {}, -32700),
    "empty-body": (lambda c: b"", {}, -32700),
    "truncated-json": (lambda c: b'{"jsonrpc": "2.0", "id": 1', {}, -32700),
    "duplicate-keys": (lambda c: b'{"jsonrpc":"2.0","id":1,"id":2,"method":"GetTask"}', {}, -32700),
    "nan": (lambda c: b'{"jsonrpc":"2.0","id":NaN,"method":"GetTask"}', {}, -32700),
    "bad-utf8": (lambda c: b'{"jsonrpc":"2.0","id":"\xff","method":"GetTask"}', {}, -32700),
    "deeply-nested": (lambda c: nested(5000), {}, -32700),
    # A lone UTF-16 surrogate is no Unicode character: a parse error (it was -32603).
    "lone-surrogate-in-a-value": (
        lambda c: escaped(
            send(answer(c, {"prompt_id": c.open_pid, "payload": {"approve": "@s"}})), s=r"\ud800"
        ),
        {},
        -32700,
    ),
    "lone-surrogate-in-a-key": (
        lambda c: escaped(
            send(answer(c, {"prompt_id": c.open_pid, "payload": {"@s": True}})), s=r"\uDC00"
        ),
        {},
        -32700,
    ),
    "lone-surrogate-in-a-text": (
        lambda c: escaped(send(user_message([{"text": "@s"}])), s=r"x\uDBFF"),
        {},
        -32700,
    ),
    "lone-surrogate-id": (
        lambda c: escaped(rpc("GetTask", {"id": c.open_id}, rid="@s"), s=r"\udfff"),
        {},
        -32700,
    ),
    "nested-params": (
        lambda c: b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":' + nested(100) + b"}",
        {},
        -32700,
    ),
    "five-megabytes": (
        lambda c: rpc("SendMessage", {"message": user_message([{"text": "x" * 5_000_000}])}),
        {},
        -32600,
    ),
    "batch": (lambda c: [rpc("GetTask", {"id": c.open_id})], {}, -32600),
    "empty-batch": (lambda c: [], {}, -32600),
    "scalar-body": (lambda c: 42, {}, -32600),
    "wrong-jsonrpc": (
        lambda c: {**rpc("GetTask", {"id": c.open_id}), "jsonrpc": "1.0"},
        {},
        -32600,
    ),
    "no-jsonrpc": (
        lambda c: {"id": 1, "method": "GetTask", "params": {"id": c.open_id}},
        {},
        -32600,
    ),
    "missing-id": (
        lambda c: {"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "x"}},
        {},
        -32600,
    ),
    "null-id": (lambda c: rpc("GetTask", {"id": c.open_id}, rid=None), {}, -32600),
    "bool-id": (lambda c: rpc("GetTask", {"id": c.open_id}, rid=True), {}, -32600),
    "object-id": (lambda c: rpc("GetTask", {"id": c.open_id}, rid={"a": 1}), {}, -32600),
    "no-method": (lambda c: {"jsonrpc": "2.0", "id": 1, "params": {}}, {}, -32600),
    "int-method": (lambda c: rpc(7, {}), {}, -32600),  # type: ignore[arg-type]
    "unknown-method": (lambda c: rpc("DeleteEverything", {}), {}, -32601),
    "v03-name-on-v1": (lambda c: rpc("tasks/get", {"id": c.open_id}), {}, -32601),
    "params-array": (lambda c: rpc("GetTask", [c.open_id]), {}, -32602),
    "push-create-no-task": (
        lambda c: rpc("CreateTaskPushNotificationConfig", {"url": "http://127.0.0.1:9/x"}),
        {},
        -32602,
    ),
    "push-create-unknown-task": (
        lambda c: rpc(
            "CreateTaskPushNotificationConfig", {"taskId": "nope", "url": "http://127.0.0.1:9/x"}
        ),
        {},
        -32001,
    ),
    "push-create-file-url": (
        lambda c: rpc(
            "CreateTaskPushNotificationConfig", {"taskId": c.open_id, "url": "file:///etc/passwd"}
        ),
        {},
        -32602,
    ),
    "push-create-auth-no-scheme": (
        lambda c: rpc(
            "CreateTaskPushNotificationConfig",
            {
                "taskId": c.open_id,
                "url": "http://127.0.0.1:9/x",
                "authentication": {"credentials": "x"},
            },
        ),
        {},
        -32602,
    ),
    "push-create-huge-token": (
        lambda c: rpc(
            "CreateTaskPushNotificationConfig",
            {"taskId": c.open_id, "url": "http://127.0.0.1:9/x", "token": "t" * 5000},
        ),
        {},
        -32602,
    ),
    "push-get-unknown": (
        lambda c: rpc("GetTaskPushNotificationConfig", {"taskId": c.open_id, "id": "nope"}),
        {},
        -32001,
    ),
    "push-list-page-zero": (
        lambda c: rpc("ListTaskPushNotificationConfigs", {"taskId": c.open_id, "pageSize": 0}),
        {},
        -32602,
    ),
    "push-delete-no-id": (
        lambda c: rpc("DeleteTaskPushNotificationConfig", {"taskId": c.open_id}),
        {},
        -32602,
    ),
    "push-send-bad-config": (
        lambda c: send(user_message(), taskPushNotificationConfig={"url": "gopher://x"}),
        {},
        -32602,
    ),
    "params-string": (lambda c: rpc("GetTask", "id"), {}, -32602),
    "send-no-message": (lambda c: rpc("SendMessage", {}), {}, -32602),
    "message-not-object": (lambda c: send("hi"), {}, -32602),
    "parts-not-array": (lambda c: send({**user_message(), "parts": {"text": "a"}}), {}, -32602),
    "no-parts": (lambda c: send(user_message([])), {}, -32602),
    "two-contents": (lambda c: send(user_message([{"text": "a", "url": "b"}])), {}, -32602),
    "bad-role": (lambda c: send({**user_message(), "role": "ROLE_ROBOT"}), {}, -32602),
    "agent-role": (lambda c: send({**user_message(), "role": "ROLE_AGENT"}), {}, -32602),
    "int-message-id": (lambda c: send({**user_message(), "messageId": 5}), {}, -32602),
    "metadata-array": (lambda c: send({**user_message(), "metadata": []}), {}, -32602),
    "bad-base64": (lambda c: send(user_message([{"raw": "%%%"}])), {}, -32602),
    "config-type": (lambda c: send(user_message(), returnImmediately="yes"), {}, -32602),
    "history-negative": (lambda c: send(user_message(), historyLength=-1), {}, -32602),
    "unknown-scenario": (
        lambda c: send(user_message([{"data": {"scenario": "rm -rf"}}])),
        {},
        -32602,
    ),
    "deadline-past-year-9999": (
        lambda c: send(
            user_message([{"data": {"scenario": "deadline", "deadline_seconds": 1e12}}])
        ),
        {},
        -32602,
    ),
    "deadline-1e308": (
        lambda c: send(
            user_message([{"data": {"scenario": "deadline", "deadline_seconds": 1e308}}])
        ),
        {},
        -32602,
    ),
    "get-no-id": (lambda c: rpc("GetTask", {}), {}, -32602),
    "get-int-id": (lambda c: rpc("GetTask", {"id": 5}), {}, -32602),
    "get-unknown": (lambda c: rpc("GetTask", {"id": "no-such-task"}), {}, -32001),
    "get-history-bool": (
        lambda c: rpc("GetTask", {"id": c.open_id, "historyLength": True}),
        {},
        -32602,
    ),
    "list-page-zero": (lambda c: rpc("ListTasks", {"pageSize": 0}), {}, -32602),
    "list-bad-status": (lambda c: rpc("ListTasks", {"status": "DONE"}), {}, -32602),
    "list-bad-token": (lambda c: rpc("ListTasks", {"pageToken": "abc"}), {}, -32602),
    "cancel-unknown": (lambda c: rpc("CancelTask", {"id": "nope"}), {}, -32001),
    "cancel-terminal": (lambda c: rpc("CancelTask", {"id": c.done_id}), {}, -32002),
    "subscribe-unknown": (lambda c: rpc("SubscribeToTask", {"id": "nope"}), {}, -32001),
    "subscribe-terminal": (lambda c: rpc("SubscribeToTask", {"id": c.done_id}), {}, -32004),
    "bad-last-event-id": (
        lambda c: rpc("SubscribeToTask", {"id": c.open_id}),
        {"Last-Event-ID": "abc"},
        -32602,
    ),
    "text-plain": (
        lambda c: rpc("GetTask", {"id": c.open_id}),
        {"Content-Type": "text/plain"},
        -32005,
    ),
    "huge-last-event-id": (
        lambda c: rpc("SubscribeToTask", {"id": c.open_id}),
        {"Last-Event-ID": "9" * 5000},
        -32602,
    ),
    "list-token-superscript": (lambda c: rpc("ListTasks", {"pageToken": "\u00b2"}), {}, -32602),
    "list-token-huge": (lambda c: rpc("ListTasks", {"pageToken": "9" * 5000}), {}, -32602),
    "id-5000-digits": (
        lambda c: b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"GetTask"}',
        {},
        -32700,
    ),
    "version-9": (lambda c: rpc("GetTask", {"id": c.open_id}), {"A2A-Version": "9.9"}, -32009),
    "answer-terminal-task": (
        lambda c: send(
            answer(c, {"prompt_id": c.done_pid, "payload": {"approve": True}}, c.done_id)
        ),
        {},
        -32010,
    ),
    "plain-to-terminal": (lambda c: send(user_message(task_id=c.done_id)), {}, -32004),
    "answer-unknown-task": (
        lambda c: send(answer(c, {"prompt_id": c.open_pid, "payload": {}}, "nope")),
        {},
        -32001,
    ),
    "answer-no-task-id": (
        lambda c: send(
            user_message(response={"prompt_id": c.open_pid, "payload": {"approve": True}})
        ),
        {},
        -32602,
    ),
    "response-extra-member": (
        lambda c: send(
            answer(c, {"prompt_id": c.open_pid, "payload": {"approve": True}, "who": "me"})
        ),
        {},
        -32602,
    ),
    "response-non-uuid": (
        lambda c: send(answer(c, {"prompt_id": "42", "payload": {"approve": True}})),
        {},
        -32602,
    ),
    "response-payload-array": (
        lambda c: send(answer(c, {"prompt_id": c.open_pid, "payload": [True]})),
        {},
        -32602,
    ),
    "response-not-object": (lambda c: send(answer(c, "approve")), {}, -32602),
    "response-missing-payload": (lambda c: send(answer(c, {"prompt_id": c.open_pid})), {}, -32602),
    "wrong-context": (
        lambda c: send({**user_message(task_id=c.open_id), "contextId": "not-its-context"}),
        {},
        -32602,
    ),
    "answer-invalid-payload": (
        lambda c: send(answer(c, {"prompt_id": c.open_pid, "payload": {"approve": "no"}})),
        {},
        -32011,
    ),
    "answer-wrong-prompt": (
        lambda c: send(answer(c, {"prompt_id": str(uuid.uuid4()), "payload": {"approve": True}})),
        {},
        -32010,
    ),
}

RestCase = tuple[str, Callable[[Ctx], str], Callable[[Ctx], Any], dict[str, str], int, str]

REST_CASES: dict[str, RestCase] = {
    "not-json": ("POST", lambda c: "/message:send", lambda c: b"hello", {}, 400, "PARSE_ERROR"),
    "empty-body": ("POST", lambda c: "/message:send", lambda c: b"", {}, 400, "PARSE_ERROR"),
    "deeply-nested": (
        "POST",
        lambda c: "/message:send",
        lambda c: nested(5000),
        {},
        400,
        "PARSE_ERROR",
    ),
    "lone-surrogate-in-a-value": (
        "POST",
        lambda c: "/message:send",
        lambda c: escaped(
            {"message": answer(c, {"prompt_id": c.open_pid, "payload": {"approve": "@s"}})},
            s=r"\uD800",
        ),
        {},
        400,
        "PARSE_ERROR",
    ),
    "lone-surrogate-in-a-key": (
        "POST",
        lambda c: "/message:send",
        lambda c: escaped(
            {"message": answer(c, {"prompt_id": c.open_pid, "payload": {"@s": True}})}, s=r"\udc00"
        ),
        {},
        400,
        "PARSE_ERROR",
    ),
    "lone-surrogate-in-a-push-config": (
        "POST",
        lambda c: f"/tasks/{c.open_id}/pushNotificationConfigs",
        lambda c: escaped({"url": "http://127.0.0.1:9/x", "token": "@s"}, s=r"\ud83d"),
        {},
        400,
        "PARSE_ERROR",
    ),
    "array-body": (
        "POST",
        lambda c: "/message:send",
        lambda c: [user_message()],
        {},
        400,
        "INVALID_PARAMS",
    ),
    "no-message": ("POST", lambda c: "/message:send", lambda c: {}, {}, 400, "INVALID_PARAMS"),
    "no-parts": (
        "POST",
        lambda c: "/message:send",
        lambda c: {"message": user_message([])},
        {},
        400,
        "INVALID_PARAMS",
    ),
    "stream-no-parts": (
        "POST",
        lambda c: "/message:stream",
        lambda c: {"message": user_message([])},
        {},
        400,
        "INVALID_PARAMS",
    ),
    "text-plain": (
        "POST",
        lambda c: "/message:send",
        lambda c: {"message": user_message()},
        {"Content-Type": "text/plain"},
        415,
        "CONTENT_TYPE_NOT_SUPPORTED",
    ),
    "five-megabytes": (
        "POST",
        lambda c: "/message:send",
        lambda c: {"message": user_message([{"text": "x" * 5_000_000}])},
        {},
        413,
        "INVALID_REQUEST",
    ),
    "get-unknown": ("GET", lambda c: "/tasks/nope", lambda c: None, {}, 404, "TASK_NOT_FOUND"),
    "cancel-unknown": (
        "POST",
        lambda c: "/tasks/nope:cancel",
        lambda c: None,
        {},
        404,
        "TASK_NOT_FOUND",
    ),
    "cancel-terminal": (
        "POST",
        lambda c: f"/tasks/{c.done_id}:cancel",
        lambda c: None,
        {},
        400,
        "TASK_NOT_CANCELABLE",
    ),
    "subscribe-unknown": (
        "POST",
        lambda c: "/tasks/nope:subscribe",
        lambda c: None,
        {},
        404,
        "TASK_NOT_FOUND",
    ),
    "subscribe-terminal": (
        "POST",
        lambda c: f"/tasks/{c.done_id}:subscribe",
        lambda c: None,
        {},
        400,
        "UNSUPPORTED_OPERATION",
    ),
    "list-page-zero": (
        "GET",
        lambda c: "/tasks?pageSize=0",
        lambda c: None,
        {},
        400,
        "INVALID_PARAMS",
    ),
    "list-bad-status": (
        "GET",
        lambda c: "/tasks?status=DONE",
        lambda c: None,
        {},
        400,
        "INVALID_PARAMS",
    ),
    "list-bad-artifacts": (
        "GET",
        lambda c: "/tasks?includeArtifacts=maybe",
        lambda c: None,
        {},
        400,
        "INVALID_PARAMS",
    ),
    "history-negative": (
        "GET",
        lambda c: f"/tasks/{c.open_id}?historyLength=-1",
        lambda c: None,
        {},
        400,
        "INVALID_PARAMS",
    ),
    "history-superscript": (
        "GET",
        lambda c: f"/tasks/{c.open_id}?historyLength=%C2%B2",
        lambda c: None,
        {},
        400,
        "INVALID_PARAMS",
    ),
    "history-5000-digits": (
        "GET",
        lambda c: f"/tasks/{c.open_id}?historyLength={'9' * 5000}",
        lambda c: None,
        {},
        400,
        "INVALID_PARAMS",
    ),
    "list-size-superscript": (
        "GET",
        lambda c: "/tasks?pageSize=%C2%B2",
        lambda c: None,
        {},
        400,
        "INVALID_PARAMS",
    ),
    "list-token-superscript": (
        "GET",
        lambda c: "/tasks?pageToken=%C2%B2",
        lambda c: None,
        {},
        400,
        "INVALID_PARAMS",
    ),
    "list-token-huge": (
        "GET",
        lambda c: f"/tasks?pageToken={'9' * 5000}",
        lambda c: None,
        {},
        400,
        "INVALID_PARAMS",
    ),
    "huge-last-event-id": (
        "POST",
        lambda c: f"/tasks/{c.open_id}:subscribe",
        lambda c: None,
        {"Last-Event-ID": "9" * 5000},
        400,
        "INVALID_PARAMS",
    ),
    "body-5000-digit-number": (
        "POST",
        lambda c: "/message:send",
        lambda c: b'{"message":{"messageId":' + b"9" * 5000 + b"}}",
        {},
        400,
        "PARSE_ERROR",
    ),
    "unknown-route": ("GET", lambda c: "/v1/whatever", lambda c: None, {}, 404, "METHOD_NOT_FOUND"),
    "wrong-verb": ("GET", lambda c: "/message:send", lambda c: None, {}, 405, "METHOD_NOT_FOUND"),
    "push-config-no-url": (
        "POST",
        lambda c: f"/tasks/{c.open_id}/pushNotificationConfigs",
        lambda c: {},
        {},
        400,
        "INVALID_PARAMS",
    ),
    "push-config-ftp": (
        "POST",
        lambda c: f"/tasks/{c.open_id}/pushNotificationConfigs",
        lambda c: {"url": "ftp://127.0.0.1/x"},
        {},
        400,
        "INVALID_PARAMS",
    ),
    "push-config-userinfo": (
        "POST",
        lambda c: f"/tasks/{c.open_id}/pushNotificationConfigs",
        lambda c: {"url": "http://u:p@127.0.0.1:9/x"},
        {},
        400,
        "INVALID_PARAMS",
    ),
    "push-config-long-url": (
        "POST",
        lambda c: f"/tasks/{c.open_id}/pushNotificationConfigs",
        lambda c: {"url": "http://127.0.0.1:9/" + "a" * 3000},
        {},
        400,
        "INVALID_PARAMS",
    ),
    "push-config-token-newline": (
        "POST",
        lambda c: f"/tasks/{c.open_id}/pushNotificationConfigs",
        lambda c: {"url": "http://127.0.0.1:9/x", "token": "a\r\nX-Evil: 1"},
        {},
        400,
        "INVALID_PARAMS",
    ),
    "push-config-url-number": (
        "POST",
        lambda c: f"/tasks/{c.open_id}/pushNotificationConfigs",
        lambda c: {"url": 5},
        {},
        400,
        "INVALID_PARAMS",
    ),
    "push-config-other-task": (
        "POST",
        lambda c: f"/tasks/{c.open_id}/pushNotificationConfigs",
        lambda c: {"url": "http://127.0.0.1:9/x", "taskId": c.done_id},
        {},
        400,
        "INVALID_PARAMS",
    ),
    "push-config-unknown-task": (
        "POST",
        lambda c: "/tasks/nope/pushNotificationConfigs",
        lambda c: {"url": "http://127.0.0.1:9/x"},
        {},
        404,
        "TASK_NOT_FOUND",
    ),
    "push-config-get-unknown": (
        "GET",
        lambda c: f"/tasks/{c.open_id}/pushNotificationConfigs/nope",
        lambda c: None,
        {},
        404,
        "TASK_NOT_FOUND",
    ),
    "push-config-put": (
        "PUT",
        lambda c: f"/tasks/{c.open_id}/pushNotificationConfigs",
        lambda c: {},
        {},
        405,
        "METHOD_NOT_FOUND",
    ),
    "extended-card": (
        "GET",
        lambda c: "/extendedAgentCard",
        lambda c: None,
        {},
        400,
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    ),
    "version-03": (
        "GET",
        lambda c: f"/tasks/{c.open_id}",
        lambda c: None,
        {"A2A-Version": "0.3"},
        400,
        "VERSION_NOT_SUPPORTED",
    ),
    "answer-terminal-task": (
        "POST",
        lambda c: "/message:send",
        lambda c: {
            "message": answer(c, {"prompt_id": c.done_pid, "payload": {"approve": True}}, c.done_id)
        },
        {},
        409,
        "HITL_ALREADY_ANSWERED_OR_UNKNOWN",
    ),
    "response-extra-member": (
        "POST",
        lambda c: "/message:send",
        lambda c: {"message": answer(c, {"prompt_id": c.open_pid, "payload": {}, "x": 1})},
        {},
        400,
        "INVALID_PARAMS",
    ),
    "response-non-uuid": (
        "POST",
        lambda c: "/message:send",
        lambda c: {"message": answer(c, {"prompt_id": "abc", "payload": {}})},
        {},
        400,
        "INVALID_PARAMS",
    ),
    "answer-invalid-payload": (
        "POST",
        lambda c: "/message:send",
        lambda c: {"message": answer(c, {"prompt_id": c.open_pid, "payload": {}})},
        {},
        422,
        "HITL_RESPONSE_INVALID",
    ),
}


def _states(agent: MockAgent) -> dict[str, tuple[str, int]]:
    assert agent.core is not None
    return {
        t: (r.task.status.state.value, r.outbox.last_id) for t, r in agent.core.book.tasks.items()
    }


def _post(url: str, body: Any, hdrs: dict[str, str], method: str = "POST") -> httpx.Response:
    if isinstance(body, bytes) or body is None:
        content = body
    else:
        content = json.dumps(body).encode()
    base = {"Content-Type": "application/json", **H}
    return httpx.request(method, url, content=content, headers={**base, **hdrs}, timeout=20)


@pytest.mark.parametrize("name", list(RPC_CASES))
def test_jsonrpc_hostile(world: tuple[MockAgent, Ctx], name: str) -> None:
    agent, ctx = world
    build, extra, code = RPC_CASES[name]
    before = _states(agent)
    r = _post(agent.url + "/", build(ctx), extra)
    assert r.status_code == 200, r.text[:300]
    body = r.json()
    assert body["jsonrpc"] == "2.0" and "result" not in body
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert body["error"]["data"][0]["@type"].endswith("ErrorInfo")
    assert _states(agent) == before
    assert httpx.get(agent.card_url, timeout=5).status_code == 200


@pytest.mark.parametrize("name", list(REST_CASES))
def test_rest_hostile(world: tuple[MockAgent, Ctx], name: str) -> None:
    agent, ctx = world
    method, path, build, extra, status, reason = REST_CASES[name]
    before = _states(agent)
    r = _post(agent.url + path(ctx), build(ctx), extra, method)
    assert r.status_code == status, r.text[:300]
    error = r.json()["error"]
    assert error["code"] == status and error["message"]
    assert error["details"][0]["reason"] == reason
    assert _states(agent) == before
    assert httpx.get(agent.card_url, timeout=5).status_code == 200


def test_a_lone_surrogate_is_named_and_a_pair_is_read() -> None:
    with MockAgent() as agent:
        wire = Wire(agent.url)
        task = wire.start()
        pid = envelope_of(task)["prompt_id"]
        ctx = Ctx(task["id"], pid, "", "")
        lone = escaped(
            send(answer(ctx, {"prompt_id": pid, "payload": {"approve": "@s"}})), s=r"\ud800"
        )
        error = _post(agent.url + "/", lone, {}).json()["error"]
        assert error["code"] == -32700
        assert "lone UTF-16 surrogate (\\ud800) at line 1 column" in error["message"], error
        # A pair is one character (U+1F600), on both bindings; the agent keeps serving.
        pair = r"\ud83d\ude00 \uD83D\uDE00"
        r = _post(agent.url + "/", escaped(send(user_message([{"text": "@s"}])), s=pair), {})
        assert (
            r.json()["result"]["task"]["history"][0]["parts"][0]["text"] == "\U0001f600 \U0001f600"
        )
        rest = escaped({"message": user_message([{"text": "@s"}])}, s=pair)
        r = _post(agent.url + "/message:send", rest, {})
        assert (
            r.status_code == 200
            and r.json()["task"]["history"][0]["parts"][0]["text"] == "\U0001f600 \U0001f600"
        )
        wire.answer(task["id"], pid, {"approve": True})
        wire.close()


def test_corpus_is_big_enough() -> None:
    assert len(RPC_CASES) + len(REST_CASES) >= 50
    assert len(RPC_CASES) >= 50


def test_a_bug_still_answers_with_a_status_body(monkeypatch: pytest.MonkeyPatch) -> None:
    with MockAgent() as agent:
        assert agent.core is not None

        def broken(task_id: str) -> Any:
            raise RuntimeError("boom")

        monkeypatch.setattr(agent.core, "get", broken)
        r = httpx.get(agent.url + "/tasks/anything", headers=H, timeout=10)
        assert r.status_code == 500
        error = r.json()["error"]
        assert error["code"] == 500 and "RuntimeError: boom" in error["message"]
        assert error["details"][0]["reason"] == "INTERNAL"


def _raw_subscribe(port: int, task_id: str) -> socket.socket:
    body = json.dumps(rpc("SubscribeToTask", {"id": task_id})).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in H.items())
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(
        f"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{head}"
        f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    assert sock.recv(65536).startswith(b"HTTP/1.1 200")
    return sock


def test_subscribers_that_hang_up_are_forgotten_at_once() -> None:
    # A hang-up frees the listener (and coroutine and socket) at once, not at the next
    # ping, here a minute away.
    with MockAgent(ping_interval=60) as agent:
        wire = Wire(agent.url)
        task_id = wire.start()["id"]
        assert agent.core is not None
        outbox = agent.core.book.tasks[task_id].outbox
        for _ in range(50):
            _raw_subscribe(agent.port, task_id).close()
        with _raw_subscribe(agent.port, task_id):
            # only the one still connected
            until(lambda: outbox.listeners == 1, timeout=30, what="one listener", interval=0.05)
        wire.close()


def _closed_by_server(sock: socket.socket, trickle: bytes, limit: float) -> bool:
    """Send ``trickle`` a byte at a time, slowly, until the server hangs up (or ``limit``)."""
    deadline = time.monotonic() + limit
    sock.settimeout(0.2)
    for byte in trickle * 1000:
        if time.monotonic() > deadline:
            return False
        try:
            sock.sendall(bytes([byte]))
            if sock.recv(65536) == b"":
                return True
        except TimeoutError:
            continue
        except OSError:
            return True
    return False


@pytest.mark.parametrize(
    "opening, trickle",
    [
        (b"POST / HTTP/1.1\r\nHost: x\r\n", b"X-Slow: a\r\n"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n", b" "),
    ],
    ids=["headers", "body"],
)
def test_slow_clients_are_cut_off(opening: bytes, trickle: bytes) -> None:
    # read_timeout bounds a trickling client (tornado's defaults allow an hour for the
    # headers and no limit for the body).
    with MockAgent(read_timeout=0.5) as agent:
        with socket.create_connection(("127.0.0.1", agent.port), timeout=10) as sock:
            sock.sendall(opening)
            assert _closed_by_server(sock, trickle, limit=15)
        # The server still answers others. One request may meet the same 0.5 s limit on
        # a machine so loaded that the agent's loop wakes late (the timer then comes due
        # with the request's bytes and goes first), so a hang-up is tried again; a
        # server that stopped serving fails every try.
        until(
            lambda: httpx.get(agent.card_url, timeout=5).status_code == 200,
            timeout=30,
            what="the agent card from the agent that cut off the slow client",
            interval=0.2,
            ignore=httpx.RemoteProtocolError,
        )


def test_a_scenario_that_breaks_while_starting_leaves_no_task() -> None:
    # A task is registered only once its first step ran: a step that raises (an
    # OverflowError from a deadline past year 9999, here an uncopyable schema) must not
    # leave a WORKING task that never moves.
    unusable = {"type": "object", "x": threading.Lock()}
    broken = Scenario("broken", "Breaks at its first step.", steps=[Step("Q?", unusable)])
    with MockAgent(scenarios=[broken]) as agent:
        body = send(user_message([{"data": {"scenario": "broken"}}]))
        r = _post(agent.url + "/", body, {})
        assert r.json()["error"]["code"] == -32603
        assert _states(agent) == {}
        assert "result" in _post(agent.url + "/", send(user_message()), {}).json()


@pytest.mark.parametrize("seconds", [1e12, float("nan"), 0.0])
def test_step_deadlines_are_bounded(seconds: float) -> None:
    with pytest.raises(ValueError, match="deadline_seconds must be positive"):
        Step("Q?", {"type": "object"}, deadline_seconds=seconds)
    with pytest.raises(ValueError, match="deadline_seconds must be positive"):
        MockAgent(deadline_seconds=seconds)


def test_a_step_that_breaks_after_an_answer_fails_the_task() -> None:
    unusable = {"type": "object", "x": threading.Lock()}
    approve = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    two = Scenario(
        "two", "Breaks at its second step.", steps=[Step("1?", approve), Step("2?", unusable)]
    )
    with MockAgent(scenarios=[two]) as agent:
        wire = Wire(agent.url)
        task = wire.start("two")
        # A blocking send: before, it waited for a task that never left WORKING.
        response, body = wire.answer(task["id"], envelope_of(task)["prompt_id"], {"ok": True})
        assert response.status_code == 200, body
        assert body["result"]["task"]["status"]["state"] == "TASK_STATE_FAILED"
        wire.close()


def _sized(size: int, rest: bool) -> bytes:
    """A send request of exactly ``size`` bytes (its text part padded)."""
    message = user_message([{"text": ""}])
    body = json.dumps({"message": message} if rest else send(message)).encode()
    return body.replace(b'"text": ""', b'"text": "' + b"x" * (size - len(body)) + b'"')


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
def test_the_body_limit_is_one_answer_wherever_the_chunks_end(binding: str, chunked: bool) -> None:
    """Up to the limit (1 MiB) a request is read; one byte over is 413 / -32600."""
    with MockAgent(max_body=1024 * 1024) as agent:
        limit = agent.max_body
        url = agent.url + ("/message:send" if binding == "rest" else "/")
        for size in (limit - 1, limit, limit + 1):
            body = _sized(size, binding == "rest")
            assert len(body) == size
            content: Any = (
                iter([body[i : i + 65536] for i in range(0, size, 65536)]) if chunked else body
            )
            r = httpx.post(
                url, content=content, headers={**H, "Content-Type": "application/json"}, timeout=30
            )
            over = size > limit
            if binding == "rest":
                assert r.status_code == (413 if over else 200), (size, r.text[:300])
            else:
                got = r.json()
                assert ("error" in got) == over, (size, r.text[:300])
                if over:
                    assert got["error"]["code"] == -32600
                    assert f"over the limit of {limit} bytes" in got["error"]["message"]
        assert httpx.get(agent.card_url, timeout=5).status_code == 200
