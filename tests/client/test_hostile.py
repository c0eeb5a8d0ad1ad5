"""HitlClient against scripted and hostile agents (tiny servers on 127.0.0.1).

Malformed SSE, truncated JSON, a 50 MB event, wrong content types, stalls and cut
connections must give clear errors, never a hang; answers in flight must not be lost
or doubled.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import tracemalloc
import zlib
from dataclasses import replace
from typing import Any

import httpx
import pytest

from hitl_nb.client import (
    AnswerOutcomeUnknown,
    ExtensionNotDeclared,
    HitlClient,
    HttpLimits,
    PromptEvent,
    Reconnect,
    StatusEvent,
    TaskEvent,
    prompt_of,
)
from hitl_nb.errors import (
    AgentTimeout,
    AgentUnreachable,
    EventTooLarge,
    PromptConflict,
    ProtocolViolation,
    ResponseInvalid,
    TaskNotFound,
)
from hitl_nb.spec import EXTENSION_URI, PromptEnvelope
from tests.helpers import wire
from tests.helpers.scripted import rpc_agent
from tests.helpers.tiny_server import Conn, Request, serve
from tests.helpers.until import until

LIMITS = HttpLimits(timeout=5.0, connect_timeout=2.0)
QUICK = Reconnect(backoff=0.01)
FAST = {"limits": LIMITS, "reconnect": QUICK}


def limited(url: str, reconnect: Reconnect = QUICK, **limits: Any) -> HitlClient:
    """A client with FAST's settings, some of its limits replaced."""
    return HitlClient(url, limits=replace(LIMITS, **limits), reconnect=reconnect)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def rid(request: Request) -> Any:
    return request.json()["id"]


def answer(result: Any) -> Any:
    def method(request: Request, conn: Conn) -> None:
        conn.answer(wire.rpc(result, request.json()["id"]))

    return method


def test_send_sends_headers_finds_the_prompt_and_warns_once_without_echo(
    caplog: pytest.LogCaptureFixture,
) -> None:
    env = wire.envelope()
    with rpc_agent({"SendMessage": answer({"task": wire.task("t1", "input_required", env)})}) as s:

        async def go() -> Any:
            async with HitlClient(s.url, **FAST) as client:
                first = await client.send("approval")
                await client.send("again")
                return client, first

        with caplog.at_level(logging.WARNING, logger="hitl_nb.client"):
            client, result = run(go())
    sent = s.requests[-1]
    assert sent.header("A2A-Version") == "1.0"
    assert sent.header("A2A-Extensions") == EXTENSION_URI
    body = sent.json()
    assert body["method"] == "SendMessage"
    assert body["params"]["message"]["parts"] == [{"text": "again"}]
    assert body["params"]["message"]["role"] == "ROLE_USER"
    prompt = prompt_of(result)
    assert isinstance(prompt, PromptEvent) and prompt.prompt_id == env["prompt_id"]
    assert client.activation_echoed is False
    assert len([r for r in caplog.records if "did not echo" in r.message]) == 1


def test_echoed_activation_is_noted() -> None:
    def send(request: Request, conn: Conn) -> None:
        result = wire.rpc({"task": wire.task("t1", "completed")}, request.json()["id"])
        conn.answer(result, A2A_Extensions=EXTENSION_URI)

    with rpc_agent({"SendMessage": send}) as s:

        async def go() -> bool | None:
            async with HitlClient(s.url, **FAST) as client:
                await client.send({"scenario": "x"})
                return client.activation_echoed

        assert run(go()) is True
    assert s.requests[-1].json()["params"]["message"]["parts"] == [{"data": {"scenario": "x"}}]


def test_v03_agent_gets_03_methods_header_and_json() -> None:
    def send(request: Request, conn: Conn) -> None:
        params = request.json()["params"]
        assert params["message"]["kind"] == "message"
        task = {"kind": "task", "id": "t9", "contextId": "c", "status": {"state": "completed"}}
        conn.answer(wire.rpc(task, request.json()["id"]))

    with rpc_agent({"message/send": send}, card=lambda b: wire.card_v03(b + "/rpc")) as s:

        async def go() -> Any:
            async with HitlClient(s.url, **FAST) as client:
                return await client.send("hi"), client.selection

        result, selection = run(go())
    assert result.id == "t9" and selection.version == "0.3"
    assert s.requests[-1].header("X-A2A-Extensions") == EXTENSION_URI
    assert s.requests[-1].json()["params"]["configuration"] == {"blocking": True}


def test_card_without_the_extension() -> None:
    def no_ext(base: str) -> dict[str, Any]:
        return wire.card(base + "/rpc", extension=False)

    with rpc_agent({"GetTask": answer(wire.task("t", "working"))}, card=no_ext) as s:
        with pytest.raises(ExtensionNotDeclared, match="require_extension=False"):
            run(HitlClient(s.url, **FAST).connect())

        async def go() -> Any:
            async with HitlClient(s.url, require_extension=False, **FAST) as client:
                return await client.get_task("t"), client.extension_declared

        task, declared = run(go())
        assert task.id == "t" and declared is False


def _open_prompt_agent(env: dict[str, Any], on_send: Any) -> Any:
    return rpc_agent(
        {"GetTask": answer(wire.task("t1", "input_required", env)), "SendMessage": on_send}
    )


def test_respond_validates_locally_before_sending() -> None:
    env = wire.envelope()
    with _open_prompt_agent(env, answer({"task": wire.task("t1", "working")})) as s:
        with pytest.raises(ResponseInvalid) as info:
            run(HitlClient(s.url, **FAST).respond("t1", env["prompt_id"], {"approved": "yes"}))
    assert info.value.validation_errors[0]["path"] == "/approved"
    assert "nothing was sent" in str(info.value)
    assert "SendMessage" not in s.calls  # type: ignore[attr-defined]


def test_respond_sends_the_response_envelope() -> None:
    env = wire.envelope()
    with _open_prompt_agent(env, answer({"task": wire.task("t1", "working")})) as s:
        result = run(HitlClient(s.url, **FAST).respond("t1", env["prompt_id"], {"approved": True}))
    assert result.status.state.value == "working"
    message = s.requests[-1].json()["params"]["message"]
    assert message["taskId"] == "t1" and message["contextId"] == "ctx-1"
    assert message["metadata"] == {
        "hitl_response_for": {"prompt_id": env["prompt_id"], "payload": {"approved": True}}
    }
    assert s.requests[-1].json()["params"]["configuration"] == {"returnImmediately": True}


@pytest.mark.parametrize(
    "error, cls",
    [
        (wire.rpc_error(-32010, "hitl_already_answered_or_unknown"), PromptConflict),
        (
            wire.rpc_error(
                -32011,
                "hitl_response_invalid",
                {"validation_errors": [{"path": "/x", "keyword": "k", "message": "m"}]},
            ),
            ResponseInvalid,
        ),
        (wire.rpc_error(-32001, "Task not found"), TaskNotFound),
    ],
)
def test_agent_rejections_are_typed(error: dict[str, Any], cls: type[Exception]) -> None:
    env = wire.envelope()

    def reject(request: Request, conn: Conn) -> None:
        conn.answer(error)

    with _open_prompt_agent(env, reject) as s:
        with pytest.raises(cls) as info:
            run(HitlClient(s.url, **FAST).respond("t1", env["prompt_id"], {"approved": True}))
    if cls is ResponseInvalid:
        assert info.value.validation_errors == [{"path": "/x", "keyword": "k", "message": "m"}]  # type: ignore[attr-defined]


def test_answer_accepted_then_connection_cut_is_not_resent() -> None:
    env = wire.envelope()
    state = {"accepted": 0}

    def get(request: Request, conn: Conn) -> None:
        st = "working" if state["accepted"] else "input_required"
        conn.answer(
            wire.rpc(wire.task("t1", st, env if st == "input_required" else None), rid(request))
        )

    def send(request: Request, conn: Conn) -> None:
        if state["accepted"]:
            conn.answer(wire.rpc_error(-32010, "hitl_already_answered_or_unknown"))
        else:
            state["accepted"] += 1
            conn.cut()  # accepted, but the answer never reaches the client

    with rpc_agent({"GetTask": get, "SendMessage": send}) as s:
        client = HitlClient(s.url, **FAST)
        result = run(client.respond("t1", env["prompt_id"], {"approved": True}, prompt=None))
    assert result.status.state.value == "working"
    assert s.calls.count("SendMessage") == 1  # type: ignore[attr-defined]


def test_answer_lost_before_acceptance_is_resent_once() -> None:
    env = wire.envelope()
    sends: list[str] = []

    def send(request: Request, conn: Conn) -> None:
        sends.append(request.json()["params"]["message"]["messageId"])
        if len(sends) == 1:
            conn.cut()
        else:
            conn.answer(wire.rpc({"task": wire.task("t1", "working")}, rid(request)))

    with _open_prompt_agent(env, send) as s:
        result = run(HitlClient(s.url, **FAST).respond("t1", env["prompt_id"], {"approved": True}))
    assert result.status.state.value == "working"
    assert len(sends) == 2 and sends[0] == sends[1]  # same messageId: the same answer


def test_accepted_but_slow_transition_then_409_is_success() -> None:
    env = wire.envelope()
    state = {"accepted_at": 0.0}

    def get(request: Request, conn: Conn) -> None:
        moved = state["accepted_at"] and time.monotonic() - state["accepted_at"] > 0.3
        st = "working" if moved else "input_required"
        conn.answer(wire.rpc(wire.task("t1", st, None if moved else env), rid(request)))

    def send(request: Request, conn: Conn) -> None:
        if state["accepted_at"]:
            conn.answer(wire.rpc_error(-32010, "hitl_already_answered_or_unknown"))
        else:
            state["accepted_at"] = time.monotonic()
            conn.cut()

    with rpc_agent({"GetTask": get, "SendMessage": send}) as s:
        result = run(HitlClient(s.url, **FAST).respond("t1", env["prompt_id"], {"approved": True}))
    assert result.status.state.value == "working"


@pytest.mark.parametrize("ours_in_history", [False, True])
def test_answer_cut_while_the_deadline_failed_the_task(ours_in_history: bool) -> None:
    # The deadline (policy fail) closed the prompt; the answer's 409 was lost with the
    # connection. A task out of INPUT_REQUIRED is not proof of acceptance: respond()
    # must not return the failed task as if the answer had been accepted.
    env = wire.envelope()
    sent: list[dict[str, Any]] = []

    def get(request: Request, conn: Conn) -> None:
        task = wire.task("t1", "failed")
        notice = {"messageId": "m-agent", "role": "ROLE_AGENT", "parts": [{"text": "late"}]}
        task["history"] = [notice] + (sent[:1] if ours_in_history else [])
        conn.answer(wire.rpc(task, rid(request)))

    def send(request: Request, conn: Conn) -> None:
        sent.append(request.json()["params"]["message"])
        if len(sent) == 1:
            conn.cut()
        else:
            conn.answer(
                wire.rpc_error(-32010, "hitl_already_answered_or_unknown", req_id=rid(request))
            )

    with rpc_agent({"GetTask": get, "SendMessage": send}) as s:
        client = HitlClient(s.url, **FAST)
        if ours_in_history:  # accepted before the task failed: that is a success
            result = run(client.respond("t1", env["prompt_id"], {"approved": True}))
            assert result.status.state.value == "failed" and len(sent) == 1
        else:
            with pytest.raises(PromptConflict):
                run(client.respond("t1", env["prompt_id"], {"approved": True}))
            assert len(sent) == 2 and sent[0]["messageId"] == sent[1]["messageId"]


def test_outcome_unknown_when_the_agent_cannot_be_asked() -> None:
    env = wire.envelope()
    calls = {"get": 0}

    def get(request: Request, conn: Conn) -> None:
        calls["get"] += 1
        if calls["get"] == 1:
            conn.answer(wire.rpc(wire.task("t1", "input_required", env), rid(request)))
        else:
            conn.cut()

    def cut(request: Request, conn: Conn) -> None:
        conn.cut()

    with rpc_agent({"GetTask": get, "SendMessage": cut}) as s:
        client = limited(s.url, Reconnect(max_reconnects=2, backoff=0.01))
        with pytest.raises(AnswerOutcomeUnknown, match="may or may not"):
            run(client.respond("t1", env["prompt_id"], {"approved": True}))


# -- hostile answers -------------------------------------------------------------------


def _stream_agent(write: Any, **more: Any) -> Any:
    def stream(request: Request, conn: Conn) -> None:
        write(request, conn)

    return rpc_agent({"SendStreamingMessage": stream, **more})


async def _collect(client: HitlClient, content: Any = "go") -> list[Any]:
    async with client:
        return [event async for event in client.stream(content)]


def test_malformed_sse_data_is_a_protocol_violation() -> None:
    def write(request: Request, conn: Conn) -> None:
        conn.head(content_type="text/event-stream")
        conn.send(b"data: {not json\n\n")

    with _stream_agent(write) as s, pytest.raises(ProtocolViolation, match="not JSON"):
        run(_collect(HitlClient(s.url, **FAST)))


def test_truncated_json_answer() -> None:
    def send(request: Request, conn: Conn) -> None:
        conn.answer(b'{"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "t"')

    with rpc_agent({"SendMessage": send}) as s, pytest.raises(ProtocolViolation, match="bad JSON"):
        run(HitlClient(s.url, **FAST).send("x"))


@pytest.mark.parametrize(
    "content_type, body",
    [("text/html", b"<html>oops</html>"), ("text/plain", b"hello"), ("", b"{}")],
)
def test_wrong_content_types(content_type: str, body: bytes) -> None:
    def send(request: Request, conn: Conn) -> None:
        conn.answer(body, content_type=content_type)

    with rpc_agent({"SendMessage": send, "SendStreamingMessage": send}) as s:
        with pytest.raises(ProtocolViolation, match="expected a JSON answer"):
            run(HitlClient(s.url, **FAST).send("x"))
        with pytest.raises(ProtocolViolation, match="expected a JSON answer"):
            run(_collect(HitlClient(s.url, **FAST)))


def test_a_50_mb_event_is_refused_early() -> None:
    sent = {"bytes": 0}

    def write(request: Request, conn: Conn) -> None:
        conn.head(content_type="text/event-stream")
        conn.send(b'data: {"result": "')
        chunk = b"x" * (1 << 20)
        for _ in range(50):
            if not conn.send(chunk):
                return
            sent["bytes"] += len(chunk)

    with _stream_agent(write) as s, pytest.raises(EventTooLarge, match="too large"):
        run(_collect(limited(s.url, max_event_size=256 * 1024)))
    assert sent["bytes"] < 50 << 20


def test_numbers_of_thousands_of_digits_are_protocol_violations() -> None:
    # json.loads raises ValueError (not JSONDecodeError) past 4300 digits.
    huge = b"9" * 5000

    def send(request: Request, conn: Conn) -> None:
        conn.answer(b'{"jsonrpc": "2.0", "id": ' + huge + b', "result": {}}')

    def write(request: Request, conn: Conn) -> None:
        conn.head(content_type="text/event-stream")
        conn.send(b'data: {"jsonrpc": "2.0", "id": ' + huge + b', "result": {}}\n\n')

    with _stream_agent(write, SendMessage=send) as s:
        with pytest.raises(ProtocolViolation, match="bad JSON"):
            run(HitlClient(s.url, **FAST).send("x"))
        with pytest.raises(ProtocolViolation, match="not JSON"):
            run(_collect(HitlClient(s.url, **FAST)))


@pytest.mark.parametrize(
    "text",
    [
        rb'{"jsonrpc": "2.0", "id": 1, "result": {"\ud800": 1}}',
        rb'{"jsonrpc": "2.0", "id": 1, "result": {"message": "\uDFFF"}}',
    ],
    ids=["key", "value-upper-case"],
)
def test_a_lone_surrogate_in_an_answer_or_event_is_a_protocol_violation(text: bytes) -> None:
    def send(request: Request, conn: Conn) -> None:
        conn.answer(text)

    def write(request: Request, conn: Conn) -> None:
        conn.head(content_type="text/event-stream")
        conn.send(b"data: " + text + b"\n\n")

    with _stream_agent(write, SendMessage=send) as s:
        with pytest.raises(ProtocolViolation, match="bad JSON: the JSON text holds a lone UTF-16"):
            run(HitlClient(s.url, **FAST).send("x"))
        with pytest.raises(ProtocolViolation, match="not JSON: the JSON text holds a lone UTF-16"):
            run(_collect(HitlClient(s.url, **FAST)))


def _compress(chunks: Any, wbits: int) -> bytes:
    co = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return b"".join(co.compress(c) for c in chunks) + co.flush()


def _bomb(prefix: bytes, megabytes: int) -> bytes:
    """``prefix`` then ``megabytes`` MiB of zeros, gzipped (about 1 KiB per MiB)."""
    zeros = b"0" * (1 << 20)
    return _compress([prefix, *([zeros] * megabytes)], 16 + zlib.MAX_WBITS)


def test_gzip_bomb_event_is_refused_within_a_step_of_the_limit() -> None:
    bomb = _bomb(b"data: ", 64)

    def write(request: Request, conn: Conn) -> None:
        conn.head(content_type="text/event-stream", Content_Encoding="gzip")
        conn.send(bomb)

    with _stream_agent(write) as s, pytest.raises(EventTooLarge) as caught:
        run(_collect(limited(s.url, max_event_size=256 * 1024)))
    # Inflated 64 KiB at a time: one network read inflated whole would be 64 MiB here.
    assert caught.value.size < 1 << 20


def test_gzip_bomb_answer_never_sits_whole_in_memory() -> None:
    bomb = _bomb(b'{"jsonrpc": "2.0", "id": 1, "result": "', 64)

    def send(request: Request, conn: Conn) -> None:
        conn.answer(bomb, Content_Encoding="gzip")

    with rpc_agent({"SendMessage": send}) as s:
        tracemalloc.start()
        try:
            with pytest.raises(ProtocolViolation, match="max_body_size"):
                run(limited(s.url, max_body_size=1 << 20).send("x"))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 32 << 20  # one network read inflated whole would be over 64 MiB


@pytest.mark.parametrize(
    "encoding, wbits",
    [
        ("gzip", 16 + zlib.MAX_WBITS),
        ("deflate", zlib.MAX_WBITS),
        ("deflate", -zlib.MAX_WBITS),
    ],
)
def test_compressed_answers_are_read(encoding: str, wbits: int) -> None:
    seen: list[str | None] = []

    def get(request: Request, conn: Conn) -> None:
        seen.append(request.header("accept-encoding"))
        body = json.dumps(wire.rpc(wire.task("t", "working"), rid(request))).encode()
        conn.answer(_compress([body[:10], body[10:]], wbits), Content_Encoding=encoding)

    with rpc_agent({"GetTask": get}) as s:
        task = run(HitlClient(s.url, **FAST).get_task("t"))
    assert task.id == "t" and seen == ["gzip, deflate"]


@pytest.mark.parametrize(
    "encoding, body",
    [
        ("br", b"\x0b\x02\x80{}\x03"),
        ("gzip", b"not gzip at all"),
        ("gzip, gzip", b"{}"),
    ],
)
def test_unasked_or_broken_encodings_are_protocol_violations(encoding: str, body: bytes) -> None:
    def get(request: Request, conn: Conn) -> None:
        conn.answer(body, Content_Encoding=encoding)

    with (
        rpc_agent({"GetTask": get}) as s,
        pytest.raises(ProtocolViolation, match=r"(?i)encod|gzip"),
    ):
        run(HitlClient(s.url, **FAST).get_task("t"))


def test_redirects_are_never_followed_even_by_a_following_client() -> None:
    def target(request: Request, conn: Conn) -> None:
        conn.answer(wire.card(f"http://{request.header('host')}/rpc"))

    def client(url: str) -> HitlClient:
        return HitlClient(url, httpx_client=httpx.AsyncClient(follow_redirects=True), **FAST)

    with serve(target) as elsewhere:

        def moved(request: Request, conn: Conn) -> None:
            conn.answer(b"", status=307, Location=elsewhere.url + request.path)

        with serve(moved) as card_moved, pytest.raises(ProtocolViolation, match="redirects"):
            run(client(card_moved.url).connect())
        with rpc_agent({"GetTask": moved, "SendStreamingMessage": moved}) as s:
            with pytest.raises(ProtocolViolation, match=r"redirects \(HTTP 307\)"):
                run(client(s.url).get_task("t"))
            with pytest.raises(ProtocolViolation, match="redirects"):
                run(_collect(client(s.url)))
        assert elsewhere.requests == []


def test_a_redirect_carrying_a_json_rpc_result_is_refused() -> None:
    # A redirect is never an answer, even one whose body holds {"result": ...}.
    def get(request: Request, conn: Conn) -> None:
        body = wire.rpc(wire.task("t", "working"), rid(request))
        conn.answer(body, status=307, Location="http://192.0.2.1/rpc")

    with rpc_agent({"GetTask": get}) as s, pytest.raises(ProtocolViolation, match="redirects"):
        run(HitlClient(s.url, **FAST).get_task("t"))


def test_a_non_ascii_event_id_is_sent_back_as_utf8() -> None:
    # Last-Event-ID goes back as UTF-8 (httpx alone would raise UnicodeEncodeError).
    seen: list[str | None] = []

    def stream(request: Request, conn: Conn) -> None:
        conn.head(content_type="text/event-stream")
        conn.send(
            wire.sse(wire.rpc({"task": wire.task("t", "working")}, rid(request)), ids=["caf\u00e9"])
        )
        conn.cut()

    def subscribe(request: Request, conn: Conn) -> None:
        seen.append(request.header("last-event-id"))
        conn.head(content_type="text/event-stream")
        conn.send(
            wire.sse(wire.rpc({"task": wire.task("t", "completed")}, rid(request)), ids=["2"])
        )

    with rpc_agent({"SendStreamingMessage": stream, "SubscribeToTask": subscribe}) as s:
        events = run(_collect(HitlClient(s.url, **FAST)))
    assert [e.task.status.state.value for e in events] == ["working", "completed"]
    assert seen == ["caf\u00e9".encode().decode("latin-1")]  # the server reads latin-1


def test_answer_for_another_request_id() -> None:
    def other_id(request: Request, conn: Conn) -> None:
        conn.answer(wire.rpc(wire.task("t", "working"), "someone-else"))

    with rpc_agent({"GetTask": other_id}) as s:
        with pytest.raises(ProtocolViolation, match="request id"):
            run(HitlClient(s.url, **FAST).get_task("t"))


def test_an_endless_json_answer_is_cut_at_max_body_size() -> None:
    def endless(request: Request, conn: Conn) -> None:
        conn.head()
        conn.send(b'{"jsonrpc": "2.0", "result": "')
        while conn.send(b"x" * 65536) and not conn.stopped.is_set():
            pass

    with rpc_agent({"SendMessage": endless}) as s:
        with pytest.raises(ProtocolViolation, match="max_body_size"):
            run(limited(s.url, max_body_size=1 << 20).send("x"))


def test_a_stalling_agent_times_out() -> None:
    def stall(request: Request, conn: Conn) -> None:
        conn.stopped.wait(20)

    with rpc_agent({"SendMessage": stall}) as s:
        start = time.monotonic()
        with pytest.raises(AgentTimeout, match="timed out"):
            run(HitlClient(s.url, limits=HttpLimits(timeout=0.3, connect_timeout=1)).send("x"))
        assert time.monotonic() - start < 5


def test_a_silent_stream_times_out_after_bounded_reconnects() -> None:
    def write(request: Request, conn: Conn) -> None:
        conn.head(content_type="text/event-stream")
        conn.send(
            wire.sse({"jsonrpc": "2.0", "id": 1, "result": wire.status_update("t1", "working")})
        )
        conn.stopped.wait(20)

    with _stream_agent(write, SubscribeToTask=write) as s:
        client = limited(s.url, Reconnect(max_reconnects=2, backoff=0.01), stream_idle_timeout=0.2)
        with pytest.raises(AgentTimeout, match="gave up after 2 reconnect"):
            run(_collect(client))
    assert s.calls.count("SubscribeToTask") == 2  # type: ignore[attr-defined]


def test_refused_stream_as_json_error() -> None:
    def refuse(request: Request, conn: Conn) -> None:
        conn.answer(wire.rpc_error(-32001, "Task not found"))

    with _stream_agent(refuse) as s, pytest.raises(TaskNotFound):
        run(_collect(HitlClient(s.url, **FAST)))


def test_error_event_inside_a_stream() -> None:
    def write(request: Request, conn: Conn) -> None:
        conn.head(content_type="text/event-stream")
        conn.send(wire.sse(wire.rpc_error(-32010, "hitl_already_answered_or_unknown")))

    with _stream_agent(write) as s, pytest.raises(PromptConflict):
        run(_collect(HitlClient(s.url, **FAST)))


# -- streams that survive disconnects ---------------------------------------------------


def _events(env: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"jsonrpc": "2.0", "id": 1, "result": {"task": wire.task("t1", "submitted")}},
        {"jsonrpc": "2.0", "id": 1, "result": wire.status_update("t1", "working")},
        {"jsonrpc": "2.0", "id": 1, "result": wire.status_update("t1", "input_required", env)},
    ]


@pytest.mark.parametrize("honours_last_event_id", [True, False])
def test_cut_mid_stream_resumes_with_last_event_id(honours_last_event_id: bool) -> None:
    env = wire.envelope()
    events = _events(env)
    ids = ["1", "2", "3"]
    seen_last: list[str | None] = []

    def first(request: Request, conn: Conn) -> None:
        conn.head(content_type="text/event-stream")
        conn.send(wire.sse(*events[:2], ids=ids[:2], crlf=True) + b'data: {"half')
        conn.cut()

    def resume(request: Request, conn: Conn) -> None:
        last = request.header("Last-Event-ID")
        seen_last.append(last)
        start = ids.index(last) + 1 if honours_last_event_id and last else 0
        conn.head(content_type="text/event-stream")
        conn.send(wire.sse(*events[start:], ids=ids[start:]))

    with _stream_agent(first, SubscribeToTask=resume) as s:
        got = run(_collect(HitlClient(s.url, **FAST)))
    assert seen_last == ["2"]
    assert [type(e).__name__ for e in got] == [
        "TaskEvent",
        "StatusEvent",
        "StatusEvent",
        "PromptEvent",
    ]
    assert [e.event_id for e in got] == ["1", "2", "3", "3"]


def test_stream_stops_at_the_prompt_and_subscribe_starts_from_the_snapshot() -> None:
    env = wire.envelope()
    events = _events(env)
    count = {"subscribe": 0}

    def first(request: Request, conn: Conn) -> None:
        conn.head(content_type="text/event-stream")
        conn.send(wire.sse(*events))
        conn.cut()  # the client stopped reading at input-required: no reconnect

    def subscribe(request: Request, conn: Conn) -> None:
        count["subscribe"] += 1
        conn.head(content_type="text/event-stream")
        conn.send(
            wire.sse(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "result": {"task": wire.task("t1", "input_required", env)},
                }
            )
        )

    with _stream_agent(first, SubscribeToTask=subscribe) as s:
        got = run(_collect(HitlClient(s.url, **FAST)))
        assert [type(e) for e in got][-1] is PromptEvent and count["subscribe"] == 0

        async def go() -> list[Any]:
            async with HitlClient(s.url, **FAST) as client:
                return [e async for e in client.subscribe("t1")]

        again = run(go())
    assert [type(e) for e in again] == [TaskEvent, PromptEvent]


def test_cut_before_the_prompt_without_ids() -> None:
    env = wire.envelope()
    events = _events(env)

    def first(request: Request, conn: Conn) -> None:
        conn.head(content_type="text/event-stream")
        conn.send(wire.sse(*events[:2]))
        conn.cut()

    def subscribe(request: Request, conn: Conn) -> None:
        snapshot = {"jsonrpc": "2.0", "id": 1, "result": {"task": wire.task("t1", "working")}}
        conn.head(content_type="text/event-stream")
        conn.send(wire.sse(snapshot, events[2]))

    with _stream_agent(first, SubscribeToTask=subscribe) as s:
        got = run(_collect(HitlClient(s.url, **FAST)))
    kinds = [type(e).__name__ for e in got]
    # the snapshot repeats the "working" status already delivered: not handed out again
    assert kinds == ["TaskEvent", "StatusEvent", "StatusEvent", "PromptEvent"]
    assert isinstance(got[2], StatusEvent) and got[2].state.value == "input_required"


def test_closing_the_iterator_closes_the_connection() -> None:
    noticed: dict[str, float] = {}

    def write(request: Request, conn: Conn) -> None:
        conn.head(content_type="text/event-stream")
        first = {"jsonrpc": "2.0", "id": 1, "result": wire.status_update("t1", "working")}
        conn.send(wire.sse(first))
        # A live stream: keep-alives every 20 ms until the client hangs up.
        while not conn.stopped.wait(0.02):
            if not conn.send(b": ping\n\n"):
                noticed["at"] = time.monotonic()
                return

    async def go() -> float:
        async with HitlClient(s.url, **FAST) as client:
            events = client.stream("go")
            async for _ in events:
                break
            await events.aclose()
            return time.monotonic()

    with _stream_agent(write) as s:
        closed_at = run(go())
        noticed_at = until(lambda: noticed.get("at"), timeout=30, what="the server to notice")
    assert noticed_at - closed_at < 2


def test_drop_before_any_task_id_is_unreachable() -> None:
    def write(request: Request, conn: Conn) -> None:
        conn.head(content_type="text/event-stream")
        conn.cut()

    with _stream_agent(write) as s, pytest.raises(AgentUnreachable, match="before the agent named"):
        run(_collect(HitlClient(s.url, **FAST)))


def test_card_found_at_the_origin_for_an_endpoint_url() -> None:
    with rpc_agent({"GetTask": answer(wire.task("t", "working"))}) as s:

        async def go() -> str:
            async with HitlClient(s.url + "/rpc", **FAST) as client:
                return (await client.get_task("t")).id

        assert run(go()) == "t"

    def not_found(request: Request, conn: Conn) -> None:
        conn.answer({"error": "not here"}, 404)

    with serve(not_found) as s, pytest.raises(ProtocolViolation, match="no agent card at"):
        run(HitlClient(s.url + "/rpc", **FAST).connect())
    assert [r.path for r in s.requests] == [
        "/rpc/.well-known/agent-card.json",
        "/.well-known/agent-card.json",
    ]


def test_unreachable_agent() -> None:
    with pytest.raises(AgentUnreachable, match="cannot connect"):
        run(HitlClient("http://127.0.0.1:9", **FAST).connect())


def test_rest_errors_end_to_end() -> None:
    issues = [{"path": "/approved", "keyword": "type", "message": "expected boolean"}]
    env = wire.envelope()

    def get_task(request: Request, conn: Conn) -> None:
        if request.path.startswith("/tasks/gone"):
            info = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND"}
            conn.answer({"error": {"code": 404, "message": "gone", "details": [info]}}, 404)
        else:
            conn.answer(wire.task("t1", "input_required", env), content_type="application/a2a+json")

    def send(request: Request, conn: Conn) -> None:
        body = {
            "error": {
                "code": 422,
                "message": "hitl_response_invalid",
                "details": [{"validation_errors": issues}],
            }
        }
        conn.answer(body, 422)

    rest = {
        ("GET", "/tasks/gone"): get_task,
        ("GET", "/tasks/t1"): get_task,
        ("POST", "/message:send"): send,
    }
    with rpc_agent({}, card=lambda b: wire.card(b, binding="HTTP+JSON"), rest=rest) as s:

        async def go() -> None:
            async with HitlClient(s.url, **FAST) as client:
                with pytest.raises(TaskNotFound, match="gone"):
                    await client.get_task("gone")
                lax = PromptEnvelope(env["prompt_id"], "x", {"type": "object"})
                with pytest.raises(ResponseInvalid) as info:
                    await client.respond("t1", env["prompt_id"], {"approved": 1}, prompt=lax)
                assert info.value.validation_errors == issues
                assert (await client.get_task("t1")).status.state.value == "input_required"

        run(go())
    assert "POST /message:send" in s.calls  # type: ignore[attr-defined]
