"""The harness against scripted, misbehaving agents: clear verdicts, never a hang."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from hitl_nb.conformance import Settings, run
from tests.helpers import wire
from tests.helpers.scripted import rpc_agent
from tests.helpers.tiny_server import Conn, Request, serve

QUICK = Settings(trials=1, drive_timeout=1.0, request_timeout=2.0, transition_timeout=0.3)


def _stream(*events: dict[str, object], hang: bool = False) -> Callable[[Request, Conn], None]:
    def handle(request: Request, conn: Conn) -> None:
        rid = request.json()["id"]
        conn.head(200, "text/event-stream")
        conn.send(wire.sse(*(wire.rpc(e, rid) for e in events), ids=None))
        if hang:
            conn.stopped.wait(10)

    return handle


def test_an_envelope_with_ui_members_fails_cf5_and_ext_strict() -> None:
    envelope = wire.envelope(display={"widget": "modal"}, notify_channel="slack")
    ask = _stream(
        {"task": wire.task("t-1", "working")}, wire.status_update("t-1", "input_required", envelope)
    )
    with rpc_agent({"SendStreamingMessage": ask}) as agent:
        report = run(agent.url, only=["CF-5", "EXT-STRICT"], settings=QUICK)
    cf5 = report["CF-5"]
    assert cf5.outcome == "failed", report.to_text()
    assert "only the envelope's transport members" in cf5.message
    assert "display" in cf5.message and "notify_channel" in cf5.message
    assert "unknown member 'display'" in report["EXT-STRICT"].message


def test_an_agent_that_never_asks_fails_the_drive_step_in_time() -> None:
    busy = _stream({"task": wire.task("t-1", "working")}, hang=True)
    with rpc_agent({"SendStreamingMessage": busy}) as agent:
        t0 = time.monotonic()
        report = run(agent.url, only=["CF-2"], settings=QUICK)
    assert time.monotonic() - t0 < 8
    result = report["CF-2"]
    assert result.outcome == "failed"
    assert "step 1" in result.message
    assert "no INPUT_REQUIRED with an envelope within 1 s" in result.message


def test_an_agent_that_finishes_at_once_fails_with_its_state() -> None:
    done = _stream({"task": wire.task("t-1", "completed")})
    with rpc_agent({"SendStreamingMessage": done}) as agent:
        report = run(agent.url, only=["CF-1"], settings=QUICK)
    assert report["CF-1"].outcome == "failed"
    assert "the stream ended without a prompt envelope (last state: completed)" in (
        report["CF-1"].message
    )


def test_garbage_answers_are_errors_that_say_what_came_back() -> None:
    def html(request: Request, conn: Conn) -> None:
        conn.answer(b"<html>oops</html>", 500, "text/html")

    with rpc_agent({"SendStreamingMessage": html}) as agent:
        report = run(agent.url, only=["CF-1"], settings=QUICK)
    result = report["CF-1"]
    assert result.outcome == "error"
    assert "ProtocolViolation" in result.message and "text/html" in result.message


@pytest.mark.parametrize(
    ("body", "ctype", "text"),
    [
        (b"<html>not a card</html>", "text/html", "is not JSON"),
        (b"[1, 2]", "application/json", "not a JSON object"),
    ],
)
def test_a_bad_card_errors_every_check(body: bytes, ctype: str, text: str) -> None:
    def handle(request: Request, conn: Conn) -> None:
        conn.answer(body, 200, ctype)

    with serve(handle) as server:
        report = run(server.url, only=["CF-1", "EXT-CARD"], settings=QUICK)
    assert [r.outcome for r in report.results] == ["error", "error"]
    assert text in report["EXT-CARD"].message


def test_a_silent_agent_times_out() -> None:
    def silent(request: Request, conn: Conn) -> None:
        conn.stopped.wait(10)

    with serve(silent) as server:
        t0 = time.monotonic()
        report = run(server.url, only=["EXT-CARD"], settings=QUICK)
    assert time.monotonic() - t0 < 8
    assert "AgentTimeout" in report["EXT-CARD"].message


def test_cf6_really_closes_the_live_stream() -> None:
    envelope = wire.envelope()
    closed = threading.Event()
    last_ids: list[str | None] = []
    prompt = wire.status_update("t-1", "input_required", envelope)

    def subscribe(request: Request, conn: Conn) -> None:
        rid = request.json()["id"]
        last_ids.append(request.header("last-event-id"))
        conn.head(200, "text/event-stream")
        if request.header("last-event-id") == "2":  # the replay asked for
            conn.send(wire.sse(wire.rpc(prompt, rid), ids=["3"]))
            return
        conn.send(wire.sse(wire.rpc({"task": wire.task("t-1", "input_required", envelope)}, rid)))
        while not conn.stopped.wait(0.05):  # a live stream: keep-alives until cut
            if not conn.send(b": ping\n\n"):
                closed.set()
                return

    methods = {
        "SendStreamingMessage": _ids_stream(
            {"task": wire.task("t-1", "submitted")}, wire.status_update("t-1", "working"), prompt
        ),
        "SubscribeToTask": subscribe,
        "SendMessage": lambda r, c: c.answer(
            wire.rpc({"task": wire.task("t-1", "completed")}, r.json()["id"])
        ),
        "GetTask": lambda r, c: c.answer(wire.rpc(wire.task("t-1", "completed"), r.json()["id"])),
    }
    with rpc_agent(methods) as agent:
        report = run(agent.url, only=["CF-6"], settings=QUICK)
        assert closed.wait(3), "the harness left the live stream open"
    assert report.passed, report.to_text()
    assert last_ids == [None, "2"]
    assert "cut the SubscribeToTask connection after its first event" in report["CF-6"].notes


def _ids_stream(*events: dict[str, object]) -> Callable[[Request, Conn], None]:
    def handle(request: Request, conn: Conn) -> None:
        rid = request.json()["id"]
        conn.head(200, "text/event-stream")
        ids = [str(i) for i in range(1, len(events) + 1)]
        conn.send(wire.sse(*(wire.rpc(e, rid) for e in events), ids=ids))

    return handle


def test_an_agent_that_takes_any_prompt_id_fails_ext_unknown_id() -> None:
    prompt = wire.status_update("t-1", "input_required", wire.envelope())
    methods = {
        "SendStreamingMessage": _ids_stream({"task": wire.task("t-1", "submitted")}, prompt),
        "SendMessage": lambda r, c: c.answer(
            wire.rpc({"task": wire.task("t-1", "completed")}, r.json()["id"])
        ),
    }
    with rpc_agent(methods) as agent:
        report = run(agent.url, only=["EXT-UNKNOWN-ID"], settings=QUICK)
    result = report["EXT-UNKNOWN-ID"]
    assert result.outcome == "failed"
    assert result.message.startswith("step 3: expected a rejection: JSON-RPC error -32010")
    assert "seen accepted (HTTP 200, success (task completed))" in result.message


def test_a_right_code_with_another_message_passes_with_a_warning() -> None:
    env = wire.envelope()
    prompt = wire.status_update("t-1", "input_required", env)
    methods = {
        "SendStreamingMessage": _ids_stream({"task": wire.task("t-1", "submitted")}, prompt),
        "SendMessage": lambda r, c: c.answer(
            wire.rpc_error(-32010, "no such prompt here", req_id=r.json()["id"])
        ),
        "GetTask": lambda r, c: c.answer(
            wire.rpc(wire.task("t-1", "input_required", env), r.json()["id"])
        ),
    }
    with rpc_agent(methods) as agent:
        report = run(agent.url, only=["EXT-UNKNOWN-ID"], settings=QUICK)
    result = report["EXT-UNKNOWN-ID"]
    assert result.passed, report.to_text()
    assert result.warnings == [
        "the JSON-RPC error message is 'no such prompt here'; the spec's mapping names "
        "'hitl_already_answered_or_unknown' (the code -32010 is right)"
    ]
    assert "    warning: the JSON-RPC error message is 'no such prompt here'" in report.to_text()
    assert report.to_json()["results"][0]["warnings"] == result.warnings


def test_a_card_that_is_a_gzip_bomb_is_refused_without_inflating_it() -> None:
    import gzip

    bomb = gzip.compress(b"{" + b" " * (64 * 1024 * 1024) + b"}")  # 64 MiB of JSON, ~65 KB

    def handle(request: Request, conn: Conn) -> None:
        conn.answer(bomb, content_encoding="gzip")

    with serve(handle) as agent:
        report = run(agent.url, only=["CF-1"], settings=QUICK)
    result = report["CF-1"]
    assert result.outcome == "error"
    assert "over 1048576 bytes" in (result.error or ""), result.error


def test_a_non_ascii_event_id_goes_back_in_last_event_id() -> None:
    from hitl_nb.conformance._wire import RawSubscription

    seen: list[bytes] = []

    def handle(request: Request, conn: Conn) -> None:
        seen.append((request.header("last-event-id") or "").encode("latin-1"))
        conn.head(200, "text/event-stream")

    async def subscribe(url: str) -> None:
        import httpx

        from hitl_nb.a2a import CODEC_V1

        async with httpx.AsyncClient() as http:
            sub = RawSubscription(
                http,
                url=url,
                binding="JSONRPC",
                version="1.0",
                codec=CODEC_V1,
                headers={},
                task_id="t-1",
                last_event_id="café-7",
            )
            await sub.open()
            await sub.cut()

    import asyncio

    with serve(handle) as agent:
        asyncio.run(subscribe(agent.url))
    assert seen == ["café-7".encode()]  # UTF-8 on the wire, never a UnicodeEncodeError
