"""hitl_nb.agent served on gRPC (``agent_app(grpc_port=0)``), driven by HitlClient's gRPC
binding and by a2a-sdk's raw stub: the card lists GRPC next to the JSON interfaces; the
envelope is there when the call activates the extension and absent when it does not;
an answer is accepted (WORKING), a second one is 409 (ABORTED), a bad one 422
(INVALID_ARGUMENT with ``validation_errors``), and neither reaches the executor; hostile
requests (not protobuf, over the size limit, answers of the wrong shape, odd metadata)
are refused by status and leave the task waiting on the same prompt."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import grpc.aio
import httpx
import pytest
from a2a.types import a2a_pb2, a2a_pb2_grpc
from google.protobuf import json_format, struct_pb2
from google.rpc import error_details_pb2, status_pb2

from hitl_nb.a2a import TaskState, from_proto, to_proto
from hitl_nb.agent import Served
from hitl_nb.agent._app import agent_app
from hitl_nb.client import HitlClient, PromptEvent, StatusEvent, TaskEvent
from hitl_nb.errors import PromptConflict, ResponseInvalid
from hitl_nb.spec import EXTENSION_URI, RESPONSE_KEY
from tests.helpers.ask_agent import ReleaseExecutor

SEND = "/lf.a2a.v1.A2AService/SendMessage"
ACTIVATED = (("a2a-version", "1.0"), ("a2a-extensions", EXTENSION_URI))
PLAIN = (("a2a-version", "1.0"),)


class Agent:
    """The served agent and its executor (``executor.answers``: what its code received)."""

    def __init__(self, served: Served, executor: ReleaseExecutor) -> None:
        self.served = served
        self.executor = executor
        assert served.grpc_url is not None
        self.grpc_url = served.grpc_url
        self.target = served.grpc_url.removeprefix("grpc://")


@pytest.fixture(scope="module")
def agent() -> Iterator[Agent]:
    executor = ReleaseExecutor()
    with agent_app(
        lambda hitl: hitl.wrap(executor),
        name="release agent",
        description="asks before each release",
        grpc_port=0,
    ) as served:
        yield Agent(served, executor)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def _message(text: str = "release", **extra: Any) -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}], **extra}


def _answer(task: dict[str, Any], prompt_id: str, payload: Any) -> dict[str, Any]:
    return _message(
        "answer",
        taskId=task["id"],
        contextId=task["contextId"],
        metadata={RESPONSE_KEY: {"prompt_id": prompt_id, "payload": payload}},
    )


async def _call(
    agent: Agent, method: str, request: Any, metadata: Any = ACTIVATED
) -> tuple[Any, dict[str, str]]:
    """One unary call with a2a-sdk's stub: (the answer, its initial metadata)."""
    async with grpc.aio.insecure_channel(agent.target) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
        call = getattr(stub, method)(request, metadata=metadata, timeout=10)
        answer = await call
        initial = {k: v for k, v in await call.initial_metadata() or () if isinstance(v, str)}
        return answer, initial


async def _stream(agent: Agent, request: Any, metadata: Any = ACTIVATED) -> list[dict[str, Any]]:
    async with grpc.aio.insecure_channel(agent.target) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
        return [
            from_proto(item) async for item in stub.SendStreamingMessage(request, metadata=metadata)
        ]


def _send_request(message: dict[str, Any], **extra: Any) -> Any:
    return to_proto("SendMessageRequest", {"message": message, **extra})


async def _new_task(agent: Agent) -> tuple[dict[str, Any], str]:
    """A task waiting on a prompt: (its JSON, the prompt_id)."""
    answer, _ = await _call(agent, "SendMessage", _send_request(_message()))
    task = from_proto(answer)["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    return task, task["status"]["message"]["metadata"][EXTENSION_URI]["prompt_id"]


def _status_of(error: grpc.aio.AioRpcError) -> tuple[str, str | None, dict[str, Any]]:
    """(code name, ErrorInfo reason, the Struct detail) of a failed call."""
    reason, struct = None, {}
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    reason = info.reason
                else:
                    holder = struct_pb2.Struct()
                    detail.Unpack(holder)
                    struct = json_format.MessageToDict(holder)
    return error.code().name, reason, struct


async def _waits_on(agent: Agent, task: dict[str, Any], prompt_id: str) -> None:
    got, _ = await _call(agent, "GetTask", to_proto("GetTaskRequest", {"id": task["id"]}))
    status = from_proto(got)["status"]
    assert status["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert status["message"]["metadata"][EXTENSION_URI]["prompt_id"] == prompt_id


# -- the card and the client --------------------------------------------------------


def test_the_card_lists_grpc_after_the_json_interfaces(agent: Agent) -> None:
    card = httpx.get(agent.served.url + "/.well-known/agent-card.json").json()
    interfaces = [(i["protocolBinding"], i["url"]) for i in card["supportedInterfaces"]]
    assert [b for b, _ in interfaces] == ["JSONRPC", "HTTP+JSON", "GRPC"]
    assert interfaces[-1][1] == agent.grpc_url
    assert card["capabilities"]["extensions"][0]["uri"] == EXTENSION_URI


def test_a_prompt_asked_and_answered_over_grpc(agent: Agent) -> None:
    async def go() -> None:
        async with HitlClient(agent.served.url, binding="GRPC") as client:
            assert client.selection is not None and client.selection.url == agent.grpc_url
            events = [e async for e in client.stream("release")]
            assert isinstance(events[0], TaskEvent) and isinstance(events[1], StatusEvent)
            assert client.activation_echoed is True
            prompt = events[-1]
            assert isinstance(prompt, PromptEvent)
            assert prompt.envelope.response_schema["properties"]["copies"]["maximum"] == 3
            before = len(agent.executor.answers)
            with pytest.raises(ResponseInvalid) as invalid:
                await client.respond(
                    prompt.task_id, prompt.prompt_id, {"approved": "yes"}, validate=False
                )
            assert invalid.value.validation_errors == [
                {"path": "/approved", "keyword": "type", "message": "expected boolean, got string"}
            ]
            task = await client.get_task(prompt.task_id)
            assert task.status.state is TaskState.INPUT_REQUIRED
            accepted = await client.respond(
                prompt.task_id, prompt.prompt_id, {"approved": True, "copies": 2}
            )
            assert accepted.status.state is TaskState.WORKING  # type: ignore[union-attr]
            with pytest.raises(PromptConflict):
                await client.respond(prompt.task_id, prompt.prompt_id, {"approved": False})
            final = [e async for e in client.subscribe(prompt.task_id)]
            assert final[-1].state is TaskState.COMPLETED  # type: ignore[union-attr]
            # The one accepted answer reached the code, its 2 an int again (Struct: 2.0).
            assert agent.executor.answers[before:] == [{"approved": True, "copies": 2}]
            assert type(agent.executor.answers[-1]["copies"]) is int

    run(go())


def test_no_envelope_without_activation(agent: Agent) -> None:
    async def go() -> None:
        async with HitlClient(agent.served.url, binding="GRPC", activate_extension=False) as client:
            events = [e async for e in client.stream("release")]
            assert not any(isinstance(e, PromptEvent) for e in events)
            assert not client.activation_echoed
            task = await client.get_task(events[0].task_id)
            assert task.status.state is TaskState.INPUT_REQUIRED
            assert task.status.message is not None
            assert "Approve the release?" in (task.status.message.parts[0].text or "")
            assert EXTENSION_URI not in (task.status.message.metadata or {})
            everything = [m.metadata or {} for m in task.history]
            assert all(EXTENSION_URI not in meta for meta in everything)
        # The raw answers of every rpc: no envelope anywhere, no echo.
        request = to_proto("GetTaskRequest", {"id": task.id})
        got, initial = await _call(agent, "GetTask", request, PLAIN)
        assert EXTENSION_URI.encode() not in got.SerializeToString()
        assert "a2a-extensions" not in initial
        listed, _ = await _call(agent, "ListTasks", a2a_pb2.ListTasksRequest(), PLAIN)
        assert EXTENSION_URI.encode() not in listed.SerializeToString()
        # The same task read with activation has it: only the view changed.
        got, initial = await _call(agent, "GetTask", request)
        assert EXTENSION_URI.encode() in got.SerializeToString()
        assert initial["a2a-extensions"] == EXTENSION_URI

    run(go())


def test_an_answers_stream_begins_with_the_task(agent: Agent) -> None:
    async def go() -> None:
        task, prompt_id = await _new_task(agent)
        request = _send_request(
            _answer(task, prompt_id, {"approved": True}), configuration={"historyLength": 1}
        )
        events = await _stream(agent, request)
        first = events[0]["task"]
        assert first["id"] == task["id"]
        assert first["status"]["state"] == "TASK_STATE_WORKING"
        assert len(first.get("history", [])) == 1
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"

    run(go())


# -- rejections and hostile requests ---------------------------------------------------


@pytest.mark.parametrize(
    ("build", "code", "reason"),
    [
        pytest.param(
            lambda t, p: _answer(t, p, {"approved": 1}),
            "INVALID_ARGUMENT",
            "HITL_RESPONSE_INVALID",
            id="payload-invalid",
        ),
        pytest.param(
            lambda t, p: _answer(t, str(uuid.uuid4()), {"approved": True}),
            "ABORTED",
            "HITL_ALREADY_ANSWERED_OR_UNKNOWN",
            id="unknown-prompt",
        ),
        pytest.param(
            lambda t, p: {**_answer(t, p, {}), "metadata": {RESPONSE_KEY: "not an object"}},
            "INVALID_ARGUMENT",
            "INVALID_PARAMS",
            id="response-not-an-object",
        ),
        pytest.param(
            lambda t, p: {
                k: v for k, v in _answer(t, p, {"approved": True}).items() if k != "taskId"
            },
            "INVALID_ARGUMENT",
            "INVALID_PARAMS",
            id="answer-without-task",
        ),
        pytest.param(
            lambda t, p: {**_answer(t, p, {"approved": True}), "parts": []},
            "INVALID_ARGUMENT",
            "INVALID_PARAMS",
            id="answer-without-parts",
        ),
    ],
)
def test_rejected_answers_never_reach_the_executor(
    agent: Agent, build: Any, code: str, reason: str
) -> None:
    async def go() -> None:
        task, prompt_id = await _new_task(agent)
        before = agent.executor.runs, len(agent.executor.answers)
        for call in ("SendMessage", "SendStreamingMessage"):
            request = _send_request(build(task, prompt_id))
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                if call == "SendMessage":
                    await _call(agent, call, request)
                else:
                    await _stream(agent, request)
            got_code, got_reason, struct = _status_of(failed.value)
            assert (got_code, got_reason) == (code, reason)
            if reason == "HITL_RESPONSE_INVALID":
                assert struct["validation_errors"][0]["path"] == "/approved"
        assert (agent.executor.runs, len(agent.executor.answers)) == before
        await _waits_on(agent, task, prompt_id)

    run(go())


def test_a_request_that_is_not_protobuf_is_refused(agent: Agent) -> None:
    async def go() -> None:
        runs = agent.executor.runs
        async with grpc.aio.insecure_channel(agent.target) as channel:
            raw = channel.unary_unary(SEND)  # bytes as they are
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                await raw(b"\xff\xff\xff\xff\x0f", metadata=ACTIVATED, timeout=10)
        assert _status_of(failed.value)[:2] == ("INVALID_ARGUMENT", "INVALID_REQUEST")
        assert agent.executor.runs == runs
        await _new_task(agent)  # still serving

    run(go())


def test_a_request_over_the_size_limit_is_resource_exhausted(agent: Agent) -> None:
    async def go() -> None:
        task, prompt_id = await _new_task(agent)
        answer = _answer(task, prompt_id, {"approved": True, "comment": "x" * (5 * 1024 * 1024)})
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await _call(agent, "SendMessage", _send_request(answer))
        assert failed.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        await _waits_on(agent, task, prompt_id)

    run(go())


@pytest.mark.parametrize(
    ("metadata", "activated"),
    [
        pytest.param((("a2a-extensions", EXTENSION_URI),), True, id="exact"),
        pytest.param((("a2a-extensions", f"urn:other, {EXTENSION_URI} "),), True, id="listed"),
        pytest.param((("a2a-extensions", EXTENSION_URI.upper()),), False, id="other-case"),
        pytest.param((("a2a-extensions", EXTENSION_URI + "x"),), False, id="longer-uri"),
        pytest.param((("a2a-extensions-bin", EXTENSION_URI.encode()),), False, id="binary-key"),
        pytest.param((("x-a2a-extensions", EXTENSION_URI),), False, id="0.3-name"),
        pytest.param((("a2a-version", "0.3"),), False, id="old-version-only"),
    ],
)
def test_activation_is_read_from_the_metadata_alone(
    agent: Agent, metadata: Any, activated: bool
) -> None:
    async def go() -> None:
        answer, initial = await _call(
            agent, "SendMessage", _send_request(_message()), metadata=metadata
        )
        task = from_proto(answer)["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        has = EXTENSION_URI in task["status"]["message"].get("metadata", {})
        assert (has, initial.get("a2a-extensions") == EXTENSION_URI) == (activated, activated)

    run(go())


def test_a_plain_client_cannot_answer_an_envelope_it_never_saw_twice(agent: Agent) -> None:
    """Without activation the answer still goes through the gate: one accepted, the next
    refused, as for an activated client."""

    async def go() -> None:
        task, prompt_id = await _new_task(agent)
        first = _send_request(_answer(task, prompt_id, {"approved": True}))
        done, _ = await _call(agent, "SendMessage", first, PLAIN)
        assert from_proto(done)["task"]["status"]["state"] != "TASK_STATE_INPUT_REQUIRED"
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await _call(agent, "SendMessage", _send_request(_answer(task, prompt_id, {})), PLAIN)
        assert _status_of(failed.value)[:2] == ("ABORTED", "HITL_ALREADY_ANSWERED_OR_UNKNOWN")

    run(go())


def test_the_documented_wiring_serves_both() -> None:
    """docs/agent.md's own wiring: a GrpcListener bound first, listed in the card, given
    the SDK's GrpcHandler and served by ``serve(app, grpc=...)`` with the HTTP app."""
    import socket

    from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import AgentInterface
    from starlette.applications import Starlette

    from hitl_nb.agent import GrpcListener, HitlExtension, serve
    from tests.helpers.ask_agent import card

    sock = socket.create_server(("127.0.0.1", 0))
    store = InMemoryTaskStore()
    hitl = HitlExtension(store)
    grpc_side = GrpcListener("127.0.0.1", 0, interceptors=[hitl.grpc_interceptor()])
    agent_card = card(f"http://127.0.0.1:{sock.getsockname()[1]}", hitl)
    agent_card.supported_interfaces.append(
        AgentInterface(url=grpc_side.url, protocol_binding="GRPC", protocol_version="1.0")
    )
    handler = DefaultRequestHandler(
        agent_executor=hitl.wrap(ReleaseExecutor()), task_store=store, agent_card=agent_card
    )
    app = Starlette(
        routes=[*create_agent_card_routes(agent_card), *create_jsonrpc_routes(handler, "/")],
        middleware=[hitl.middleware()],
    )
    grpc_side.add_a2a(GrpcHandler(handler))

    async def go(url: str) -> None:
        async with HitlClient(url, binding="GRPC") as client:
            events = [e async for e in client.stream("release")]
            assert isinstance(events[-1], PromptEvent) and client.activation_echoed

    with serve(app, sock=sock, grpc=grpc_side, on_stop=[hitl.aclose, handler.aclose]) as agent:
        assert agent.grpc_url == grpc_side.url
        run(go(agent.url))
