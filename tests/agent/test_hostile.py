"""Hostile answers against both agents hitl_nb.agent serves, on JSON-RPC (1.0 and 0.3)
and HTTP+JSON: the right status and code, and nothing reaches the agent's code (the
executor's answers, the graph's node after ``interrupt()``); the task keeps waiting on
the same prompt."""

# The corpus keeps one case per line, however long.
# ruff: noqa: E501

from __future__ import annotations

import concurrent.futures
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from hitl_nb._wire_errors import VALIDATION_DETAIL_TYPE
from hitl_nb.agent._asgi import MAX_BODY_BYTES
from hitl_nb.spec import EXTENSION_URI, RESPONSE_KEY
from tests.helpers.ask_agent import AskAgent
from tests.helpers.graph_agent import GraphAgent
from tests.helpers.mock_agent_client import headers

VALID = {"approved": True}


@dataclass
class World:
    """One agent with two tasks waiting on prompts, and how to tell what reached it."""

    url: str
    reached: Callable[[], int]
    task: dict[str, Any]
    other: dict[str, Any]

    @property
    def prompt_id(self) -> str:
        return str(self.task["prompt_id"])


def _start(http: httpx.Client, url: str) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": _message("v9")},
    }
    task = http.post(url + "/", json=body, headers=headers()).json()["result"]["task"]
    env = task["status"]["message"]["metadata"][EXTENSION_URI]
    return {"id": task["id"], "context": task["contextId"], "prompt_id": env["prompt_id"]}


def _message(text: str = "answer", **extra: Any) -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}], **extra}


@pytest.fixture(scope="module", params=["ask", "graph"])
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    agent: Any = AskAgent() if request.param == "ask" else GraphAgent()
    with agent, httpx.Client(timeout=30) as http:
        if request.param == "ask":

            def reached() -> int:
                return len(agent.executor.answers)

        else:

            def reached() -> int:
                return int(agent.calls["review answered"])

        yield World(agent.url, reached, _start(http, agent.url), _start(http, agent.url))


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": value}
    return value


# A case: the hitl_response_for (or a whole message, for the last ones), and the
# (JSON-RPC code, HTTP status) expected. ``w`` is the World.
Case = tuple[Callable[[World], dict[str, Any]], int, int]


def answer(
    w: World, response: Any, task: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    target = task or w.task
    return _message(
        taskId=target["id"], contextId=target["context"], metadata={RESPONSE_KEY: response}, **extra
    )


CASES: dict[str, Case] = {
    "wrong-type": (
        lambda w: answer(w, {"prompt_id": w.prompt_id, "payload": {"approved": "yes"}}),
        -32011,
        422,
    ),
    "missing-required": (
        lambda w: answer(w, {"prompt_id": w.prompt_id, "payload": {}}),
        -32011,
        422,
    ),
    "unknown-member": (
        lambda w: answer(
            w, {"prompt_id": w.prompt_id, "payload": {"approved": True, "admin": True}}
        ),
        -32011,
        422,
    ),
    "huge-payload": (
        lambda w: answer(
            w, {"prompt_id": w.prompt_id, "payload": {"approved": True, "comment": "x" * 2_000_000}}
        ),
        -32011,
        422,
    ),
    "deep-payload": (
        lambda w: answer(
            w, {"prompt_id": w.prompt_id, "payload": {"approved": True, "comment": nested(40)}}
        ),
        -32011,
        422,
    ),
    "too-deep-json": (
        lambda w: answer(
            w, {"prompt_id": w.prompt_id, "payload": {"approved": True, "comment": nested(100)}}
        ),
        -32700,
        400,
    ),
    "unknown-prompt": (
        lambda w: answer(w, {"prompt_id": str(uuid.uuid4()), "payload": VALID}),
        -32010,
        409,
    ),
    "other-tasks-prompt": (
        lambda w: answer(w, {"prompt_id": w.other["prompt_id"], "payload": VALID}),
        -32010,
        409,
    ),
    "non-uuid-prompt": (lambda w: answer(w, {"prompt_id": "42", "payload": VALID}), -32602, 400),
    "extra-member": (
        lambda w: answer(w, {"prompt_id": w.prompt_id, "payload": VALID, "who": "me"}),
        -32602,
        400,
    ),
    "payload-array": (
        lambda w: answer(w, {"prompt_id": w.prompt_id, "payload": [True]}),
        -32602,
        400,
    ),
    "response-not-object": (lambda w: answer(w, "approve"), -32602, 400),
    "no-task-id": (
        lambda w: _message(metadata={RESPONSE_KEY: {"prompt_id": w.prompt_id, "payload": VALID}}),
        -32602,
        400,
    ),
    "unknown-task": (
        lambda w: answer(
            w, {"prompt_id": w.prompt_id, "payload": VALID}, {"id": "nope", "context": "nope"}
        ),
        -32001,
        404,
    ),
    "data-part-invalid": (
        lambda w: _message(taskId=w.task["id"], parts=[{"data": {"approved": 3}}]),
        -32011,
        422,
    ),
}


def _send(
    w: World, binding: str, message: dict[str, Any], **marks: str
) -> tuple[int, dict[str, Any]]:
    """Send ``message`` on ``binding``; each ``"@name"`` string in it (key or value)
    goes on the wire as the escape text ``marks`` gives (a lone surrogate, say)."""
    with httpx.Client(timeout=30) as http:
        if binding == "rest":
            url, body, version = w.url + "/rest/message:send", {"message": message}, "1.0"
        elif binding == "jsonrpc-0.3":
            msg = {**message, "kind": "message", "role": "user"}
            msg["parts"] = [
                {"kind": "data", **p} if "data" in p else {"kind": "text", **p}
                for p in msg["parts"]
            ]
            body = {"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {"message": msg}}
            url, version = w.url + "/", "0.3"
        else:
            body = {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "SendMessage",
                "params": {"message": message},
            }
            url, version = w.url + "/", "1.0"
        text = json.dumps(body)
        for name, escape in marks.items():
            text = text.replace(f'"@{name}"', f'"{escape}"')
        hdrs = {**headers(version), "Content-Type": "application/json"}
        r = http.post(url, content=text.encode(), headers=hdrs)
        return r.status_code, r.json()


def _still_waiting(w: World) -> None:
    with httpx.Client(timeout=30) as http:
        body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": w.task["id"]}}
        task = http.post(w.url + "/", json=body, headers=headers()).json()["result"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert task["status"]["message"]["metadata"][EXTENSION_URI]["prompt_id"] == w.prompt_id


@pytest.mark.parametrize("binding", ["jsonrpc", "jsonrpc-0.3", "rest"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_hostile_answer_is_refused_and_reaches_nothing(
    world: World, binding: str, name: str
) -> None:
    build, code, status = CASES[name]
    before = world.reached()
    got_status, body = _send(world, binding, build(world))
    if binding == "rest":
        assert got_status == status, body
        error = body["error"]
        assert error["code"] == status
    else:
        error = body["error"]
        assert error["code"] == code, body
        hitl = code in (-32010, -32011)
        assert got_status == (status if binding == "jsonrpc-0.3" and hitl else 200)
    if code == -32011:
        errors = _validation_errors(error, binding)
        assert errors and all({"path", "keyword", "message"} <= set(e) for e in errors), error
    assert world.reached() == before
    _still_waiting(world)


def _validation_errors(error: dict[str, Any], binding: str) -> list[dict[str, Any]]:
    if binding == "jsonrpc-0.3":
        return list(error["data"]["validation_errors"])
    details = error["details"] if binding == "rest" else error["data"]
    (found,) = [d for d in details if d.get("@type") == VALIDATION_DETAIL_TYPE]
    return list(found["validation_errors"])


@pytest.mark.parametrize("binding", ["jsonrpc", "jsonrpc-0.3", "rest"])
@pytest.mark.parametrize(
    ("payload", "escape"),
    [
        pytest.param({"approved": "@s"}, r"\ud800", id="value"),
        pytest.param({"approved": "@s"}, r"x\uDFFF", id="value-upper-case"),
        pytest.param({"approved": True, "@s": 1}, r"\udc00", id="key"),
        pytest.param({"approved": True, "@s": 1}, r"\uD83D", id="key-upper-case"),
        pytest.param({"approved": True, "c": [{"d": "@s"}]}, r"\ud83d\ud83d", id="nested"),
    ],
)
def test_a_lone_surrogate_in_an_answer_is_a_parse_error(
    world: World, binding: str, payload: dict[str, Any], escape: str
) -> None:
    """It was HTTP 500 (``payload_bounds`` met an UnicodeEncodeError) and a dropped
    connection; now the answer for any JSON the reader refuses, the agent serving on."""
    before = world.reached()
    message = answer(world, {"prompt_id": world.prompt_id, "payload": payload})
    status, body = _send(world, binding, message, s=escape)
    error = body["error"]
    if binding == "rest":
        assert (status, error["code"], error["status"]) == (400, 400, "INVALID_ARGUMENT"), body
    else:
        assert (status, error["code"]) == (200, -32700), body
    assert "lone UTF-16 surrogate" in error["message"], error
    assert world.reached() == before
    _still_waiting(world)


@pytest.mark.parametrize("binding", ["jsonrpc", "jsonrpc-0.3", "rest"])
def test_a_surrogate_pair_in_an_answer_is_read_as_one_character(world: World, binding: str) -> None:
    """The pair reaches the validator (which refuses the answer for its other member)."""
    before = world.reached()
    payload = {"approved": "yes", "@s": True}
    message = answer(world, {"prompt_id": world.prompt_id, "payload": payload})
    status, body = _send(world, binding, message, s=r"\ud83d\ude00\uD83D\uDE00")
    issues = _validation_errors(body["error"], binding)
    assert sorted(i["path"] for i in issues) == ["/approved", "/\U0001f600\U0001f600"], issues
    assert world.reached() == before
    _still_waiting(world)


def test_what_a_huge_or_deep_payload_is_told(world: World) -> None:
    _, body = _send(world, "jsonrpc", CASES["huge-payload"][0](world))
    assert [e["keyword"] for e in _validation_errors(body["error"], "jsonrpc")] == ["size"]
    _, body = _send(world, "jsonrpc", CASES["deep-payload"][0](world))
    assert [e["keyword"] for e in _validation_errors(body["error"], "jsonrpc")] == ["depth"]
    _, body = _send(world, "jsonrpc", CASES["too-deep-json"][0](world))
    assert "nested deeper" in body["error"]["message"]


def test_an_answer_over_the_body_limit_is_413(world: World) -> None:
    message = answer(world, {"prompt_id": world.prompt_id, "payload": {"comment": "x" * 5_000_000}})
    before = world.reached()
    with httpx.Client(timeout=30) as http:
        r = http.post(
            world.url + "/rest/message:send", json={"message": message}, headers=headers()
        )
        assert r.status_code == 413 and r.json()["error"]["code"] == 413
        body = {"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": {"message": message}}
        r = http.post(world.url + "/", json=body, headers=headers())
        assert r.json()["error"]["code"] == -32600
    assert world.reached() == before
    _still_waiting(world)


def test_an_answer_is_413_when_its_key_lies_past_the_limit(world: World) -> None:
    """A long text part before the metadata: the answer's key comes after the first
    4 MiB. (It used to reach the executor as a plain message, the answer ignored.)"""
    message = answer(world, {"prompt_id": world.prompt_id, "payload": VALID})
    message["parts"] = [{"text": "x" * 5_000_000}]
    body = {"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": {"message": message}}
    assert json.dumps(body).index(RESPONSE_KEY) > MAX_BODY_BYTES
    before = world.reached()
    with httpx.Client(timeout=60) as http:
        r = http.post(world.url + "/", json=body, headers=headers())
        assert r.json()["error"]["code"] == -32600, r.text[:300]
        r = http.post(
            world.url + "/rest/message:send", json={"message": message}, headers=headers()
        )
        assert r.status_code == 413 and r.json()["error"]["code"] == 413
    assert world.reached() == before
    _still_waiting(world)


def _answer_of_size(w: World, binding: str, size: int) -> bytes:
    """An answer's request body of exactly ``size`` bytes (its comment padded)."""
    message = answer(w, {"prompt_id": w.prompt_id, "payload": {"approved": True, "comment": ""}})
    if binding == "rest":
        body: Any = {"message": message}
    else:
        body = {"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": {"message": message}}
    text = json.dumps(body).encode()
    return text.replace(b'"comment": ""', b'"comment": "' + b"x" * (size - len(text)) + b'"')


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
def test_the_body_limit_is_one_answer_wherever_the_chunks_end(
    world: World, binding: str, chunked: bool
) -> None:
    """Up to 4 MiB an answer is read (its payload, over 1 MiB, is refused as too large:
    422); one byte over is 413 / -32600, however its chunks fall. (Just over used to be
    400 / -32700 when the last chunk took the body over the limit.)"""
    limit = MAX_BODY_BYTES
    before = world.reached()
    url = world.url + ("/rest/message:send" if binding == "rest" else "/")
    with httpx.Client(timeout=60) as http:
        for size in (limit - 1, limit, limit + 1):
            body = _answer_of_size(world, binding, size)
            assert len(body) == size
            # 64 KiB chunks: 4 MiB is 64 of them, and one byte over comes in a last chunk.
            content: Any = (
                iter([body[i : i + 65536] for i in range(0, size, 65536)]) if chunked else body
            )
            r = http.post(
                url, content=content, headers={**headers(), "Content-Type": "application/json"}
            )
            over = size > limit
            if binding == "rest":
                assert r.status_code == (413 if over else 422), (size, r.text[:300])
                assert r.json()["error"]["code"] == r.status_code
            else:
                error = r.json()["error"]
                assert error["code"] == (-32600 if over else -32011), (size, error)
                if over:
                    assert error["message"] == f"an answer over {limit} bytes"
    assert world.reached() == before
    _still_waiting(world)


def test_duplicate_keys_in_an_answer_are_a_parse_error(world: World) -> None:
    raw = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {"message": answer(world, {"prompt_id": world.prompt_id, "payload": VALID})},
        }
    ).replace('"approved": true', '"approved": true, "approved": false')
    with httpx.Client(timeout=30) as http:
        r = http.post(
            world.url + "/", content=raw, headers={**headers(), "Content-Type": "application/json"}
        )
    assert r.json()["error"]["code"] == -32700 and "duplicate" in r.json()["error"]["message"]
    _still_waiting(world)


@pytest.mark.parametrize(
    "configuration",
    [{"historyLength": -5}, {"historyLength": "many"}, {"historyLength": True}],
    ids=["negative", "text", "bool"],
)
def test_a_streamed_answer_with_a_bad_configuration_is_the_sdks_error(
    world: World, configuration: Any
) -> None:
    """The middleware reads ``historyLength`` to open the stream with the Task; what it
    cannot use is the SDK's to refuse, and the answer held for it is let go."""
    before = world.reached()
    message = answer(world, {"prompt_id": world.prompt_id, "payload": VALID})
    params = {"message": message, "configuration": configuration}
    body = {"jsonrpc": "2.0", "id": 5, "method": "SendStreamingMessage", "params": params}
    with httpx.Client(timeout=30) as http:
        r = http.post(world.url + "/", json=body, headers=headers())
    text = r.text
    assert r.status_code == 200 and '"error"' in text and "TASK_STATE_WORKING" not in text
    assert world.reached() == before
    _still_waiting(world)
    plain = answer(world, {"prompt_id": world.prompt_id, "payload": {"approved": "yes"}})
    body = {
        "jsonrpc": "2.0",
        "id": 6,
        "method": "SendStreamingMessage",
        "params": {"message": plain},
    }
    with httpx.Client(timeout=30) as http:
        refused = http.post(world.url + "/", json=body, headers=headers()).json()
    assert refused["error"]["code"] == -32011  # a streamed answer is checked first too
    assert world.reached() == before


def test_of_racing_answers_one_is_accepted_then_a_replay_is_409(world: World) -> None:
    """Last in the module: it answers the other task's prompt."""
    target = world.other
    before = world.reached()

    def one(_: int) -> tuple[int, dict[str, Any]]:
        message = answer(world, {"prompt_id": target["prompt_id"], "payload": VALID}, target)
        return _send(world, "jsonrpc", message)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(one, range(16)))
    accepted = [b for _, b in outcomes if "result" in b]
    refused = [b["error"]["code"] for _, b in outcomes if "error" in b]
    assert len(accepted) == 1 and refused == [-32010] * 15
    assert world.reached() == before + 1
    for binding in ("jsonrpc", "jsonrpc-0.3", "rest"):
        message = answer(world, {"prompt_id": target["prompt_id"], "payload": VALID}, target)
        status, body = _send(world, binding, message)
        assert (status, body["error"]["code"]) in ((200, -32010), (409, -32010), (409, 409))
    assert world.reached() == before + 1
