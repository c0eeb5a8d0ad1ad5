"""The harness on the gRPC binding: against hitl_nb.agent served with gRPC every check is
green over gRPC as over JSON-RPC and HTTP+JSON (``--binding all`` checks the three), the
wire records show each gRPC call (method, JSON both ways, status code, the
``a2a-extensions`` metadata), and an agent that is right on the JSON bindings but serves
gRPC without the extension's interceptor is found out on gRPC alone."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

from hitl_nb.cli import main
from hitl_nb.conformance import Settings, run, run_each
from tests.helpers.ask_agent import AskAgent

CONFORMANCE = ["CF-1", "CF-2", "CF-3", "CF-4", "CF-5", "CF-6", "CF-7"]
FAST = Settings(trials=3, transition_timeout=0.5, resume_timeout=2.0)


@pytest.fixture(scope="module")
def agent() -> Iterator[AskAgent]:
    with AskAgent(grpc=True) as running:
        yield running


class _WrongCode:
    """A context whose ``abort`` ends the call with FAILED_PRECONDITION whatever it was
    asked: the ErrorInfo reason is kept, the status code is not the one for 409 / 422."""

    def __init__(self, context: Any) -> None:
        self._context = context

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)

    async def abort(self, code: Any, details: str = "", trailing_metadata: Any = ()) -> None:
        await self._context.abort(grpc.StatusCode.FAILED_PRECONDITION, details, trailing_metadata)


class WrongCodes(grpc.aio.ServerInterceptor):
    """In front of the extension's interceptor: its unary rejections get the wrong code."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None or handler.unary_unary is None:
            return handler
        inner = handler.unary_unary

        async def unary(request: Any, context: Any) -> Any:
            return await inner(request, _WrongCode(context))

        return grpc.unary_unary_rpc_method_handler(
            unary,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


@pytest.fixture(scope="module")
def no_interceptor() -> Iterator[AskAgent]:
    """Served on gRPC without :meth:`HitlExtension.grpc_interceptor`: the SDK alone there."""
    with AskAgent(grpc=True, grpc_interceptor=False) as running:
        yield running


def test_every_check_is_green_over_grpc(agent: AskAgent) -> None:
    report = run(agent.url, binding="GRPC", driver="release", settings=FAST, trace=True)
    assert report.passed, report.to_text()
    assert report.binding == "GRPC" and report.version == "1.0"
    assert any(n.startswith("interface: GRPC A2A 1.0 at grpc://127.0.0.1:") for n in report.notes)
    # The rejections were judged by gRPC code and ErrorInfo reason; the echo is metadata.
    assert "activated with the a2a-extensions metadata on every request" in report["CF-1"].notes
    assert "cut the SubscribeToTask call after its first event" in report["CF-6"].notes
    assert report["CF-4"].metrics["observed_by"] == ["stream"]

    calls = [x for x in report.trace if x.method == "GRPC"]
    methods = {x.url.rsplit("/", 1)[-1] for x in calls}
    assert {"SendStreamingMessage", "SendMessage", "GetTask", "SubscribeToTask"} <= methods
    codes = {n for x in calls for n in x.notes if n.startswith("gRPC status ")}
    assert {"gRPC status OK", "gRPC status ABORTED", "gRPC status INVALID_ARGUMENT"} <= codes
    aborted = next(x for x in calls if "gRPC status ABORTED" in x.notes)
    assert aborted.status == 409 and aborted.hitl_error == "409 hitl_already_answered_or_unknown"
    assert aborted.header("a2a-extensions") is not None  # the echo, sent before the abort
    sent = next(x for x in calls if x.url.endswith("/SendMessage"))
    assert sent.request_json["message"]["role"] == "ROLE_USER"  # protobuf shown as its JSON
    assert sent.header("a2a-extensions", "request") is not None
    assert "(SubscribeToTask (raw)) 200 OK" in report.trace.to_text(bodies=False)


def test_every_binding_the_card_declares(agent: AskAgent) -> None:
    reports = run_each(agent.url, driver="release", settings=FAST, only=["CF-1", "EXT-ECHO"])
    assert [r.binding for r in reports] == ["JSONRPC", "HTTP+JSON", "GRPC"]
    assert all(r.passed for r in reports), "\n".join(r.to_text() for r in reports)


def test_an_agent_wrong_on_grpc_only_fails_there(no_interceptor: AskAgent) -> None:
    only = ["CF-1", "CF-3", "EXT-NO-ACTIVATION", "EXT-ECHO"]
    reports = run_each(no_interceptor.url, driver="release", settings=FAST, only=only)
    by = {r.binding: r for r in reports}
    assert by["JSONRPC"].passed and by["HTTP+JSON"].passed, by["JSONRPC"].to_text()
    grpc = by["GRPC"]
    assert {r.id for r in grpc.failed} == set(only), grpc.to_text()
    assert "gRPC INVALID_ARGUMENT, reason HITL_RESPONSE_INVALID" in grpc["CF-3"].message
    assert "seen accepted (gRPC OK" in grpc["CF-3"].message
    assert "a2a-extensions metadata" in grpc["EXT-ECHO"].message


def test_a_rejection_with_the_wrong_grpc_code_fails() -> None:
    with AskAgent(grpc=True, grpc_outer=[WrongCodes()]) as agent:
        report = run(agent.url, binding="GRPC", driver="release", settings=FAST, only=["CF-1"])
    assert not report.passed
    failure = report["CF-1"].failures[0]
    assert failure.step == "step 7" and failure.expected == "gRPC status ABORTED or ALREADY_EXISTS"
    # The error itself was right (its reason names it): only the code is wrong.
    assert "gRPC FAILED_PRECONDITION, PromptConflict" in failure.seen


def test_cli_binding_all_prints_each_and_writes_one_json(
    agent: AskAgent, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    code = main(
        ["conformance", agent.url, "--binding", "all", "--scenario", "release"]
        + ["--only", "CF-2", "--trials", "3", "--json", str(out), "--junit", str(tmp_path / "j")]
    )
    text = capsys.readouterr().out
    assert code == 0, text
    assert "binding GRPC, A2A 1.0" in text and "binding HTTP+JSON, A2A 1.0" in text
    assert "every binding the card declares: JSONRPC GREEN, HTTP+JSON GREEN, GRPC GREEN" in text
    doc = json.loads(out.read_text())
    assert doc["passed"] is True
    assert [r["binding"] for r in doc["reports"]] == ["JSONRPC", "HTTP+JSON", "GRPC"]
    assert "hitl-prompt/v1 conformance (GRPC)" in (tmp_path / "j").read_text()


def test_cli_binding_grpc_on_the_wrong_agent_exits_1(
    no_interceptor: AskAgent, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--binding", "GRPC", "--scenario", "release", "--only", "EXT-ECHO", "--quiet"]
    assert main(["conformance", no_interceptor.url, *args]) == 1
    assert capsys.readouterr().out.startswith("RED: 1 failed")


def test_without_the_grpc_extra_the_grpc_report_is_skipped_not_green(
    agent: AskAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hitl_nb.conformance import _runner

    monkeypatch.setattr(_runner, "grpc_missing", lambda: "pip install 'hitl-nb[grpc]'")
    reports = run_each(agent.url, driver="release", settings=FAST, only=["CF-2"])
    grpc = reports[-1]
    assert grpc.binding == "GRPC" and not grpc.passed
    assert [r.outcome for r in grpc.results] == ["skipped"]
    assert "pip install 'hitl-nb[grpc]'" in grpc.to_text()
    assert reports[0].passed and reports[1].passed


def test_a_refused_subscription_says_its_status(agent: AskAgent) -> None:
    from hitl_nb.a2a import CODEC_V1
    from hitl_nb.client import Trace
    from hitl_nb.conformance._grpc_wire import GrpcSubscription
    from hitl_nb.errors import ProtocolViolation

    assert agent.served is not None and agent.served.grpc_url is not None
    trace = Trace()
    seen: list[Any] = []
    subscription = GrpcSubscription(
        url=agent.served.grpc_url,
        codec=CODEC_V1,
        metadata={"a2a-version": "1.0"},
        task_id="no-such-task",
        trace=trace,
        on_answer=seen.append,
    )

    async def go() -> None:
        with pytest.raises(ProtocolViolation, match="gRPC status NOT_FOUND instead of a stream"):
            await subscription.open()

    asyncio.run(asyncio.wait_for(go(), 30))
    assert seen and "gRPC status NOT_FOUND" in seen[0].notes
    assert "(SubscribeToTask (raw)) 404 NOT_FOUND" in trace.to_text(bodies=False)
