"""The wire trace: what it records, that it changes nothing, its bounds and exports;
event hooks and transports that read bodies; the raw JSON on every event."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from hitl_nb import _display
from hitl_nb.client import (
    HitlClient,
    PromptEvent,
    StatusEvent,
    SyncHitlClient,
    TaskEvent,
    Trace,
    prompt_of,
)
from hitl_nb.errors import AgentUnreachable, ResponseInvalid
from hitl_nb.mock_agent import MockAgent
from hitl_nb.spec import EXTENSION_URI

HAR_SCHEMA_FILE = Path(__file__).parents[1] / "helpers" / "har-1.2.schema.json"


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


def _round_trip(client: SyncHitlClient) -> list[Any]:
    events = list(client.stream({"scenario": "approval"}))
    prompt = next(e for e in events if isinstance(e, PromptEvent))
    with pytest.raises(ResponseInvalid):
        client.respond(prompt.task_id, prompt.prompt_id, {"approve": "yes"}, validate=False)
    done = client.respond(prompt.task_id, prompt.prompt_id, {"approve": True}, wait=True)
    return [*events, done]


def _shape(items: list[Any]) -> list[Any]:
    out = []
    for item in items:
        if isinstance(item, (TaskEvent, StatusEvent)):
            out.append((type(item).__name__, item.state, item.event_id))
        elif isinstance(item, PromptEvent):
            out.append(("prompt", item.prompt, sorted(item.response_schema)))
        else:
            out.append(type(item).__name__)
    return out


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_every_exchange_is_recorded_and_nothing_changes(agent: MockAgent, binding: str) -> None:
    with SyncHitlClient(agent.url, binding=binding) as plain:
        assert plain.trace is None
        untraced = _shape(_round_trip(plain))
    with SyncHitlClient(agent.url, binding=binding, trace=True) as client:
        traced = _shape(_round_trip(client))
        trace = client.trace
    assert traced == untraced  # the client sees exactly the same with the trace on
    assert trace is not None
    whats = [ex.what for ex in trace]
    assert whats[0] == "agent card" and "SendStreamingMessage" in whats
    card = trace[0]
    assert card.method == "GET" and card.status == 200 and card.response_json["name"]
    stream = next(ex for ex in trace if ex.what == "SendStreamingMessage")
    assert stream.header("A2A-Version", "request") == "1.0"
    assert stream.header("A2A-Extensions", "request") == EXTENSION_URI
    assert stream.header("A2A-Extensions", "response") == EXTENSION_URI
    assert stream.streamed and [e.event_id for e in stream.events] == ["1", "2", "3"]
    assert stream.request_json is not None and stream.wait_ms is not None
    assert stream.duration_ms is not None and stream.duration_ms >= stream.wait_ms
    rejected = [ex for ex in trace if ex.hitl_error]
    assert [ex.hitl_error for ex in rejected] == ["422 hitl_response_invalid"]
    assert rejected[0].failed
    if binding == "HTTP+JSON":
        assert rejected[0].status == 422
    else:
        assert rejected[0].response_json["error"]["code"] == -32011
    assert not trace[-1].failed and trace[-1].status == 200


def test_every_event_carries_the_json_it_was_decoded_from(agent: MockAgent) -> None:
    with SyncHitlClient(agent.url, trace=True) as client:
        events = list(client.stream({"scenario": "approval"}))
        stream = client.trace[-1] if client.trace else None
    assert stream is not None and events
    by_id = {e.event_id: e.data["result"] for e in stream.events}
    for event in events:
        assert event.wire_json is not None, event
        assert event.wire_json == by_id[event.event_id]
    prompt = next(e for e in events if isinstance(e, PromptEvent))
    update = prompt.wire_json["statusUpdate"]  # A2A 1.0 StreamResponse
    assert update["status"]["message"]["metadata"][EXTENSION_URI]["prompt_id"] == prompt.prompt_id


def test_bodies_and_events_over_the_limit_are_cut_in_the_trace_only(agent: MockAgent) -> None:
    trace = Trace(max_body_bytes=300, max_events=2)
    with SyncHitlClient(agent.url, trace=trace) as client:
        events = list(client.stream({"scenario": "form-tour"}))
    assert client.card is not None and len(client.card.skills) >= 7  # the client read it all
    assert any(isinstance(e, PromptEvent) for e in events)
    card = trace[0]
    assert isinstance(card.response_json, str) and len(card.response_json) <= 300
    assert card.response_size is not None and card.response_size > 300
    assert any("only the first 300 kept" in note for note in card.notes)
    stream = trace[-1]
    assert len(stream.events) == 2 and stream.events_dropped == 1
    assert any(e.truncated for e in stream.events)
    assert any("only the first 2 events" in note for note in stream.notes)


def test_the_trace_is_bounded_in_exchanges(agent: MockAgent) -> None:
    trace = Trace(max_exchanges=3)
    with SyncHitlClient(agent.url, trace=trace) as client:
        task = client.send("approval")
        for _ in range(4):
            client.get_task(task.id)
    assert len(trace) == 3 and trace.dropped == 3
    assert [ex.number for ex in trace] == [4, 5, 6]
    assert "(3 older exchange(s) dropped)" in trace.to_text()
    trace.clear()
    assert len(trace) == 0 and trace.to_text() == "(no exchanges recorded)"
    assert bool(trace)  # empty, and still "tracing is on"
    with pytest.raises(ValueError, match="max_events must be a positive integer"):
        Trace(max_events=0)
    with pytest.raises(TypeError, match="trace must be True, False or a Trace"):
        HitlClient(agent.url, trace="yes")  # type: ignore[arg-type]


def test_credentials_never_enter_the_trace(agent: MockAgent) -> None:
    with SyncHitlClient(agent.url, trace=True, headers={"Authorization": "Bearer s3cret"}) as c:
        c.send("approval")
        text = json.dumps(c.trace.to_json() if c.trace else {})
        har = json.dumps(c.trace.to_har() if c.trace else {})
    assert "s3cret" not in text and "s3cret" not in har
    assert "[redacted]" in text


def test_an_unreachable_agent_is_an_exchange_with_an_error() -> None:
    trace = Trace()
    with pytest.raises(AgentUnreachable):
        SyncHitlClient("http://127.0.0.1:9", trace=trace).connect()
    assert trace[0].status is None and "AgentUnreachable" in (trace[0].error or "")
    assert trace[0].failed
    entry = trace.to_har()["log"]["entries"][0]
    assert entry["response"]["status"] == 0 and "AgentUnreachable" in entry["_error"]


def test_text_json_and_stable_output(agent: MockAgent, tmp_path: Path) -> None:
    with SyncHitlClient(agent.url, trace=True) as client:
        client.send("approval")
        trace = client.trace
    assert trace is not None
    text = trace.to_text()
    assert "#2 POST / (SendMessage) 200" in text and " ms" in text
    assert "  > A2A-Version: 1.0" in text and '"jsonrpc": "2.0"' in text
    try:
        _display.set_stable_output(True)
        assert " ms" not in trace.to_text()
    finally:
        _display.set_stable_output(None)
    trace.write_json(tmp_path / "trace.json")
    data = json.loads((tmp_path / "trace.json").read_text("utf-8"))
    assert data["format"] == "hitl-nb trace" and len(data["exchanges"]) == 2
    assert data["exchanges"][1]["response"]["json"]["result"]["task"]["status"]


def test_har_is_valid_har_1_2(agent: MockAgent, tmp_path: Path) -> None:
    with SyncHitlClient(agent.url, binding="HTTP+JSON", trace=True) as client:
        _round_trip(client)
        trace = client.trace
    assert trace is not None
    trace.write_har(tmp_path / "wire.har")
    har = json.loads((tmp_path / "wire.har").read_text("utf-8"))
    schema = json.loads(HAR_SCHEMA_FILE.read_text("utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.validate(har, schema)
    entries = har["log"]["entries"]
    assert len(entries) == len(trace)
    stream = next(e for e in entries if e["request"]["url"].endswith("/message:stream"))
    assert stream["response"]["content"]["mimeType"].startswith("text/event-stream")
    assert stream["response"]["content"]["text"].startswith("id: 1\ndata: {")
    assert [e["id"] for e in stream["_events"]] == ["1", "2", "3"]
    rejected = next(e for e in entries if e["response"]["status"] == 422)
    assert rejected["_hitlError"] == "422 hitl_response_invalid"
    body = json.loads(rejected["request"]["postData"]["text"])
    assert body["message"]["metadata"]["hitl_response_for"]["payload"] == {"approve": "yes"}


# --- hooks and transports that read bodies ---------------------------------------------


class _ReadingTransport(httpx.AsyncBaseTransport):
    """A custom transport that reads every answer and hands back a new Response with
    the content already in memory (what test doubles and caching transports do)."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.seen = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        content = await response.aread()
        await response.aclose()
        self.seen += 1
        headers = [
            (k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"
        ]
        return httpx.Response(response.status_code, headers=headers, content=content)

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_event_hooks_that_read_bodies_and_custom_transports_do_not_break_it(
    agent: MockAgent,
) -> None:
    read: list[int] = []

    async def hook(response: httpx.Response) -> None:
        read.append(len(await response.aread()))  # the body is consumed here

    async def main() -> tuple[list[Any], list[Any]]:
        hooked = httpx.AsyncClient(event_hooks={"response": [hook]})
        async with HitlClient(agent.url, httpx_client=hooked, trace=True) as client:
            with_hook = [e async for e in client.stream({"scenario": "approval"})]
            prompt = next(e for e in with_hook if isinstance(e, PromptEvent))
            await client.respond(prompt.task_id, prompt.prompt_id, {"approve": True})
        await hooked.aclose()
        transport = _ReadingTransport()
        custom = httpx.AsyncClient(transport=transport)
        async with HitlClient(agent.url, httpx_client=custom) as client:
            with_transport = [e async for e in client.stream({"scenario": "approval"})]
        await custom.aclose()
        assert transport.seen >= 2
        return with_hook, with_transport

    with_hook, with_transport = asyncio.run(main())
    assert read and all(size > 0 for size in read)
    for events in (with_hook, with_transport):
        assert any(isinstance(e, PromptEvent) for e in events)


def test_the_sync_client_takes_an_httpx_client(agent: MockAgent) -> None:
    read: list[int] = []

    async def hook(response: httpx.Response) -> None:
        read.append(len(await response.aread()))

    injected = httpx.AsyncClient(event_hooks={"response": [hook]})
    with SyncHitlClient(agent.url, httpx_client=injected, trace=True) as client:
        task = client.send("approval")
        prompt = prompt_of(task)
        assert isinstance(prompt, PromptEvent)
        client.respond(task.id, prompt.prompt_id, {"approve": True})
        assert client.client._http_client is injected
    # Closed with the client: its connections lived on the client's private loop.
    assert read and injected.is_closed
    with pytest.raises(TypeError, match="httpx_client must be an httpx.AsyncClient"):
        SyncHitlClient(agent.url, httpx_client=httpx.Client())  # type: ignore[arg-type]


def test_a_hook_that_consumes_without_keeping_is_a_clear_error(agent: MockAgent) -> None:
    async def hook(response: httpx.Response) -> None:
        async for _ in response.aiter_raw():  # consumed, not kept
            pass

    async def main() -> None:
        hooked = httpx.AsyncClient(event_hooks={"response": [hook]})
        try:
            async with HitlClient(agent.url, httpx_client=hooked):
                pass
        finally:
            await hooked.aclose()

    with pytest.raises(Exception, match="consumed before the client could read it"):
        asyncio.run(main())


def test_the_trace_is_bounded_in_bytes() -> None:
    trace = Trace(max_total_bytes=1200, max_body_bytes=400)
    body = json.dumps({"x": "y" * 280}).encode()  # about 290 bytes kept each
    for _ in range(5):
        ex = trace.begin("POST", "http://127.0.0.1:1/", "SendMessage", [], body)
        trace.answered(ex, 200, [])
        trace.body(ex, body)
    assert len(trace) == 2 and trace.dropped == 3  # 2 x 2 bodies of ~290 bytes fit in 1200
    assert trace[-1].response_json == {"x": "y" * 280}
    stream = trace.begin("POST", "http://127.0.0.1:1/", "SendStreamingMessage", [], b"")
    for i in range(10):
        trace.event(stream, str(i), json.dumps({"n": "z" * 300}))
    assert trace[-1] is stream and len(trace) == 1  # older exchanges made room first
    assert len(stream.events) == 3 and stream.events_dropped == 7
    assert any("budget of 1200 bytes is spent" in note for note in stream.notes)
    with pytest.raises(ValueError, match="max_total_bytes must be a positive integer"):
        Trace(max_total_bytes=0)
