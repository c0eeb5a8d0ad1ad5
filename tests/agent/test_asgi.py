"""The middleware on the wire: the card's entry whole, the echo, no envelope without
activation (JSON and server-sent events, both bindings), bodies too large to read, a
stream on an existing task opened with the Task."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any

import httpx
import pytest

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
    assert again.headers["cache-control"] == "max-age=300"  # as its 200 (RFC 9110 §15.4.5)


def test_the_card_says_how_long_to_keep_it_and_when_it_changed(ask_agent: AskAgent) -> None:
    url = ask_agent.url + "/.well-known/agent-card.json"
    first = httpx.get(url, timeout=30)
    assert first.headers["cache-control"] == "max-age=300"  # A2A 1.0 §8.6.1, SHOULD
    modified = first.headers["last-modified"]
    stamp = parsedate_to_datetime(modified)
    assert stamp.tzinfo is not None and stamp <= datetime.now(timezone.utc)

    def get(**sent: str) -> httpx.Response:
        return httpx.get(url, headers=sent, timeout=30)

    current = get(**{"If-Modified-Since": modified})
    assert current.status_code == 304 and current.content == b""
    assert current.headers["etag"] == first.headers["etag"]
    assert current.headers["last-modified"] == modified
    assert "content-type" not in current.headers
    stale = get(
        **{"If-Modified-Since": format_datetime(stamp - timedelta(seconds=10), usegmt=True)}
    )
    assert stale.status_code == 200 and stale.json() == first.json()
    assert stale.headers["last-modified"] == modified  # the same text: the same time
    assert get(**{"If-Modified-Since": "yesterday"}).status_code == 200  # unreadable: ignored
    # If-None-Match decides when both are sent (RFC 9110 §13.1.3): a tag not current
    assert get(**{"If-None-Match": '"other"', "If-Modified-Since": modified}).status_code == 200
    assert get(**{"If-Modified-Since": "x" * 10_000}).status_code == 200


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


def _events(response: httpx.Response) -> list[Any]:
    return [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]


def _waiting_task(url: str) -> tuple[str, str, str]:
    """A new task waiting on its prompt: (task id, context id, prompt_id)."""
    task = _send(url, activated=True).json()["result"]["task"]
    envelope = task["status"]["message"]["metadata"][EXTENSION_URI]
    return task["id"], task["contextId"], envelope["prompt_id"]


def _stream(url: str, dialect: str, message: dict[str, Any], **options: Any) -> list[Any]:
    """A streamed send in ``dialect`` ("1.0", "rest", "0.3"): each event's payload."""
    activated = options.pop("activated", True)
    params = {"message": message, **options}
    if dialect == "rest":
        r = httpx.post(
            url + "/rest/message:stream",
            json=params,
            headers=headers(activated=activated),
            timeout=30,
        )
        return _events(r)
    method = "SendStreamingMessage" if dialect == "1.0" else "message/stream"
    body = {"jsonrpc": "2.0", "id": 9, "method": method, "params": params}
    r = httpx.post(url + "/", json=body, headers=headers(dialect, activated=activated), timeout=30)
    events = _events(r)
    assert all(e["id"] == 9 for e in events)
    return [e["result"] for e in events]


def _answer(task_id: str, context_id: str, prompt_id: str, dialect: str) -> dict[str, Any]:
    payload = {"approved": True}
    message = _message(
        "yes",
        taskId=task_id,
        contextId=context_id,
        metadata={"hitl_response_for": {"prompt_id": prompt_id, "payload": payload}},
    )
    if dialect == "0.3":
        message.update(role="user", kind="message", parts=[{"kind": "text", "text": "yes"}])
    return message


@pytest.mark.parametrize("dialect", ["1.0", "rest", "0.3"])
def test_an_answers_stream_begins_with_the_task(ask_agent: AskAgent, dialect: str) -> None:
    """A2A 1.0 §3.1.2: "the stream MUST begin with the Task object", on an existing task
    too; the SDK would open it with the executor's WORKING update."""
    task_id, context_id, prompt_id = _waiting_task(ask_agent.url)
    answer = _answer(task_id, context_id, prompt_id, dialect)
    first, *rest = _stream(ask_agent.url, dialect, answer)
    task = first if dialect == "0.3" else first["task"]
    assert task["id"] == task_id and task.get("kind", "task") == "task"
    working = "working" if dialect == "0.3" else "TASK_STATE_WORKING"
    assert task["status"]["state"] == working  # the update it stands for: nothing lost
    # The SDK kept the answer in the history (enqueueing a Task would have dropped it).
    assert task["history"][-1]["messageId"] == answer["messageId"]
    if dialect == "0.3":
        assert [e["kind"] for e in rest] == ["status-update"]
        assert rest[-1]["status"]["state"] == "completed"
    else:
        assert [list(e) for e in rest] == [["statusUpdate"]]
        assert rest[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    stored = httpx.get(f"{ask_agent.url}/rest/tasks/{task_id}", headers=headers(), timeout=30)
    assert answer["messageId"] in [m["messageId"] for m in stored.json()["history"]]


def test_a_new_tasks_stream_is_left_as_the_sdk_sends_it(ask_agent: AskAgent) -> None:
    first, *rest = _stream(ask_agent.url, "1.0", _message("go"))
    assert first["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert [list(e) for e in rest] == [["statusUpdate"], ["statusUpdate"]]


def test_a_message_that_answers_nothing_streams_the_task_then_the_prompt_again(
    ask_agent: AskAgent,
) -> None:
    task_id, context_id, prompt_id = _waiting_task(ask_agent.url)
    said = _message("what is this?", taskId=task_id, contextId=context_id)
    first, *rest = _stream(ask_agent.url, "1.0", said, activated=False)
    assert first["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert first["task"]["history"][-1]["messageId"] == said["messageId"]
    assert EXTENSION_URI not in json.dumps([first, *rest])  # not activated: no envelope
    activated = _stream(ask_agent.url, "1.0", {**said, "messageId": str(uuid.uuid4())})
    envelope = activated[0]["task"]["status"]["message"]["metadata"][EXTENSION_URI]
    assert envelope["prompt_id"] == prompt_id  # the same prompt, still open


def test_the_opening_task_keeps_the_history_length_asked_for(ask_agent: AskAgent) -> None:
    task_id, context_id, prompt_id = _waiting_task(ask_agent.url)
    answer = _answer(task_id, context_id, prompt_id, "1.0")
    first, *_ = _stream(ask_agent.url, "1.0", answer, configuration={"historyLength": 1})
    assert [m["messageId"] for m in first["task"]["history"]] == [answer["messageId"]]


class _NoGate:
    """A gate that holds nothing (the middleware's reading is what is tested)."""

    book = None

    async def check(self, message: Any, reader: Any) -> None:
        return None


def _drive(body: bytes, cuts: list[int], limit: int) -> tuple[list[Any], bytes | None]:
    """``body`` through the middleware (``max_body=limit``) in chunks ending at ``cuts``:
    what it sent back, and the body the app read whole (None: the app was not called)."""
    import asyncio

    from hitl_nb.agent._asgi import HitlMiddleware

    ends = [*cuts, len(body)]
    chunks = [body[a:b] for a, b in zip([0, *ends], ends, strict=False)]
    queue = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]
    seen: list[bytes | None] = [None]
    sent: list[Any] = []

    async def receive() -> dict[str, Any]:
        return queue.pop(0) if queue else {"type": "http.disconnect"}

    async def app(scope: Any, receive: Any, send: Any) -> None:
        parts = []
        while True:
            message = await receive()
            parts.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        seen[0] = b"".join(parts)
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/rest/message:send", "headers": []}
    middleware = HitlMiddleware(app, gate=_NoGate(), reader=lambda s: None, max_body=limit)  # type: ignore[arg-type]
    asyncio.run(middleware(scope, receive, send))
    return sent, seen[0]


def _sized(size: int, key: str = "hitl_response_for") -> bytes:
    head = b'{"message":{"messageId":"m","role":"ROLE_USER","taskId":"t","parts":[{"text":"'
    tail = b'"}],"metadata":{"' + key.encode() + b'":{}}}}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


@pytest.mark.parametrize(
    "cuts",
    [[], [500], [1000], [1001], list(range(100, 1001, 100))],
    ids=["one-chunk", "cut-mid", "cut-at-the-limit", "cut-past-the-limit", "many-small"],
)
def test_an_answer_over_the_limit_is_413_wherever_its_chunks_end(cuts: list[int]) -> None:
    for size in (999, 1000, 1001, 1100):
        body = _sized(size)
        cuts_in = [c for c in cuts if c < size]
        sent, seen = _drive(body, cuts_in, 1000)
        status = sent[0]["status"]
        if size > 1000:
            assert (status, seen) == (413, None), size
            assert json.loads(sent[1]["body"])["error"]["message"] == "an answer over 1000 bytes"
        else:
            assert (status, seen) == (204, body), size  # read, checked, handed on whole


def test_a_body_over_the_limit_that_is_no_answer_reaches_the_app_whole() -> None:
    body = _sized(1001, key="other")
    for cuts in ([], [1000], [500]):
        sent, seen = _drive(body, cuts, 1000)
        assert (sent[0]["status"], seen) == (204, body)
