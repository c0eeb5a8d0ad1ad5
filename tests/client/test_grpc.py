"""HitlClient over gRPC (A2A 1.0 §10) against a2a-sdk's own gRPC server.

The plain agent is the SDK's ``GrpcHandler`` on a ``DefaultRequestHandler`` with an
executor that asks one question (tests/helpers/sdk_agent.py's, no hitl-nb on the agent's
side): the basics (stream, send, get, cancel, subscribe, the activation metadata). The
extension's rejections and hostile answers come from small servicers of the test's own.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import grpc
import grpc.aio
import pytest
from a2a.types import a2a_pb2, a2a_pb2_grpc

from hitl_nb import _wire_errors
from hitl_nb.a2a import TaskState, to_proto
from hitl_nb.client import (
    HitlClient,
    HttpLimits,
    PromptEvent,
    StatusEvent,
    SyncHitlClient,
    TaskEvent,
)
from hitl_nb.client._agent_card import choose_interface, parse_agent_card
from hitl_nb.client._errors import from_grpc_status
from hitl_nb.client._grpc import grpc_target
from hitl_nb.errors import (
    A2AError,
    AgentTimeout,
    AgentUnreachable,
    InternalError,
    PromptConflict,
    ProtocolViolation,
    ResponseInvalid,
    TaskNotCancelable,
    TaskNotFound,
)
from hitl_nb.spec import EXTENSION_URI
from tests.helpers.grpc_agent import GrpcAgent, grpc_card
from tests.helpers.sdk_agent import HitlExecutor, Prompts

ISSUES = [{"path": "/approved", "keyword": "type", "message": "expected boolean, got integer"}]


class Seen(grpc.aio.ServerInterceptor):
    """Keeps the metadata of every call (what the client sent)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, str]]] = []

    async def intercept_service(self, continuation: Any, details: Any) -> Any:
        meta = {k: v for k, v in details.invocation_metadata or () if isinstance(v, str)}
        self.calls.append((details.method, meta))
        return await continuation(details)


@pytest.fixture(scope="module")
def seen() -> Seen:
    return Seen()


@pytest.fixture(scope="module")
def agent(seen: Seen) -> Iterator[GrpcAgent]:
    with GrpcAgent(HitlExecutor(Prompts()), interceptors=[seen]) as running:
        yield running


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_round_trip_over_grpc(agent: GrpcAgent, seen: Seen) -> None:
    async def go() -> None:
        async with HitlClient(grpc_card(agent.url), trace=True) as client:
            assert client.selection is not None and client.selection.binding == "GRPC"
            events = [e async for e in client.stream("release")]
            assert [type(e) for e in events] == [TaskEvent, StatusEvent, PromptEvent]
            prompt = events[-1]
            assert isinstance(prompt, PromptEvent)
            assert prompt.prompt.endswith("<script>alert(1)</script>")
            # Struct numbers arrive as doubles; the schema is settled back to integers.
            assert prompt.envelope.response_schema["properties"]["copies"]["maximum"] == 3
            assert isinstance(
                prompt.envelope.response_schema["properties"]["copies"]["maximum"], int
            )
            task = await client.get_task(prompt.task_id)
            assert task.status.state is TaskState.INPUT_REQUIRED
            with pytest.raises(ResponseInvalid):  # checked locally, nothing sent
                await client.respond(prompt.task_id, prompt.prompt_id, {"approved": 1})
            done = await client.respond(
                prompt.task_id, prompt.prompt_id, {"approved": True}, wait=True
            )
            assert done.status.state is TaskState.COMPLETED  # type: ignore[union-attr]
            final = [e async for e in client.subscribe(prompt.task_id)]
            assert final[-1].state is TaskState.COMPLETED  # type: ignore[union-attr]
            with pytest.raises(TaskNotFound):
                await client.get_task("no-such-task")
            assert client.activation_echoed is False  # the SDK echoes nothing
            trace = client.trace
            assert trace is not None
            text = trace.to_text(bodies=False)
            assert "GRPC /lf.a2a.v1.A2AService/SendStreamingMessage" in text
            assert "GRPC /lf.a2a.v1.A2AService/GetTask (GetTask) 404 NOT_FOUND" in text
            first = trace[0]
            assert first.header("a2a-extensions", "request") == EXTENSION_URI
            assert first.events and "task" in first.events[0].data

    run(go())
    methods = {m for m, _ in seen.calls}
    assert "/lf.a2a.v1.A2AService/SendStreamingMessage" in methods
    for _method, meta in seen.calls:
        assert meta.get("a2a-version") == "1.0"
        assert meta.get("a2a-extensions") == EXTENSION_URI


def test_sync_client_send_get_cancel(agent: GrpcAgent) -> None:
    with SyncHitlClient(grpc_card(agent.url), headers={"X-Request-Tag": "t1"}) as client:
        task = client.send("release")
        assert task.status.state is TaskState.INPUT_REQUIRED  # type: ignore[union-attr]
        assert client.get_task(task.id).id == task.id  # type: ignore[union-attr]
        canceled = client.cancel(task.id)  # type: ignore[union-attr]
        assert canceled.status.state is TaskState.CANCELED
        with pytest.raises(TaskNotCancelable):
            client.cancel(task.id)  # type: ignore[union-attr]


def test_no_activation_no_envelope(agent: GrpcAgent, seen: Seen) -> None:
    async def go() -> Any:
        async with HitlClient(grpc_card(agent.url), activate_extension=False) as client:
            return await client.send("release")

    before = len(seen.calls)
    task = run(go())
    assert task.status.state is TaskState.INPUT_REQUIRED
    assert not (task.status.message.metadata or {})  # the executor saw no activation
    assert all("a2a-extensions" not in meta for _m, meta in seen.calls[before:])


def test_auto_prefers_the_cards_order_and_falls_back_without_grpc(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rpc = {"url": "http://127.0.0.1:1/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    card = parse_agent_card(grpc_card("grpc://127.0.0.1:1", also=[rpc]))
    assert choose_interface(card).binding == "GRPC"
    assert choose_interface(card, "JSONRPC").binding == "JSONRPC"
    assert choose_interface(card, "grpc").url == "grpc://127.0.0.1:1"
    from hitl_nb.client import _agent_card

    monkeypatch.setattr(_agent_card, "grpc_missing", lambda: "pip install 'hitl-nb[grpc]'")
    assert choose_interface(card).binding == "JSONRPC"  # gRPC not installed: skipped
    with pytest.raises(ImportError, match="hitl-nb"):
        choose_interface(card, "GRPC")


@pytest.mark.parametrize(
    ("url", "target"),
    [
        pytest.param("grpc://h:50051", ("h:50051", False), id="grpc"),
        pytest.param("grpcs://h", ("h:443", True), id="grpcs"),
        pytest.param("https://h:8443/x", ("h:8443", True), id="https"),
        pytest.param("h:7", ("h:7", False), id="bare"),
        pytest.param("grpc://[::1]:9", ("[::1]:9", False), id="ipv6"),
    ],
)
def test_grpc_target(url: str, target: tuple[str, bool]) -> None:
    assert grpc_target(url) == target


# -- the extension's rejections, as hitl_nb.agent writes them on gRPC ---------------


class Rejecting(a2a_pb2_grpc.A2AServiceServicer):  # type: ignore[misc]
    """Every SendMessage ends with one error status (hitl-prompt/v1's, or a bad one)."""

    def __init__(self) -> None:
        self.next: Any = None

    async def SendMessage(self, request: Any, context: Any) -> Any:  # noqa: N802
        code, message, trailing = self.next
        await context.abort(code, message, trailing_metadata=trailing)


@pytest.fixture(scope="module")
def rejecting() -> Iterator[tuple[GrpcAgent, Rejecting]]:
    servicer = Rejecting()
    with GrpcAgent(None, servicer=servicer) as running:
        yield running, servicer


def _status(exc: A2AError) -> tuple[Any, str, tuple[tuple[str, bytes], ...]]:
    name, message, raw = _wire_errors.grpc_status(exc)
    return getattr(grpc.StatusCode, name), message, (("grpc-status-details-bin", raw),)


def _send(url: str, **kwargs: Any) -> Any:
    async def go() -> Any:
        async with HitlClient(grpc_card(url), trace=True, **kwargs) as client:
            try:
                return await client.send("x")
            finally:
                go.trace = client.trace  # type: ignore[attr-defined]

    return run(go())


def test_conflict_and_invalid_reach_the_error_tree(
    rejecting: tuple[GrpcAgent, Rejecting],
) -> None:
    agent, servicer = rejecting
    data = {"extension": EXTENSION_URI, "prompt_id": "p1"}
    servicer.next = _status(PromptConflict(data=data))
    with pytest.raises(PromptConflict):
        _send(agent.url)
    servicer.next = _status(ResponseInvalid(data=data, validation_errors=ISSUES))
    with pytest.raises(ResponseInvalid) as invalid:
        _send(agent.url)
    assert invalid.value.validation_errors == ISSUES
    assert invalid.value.deviations == []  # an array, as §Acceptance and rejection shows


def test_rejection_in_the_trace(rejecting: tuple[GrpcAgent, Rejecting]) -> None:
    agent, servicer = rejecting
    servicer.next = _status(ResponseInvalid(data={"prompt_id": "p"}, validation_errors=ISSUES))

    async def go() -> Any:
        async with HitlClient(grpc_card(agent.url), trace=True) as client:
            with pytest.raises(ResponseInvalid):
                await client.send("x")
            return client.trace

    trace = run(go())
    exchange = trace[-1]
    assert exchange.status == 422 and exchange.hitl_error == "422 hitl_response_invalid"
    assert "gRPC status INVALID_ARGUMENT" in exchange.notes


@pytest.mark.parametrize(
    ("next_", "expected"),
    [
        pytest.param((grpc.StatusCode.ABORTED, "plain", ()), A2AError, id="aborted-without-reason"),
        pytest.param(
            (grpc.StatusCode.INTERNAL, "x", (("grpc-status-details-bin", b"\xff\x00junk"),)),
            InternalError,
            id="malformed-status-details",
        ),
        pytest.param((grpc.StatusCode.NOT_FOUND, "gone", ()), TaskNotFound, id="not-found"),
    ],
)
def test_statuses_without_a_usable_reason(
    rejecting: tuple[GrpcAgent, Rejecting], next_: Any, expected: type[Exception]
) -> None:
    agent, servicer = rejecting
    servicer.next = next_
    with pytest.raises(expected) as caught:
        _send(agent.url)
    assert not isinstance(caught.value, PromptConflict)  # ABORTED alone is not a 409


def test_unknown_reason_and_details_types() -> None:
    error = from_grpc_status(
        "FAILED_PRECONDITION", "no", [{"@type": "type.googleapis.com/x.Unknown"}]
    )
    assert type(error) is A2AError and "FAILED_PRECONDITION" in str(error)


# -- hostile answers ---------------------------------------------------------------


def _raw(answer: bytes) -> Any:
    def handler(request: bytes, context: Any) -> bytes:
        return answer

    return grpc.method_handlers_generic_handler(
        "lf.a2a.v1.A2AService",
        {"SendMessage": grpc.unary_unary_rpc_method_handler(handler)},
    )


@pytest.mark.parametrize(
    ("answer", "match"),
    [
        pytest.param(b"\xff\xff\xff\xff", "not protobuf A2A", id="garbage-bytes"),
        pytest.param(b"", "does not decode", id="neither-task-nor-message"),
        pytest.param(
            a2a_pb2.SendMessageResponse(
                task=to_proto(
                    "Task",
                    {
                        "id": "t",
                        "contextId": "c",
                        "status": {"state": "TASK_STATE_WORKING"},
                        "metadata": {"blob": "x" * 4096},
                    },
                )
            ).SerializeToString(),
            "over the limit",
            id="over-max-body-size",
        ),
    ],
)
def test_hostile_answers(answer: bytes, match: str) -> None:
    with GrpcAgent(None, generic=[_raw(answer)]) as agent:
        with pytest.raises(ProtocolViolation, match=match):
            _send(agent.url, limits=HttpLimits(max_body_size=2048))


def test_nobody_listening_is_unreachable() -> None:
    with GrpcAgent(None, servicer=Rejecting()) as agent:
        url = agent.url
    with pytest.raises(AgentUnreachable):
        _send(url, limits=HttpLimits(timeout=5))


def test_a_silent_stream_times_out(rejecting: tuple[GrpcAgent, Rejecting]) -> None:
    class Silent(a2a_pb2_grpc.A2AServiceServicer):  # type: ignore[misc]
        async def SendStreamingMessage(self, request: Any, context: Any) -> Any:  # noqa: N802
            await asyncio.sleep(30)
            yield a2a_pb2.StreamResponse()

    async def go(url: str) -> None:
        limits = HttpLimits(stream_idle_timeout=0.3)
        async with HitlClient(grpc_card(url), limits=limits) as client:
            with pytest.raises((AgentTimeout, AgentUnreachable)):
                async for _ in client.stream("x"):
                    pass

    with GrpcAgent(None, servicer=Silent()) as agent:
        run(go(agent.url))


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"Bad Key": "x"}, id="space-in-key"),
        pytest.param({"x-note": "caf\u00e9"}, id="non-ascii-value"),
        pytest.param({"x-note": "a\r\nb"}, id="newline-in-value"),
        pytest.param({"grpc-timeout": "1S"}, id="reserved-key"),
    ],
)
def test_metadata_that_grpc_refuses_is_a_clear_error(
    agent: GrpcAgent, headers: dict[str, str]
) -> None:
    with pytest.raises(ValueError, match="gRPC metadata"):
        _send(agent.url, headers=headers)


def test_wire_status_round_trip() -> None:
    name, message, raw = _wire_errors.grpc_status(
        ResponseInvalid(data={"prompt_id": "p"}, validation_errors=ISSUES)
    )
    from google.protobuf import json_format
    from google.rpc import status_pb2

    status = json_format.MessageToDict(status_pb2.Status.FromString(raw))
    assert name == "INVALID_ARGUMENT" and status["code"] == 3
    info, errors = status["details"]
    assert info["reason"] == "HITL_RESPONSE_INVALID"
    assert errors["value"]["validation_errors"] == ISSUES
    assert json.dumps(status)  # plain JSON all through
