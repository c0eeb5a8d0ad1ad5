"""hitl-prompt/v1 on the gRPC binding: what the ASGI middleware does, for ``grpc.aio``.

a2a-sdk serves A2A 1.0 over gRPC with its ``GrpcHandler`` servicer (``a2a-sdk[grpc]``);
like its HTTP routes it has no hook for the extension, so :class:`HitlGrpcInterceptor`
does, in front of it (``grpc.aio.server(interceptors=[hitl.grpc_interceptor()])``). A
``grpc.aio`` interceptor never sees the request message, so it hands gRPC a wrapped
method handler for each rpc of ``lf.a2a.v1.A2AService``, which does around the SDK's:

1. **Activation and echo** (§Activation; A2A 1.0 §10.2: service parameters are gRPC
   metadata): a call activates the extension with ``a2a-extensions`` metadata naming the
   URI; the answer's initial metadata names it back.
2. **Answers checked before the executor**: a ``SendMessage`` / ``SendStreamingMessage``
   request is read through the 1.0 JSON (:mod:`hitl_nb.a2a._protojson`) and checked by the
   same :class:`~hitl_nb.agent._gate.Gate`; a rejection ends the call with the status
   :func:`hitl_nb._wire_errors.grpc_status` writes (409: ABORTED, reason
   ``HITL_ALREADY_ANSWERED_OR_UNKNOWN``; 422: INVALID_ARGUMENT, reason
   ``HITL_RESPONSE_INVALID`` and a Struct detail holding ``validation_errors``), and the
   executor never runs. An answer the executor refused later (LangGraph's own check) ends
   the call the same way in place of the SDK's answer.
3. **No envelope without activation**: every answer (each message of a stream too) has
   its envelopes taken out by the same rule as the JSON bindings
   (:func:`~hitl_nb.agent._views.strip_envelopes`).
4. **A stream on an existing task begins with the Task** (A2A 1.0 §3.1.2), as the
   middleware does for SSE: a first status update is sent as the stored Task in that
   status; any other first event gets the stored Task before it.

A ``Struct`` holds numbers as doubles, so an answer's whole numbers are turned back into
ints before it is checked and handed to the executor (``copies: 2``, not ``2.0``).
Message sizes are gRPC's to bound: the server's ``grpc.max_receive_message_length``
(:func:`~hitl_nb.agent.serve` sets it to the extension's ``max_body``), over which gRPC
itself ends the call with RESOURCE_EXHAUSTED. A request that is not the rpc's protobuf
message ends with INVALID_ARGUMENT (reason ``INVALID_REQUEST``) before the SDK sees it,
where gRPC alone would say UNKNOWN and log the servicer's DecodeError.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import grpc.aio
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.grpc_handler import (
    DefaultGrpcServerCallContextBuilder,
    GrpcServerCallContextBuilder,
)
from a2a.types import SendMessageConfiguration, StreamResponse, Task
from a2a.utils.task import apply_history_length

from hitl_nb import _wire_errors
from hitl_nb.a2a import CODEC_V1, GRPC_SERVICE, Message, from_proto, to_proto
from hitl_nb.errors import A2AError, InvalidParams, InvalidRequest, WireDecodeError
from hitl_nb.spec import EXTENSION_URI, HEADER_EXTENSIONS, RESPONSE_KEY

from ._gate import Gate, TaskReader
from ._prompts import Hold
from ._stored import stored_task, whole_numbers
from ._views import strip_envelopes

__all__ = ["HitlGrpcInterceptor"]

_PREFIX = f"/{GRPC_SERVICE}/"
_SENDS = ("SendMessage", "SendStreamingMessage")
#: The metadata key that activates the extension (gRPC keys are lower case).
_KEY = HEADER_EXTENSIONS.lower()
_URI = EXTENSION_URI.encode()

Behaviour = Callable[[Any, grpc.aio.ServicerContext], Any]


def _activated(context: grpc.aio.ServicerContext) -> bool:
    """Does the call's ``a2a-extensions`` metadata name the extension?"""
    for key, value in context.invocation_metadata() or ():
        if key.lower() != _KEY or not isinstance(value, str):
            continue
        if any(v.strip() == EXTENSION_URI for v in value.split(",")):
            return True
    return False


def _stripped(response: Any) -> Any:
    """``response`` without envelopes (the same message when it carries none)."""
    if response is None or _URI not in response.SerializeToString():
        return response
    try:
        doc = from_proto(response)
    except WireDecodeError:
        return response
    if not strip_envelopes(doc):
        return response
    return to_proto(type(response).DESCRIPTOR.name, doc)


async def _abort(context: grpc.aio.ServicerContext, exc: A2AError) -> None:
    """End the call with ``exc`` as its status (raises, as ``context.abort`` does)."""
    name, message, details = _wire_errors.grpc_status(exc)
    await context.abort(
        getattr(grpc.StatusCode, name),
        message,
        trailing_metadata=(("grpc-status-details-bin", details),),
    )


class _Undecoded:
    """A request whose bytes are not the rpc's message (what the parser said)."""

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _lenient(deserialize: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    """``deserialize``, giving an :class:`_Undecoded` where it would raise."""
    if deserialize is None:
        return None

    def read(data: bytes) -> Any:
        try:
            return deserialize(data)
        except Exception as exc:  # protobuf's DecodeError, whatever the bytes
            return _Undecoded(f"{type(exc).__name__}: {exc}")

    return read


class HitlGrpcInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """A ``grpc.aio`` server interceptor adding hitl-prompt/v1 to a2a-sdk's ``GrpcHandler``
    (see the module doc); made by :meth:`HitlExtension.grpc_interceptor
    <hitl_nb.agent.HitlExtension.grpc_interceptor>`.

    ``gate`` checks answers; ``task_store`` is the SDK request handler's store, read as
    each call's user through ``context_builder`` (give the one the ``GrpcHandler`` has).
    """

    def __init__(
        self,
        *,
        gate: Gate,
        task_store: Any,
        context_builder: GrpcServerCallContextBuilder | None = None,
    ) -> None:
        self.gate = gate
        self.task_store = task_store
        self.context_builder = context_builder or DefaultGrpcServerCallContextBuilder()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        """The A2A service's method handlers, wrapped; any other left as it is."""
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or not method.startswith(_PREFIX):
            return handler
        name = method[len(_PREFIX) :]
        kinds = {"request_deserializer": _lenient(handler.request_deserializer)}
        kinds["response_serializer"] = handler.response_serializer
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(name, handler.unary_unary), **kinds
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._stream(name, handler.unary_stream), **kinds
            )
        return handler  # A2A has no client-streaming rpc

    # -- the two shapes of rpc ---------------------------------------------------------

    def _unary(self, name: str, behaviour: Behaviour) -> Behaviour:
        async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
            activated = await self._begin(request, context)
            held = await self._check(name, request, context)
            try:
                response = await behaviour(request, context)
            finally:
                if held is not None:
                    self.gate.book.release(held)
            if held is not None and held.refusal is not None:
                await _abort(context, held.refusal)
            return response if activated else _stripped(response)

        return unary

    def _stream(self, name: str, behaviour: Behaviour) -> Behaviour:
        async def stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            activated = await self._begin(request, context)
            held = await self._check(name, request, context)
            opening = name == "SendStreamingMessage" and bool(request.message.task_id)
            try:
                first = True
                async for item in behaviour(request, context):
                    if first:
                        first = False
                        if held is not None and held.refusal is not None:
                            await _abort(context, held.refusal)
                        if opening:
                            for event in await self._opened(request, context, item):
                                yield event if activated else _stripped(event)
                            continue
                    yield item if activated else _stripped(item)
                if first and held is not None and held.refusal is not None:
                    await _abort(context, held.refusal)
            finally:
                if held is not None:
                    self.gate.book.release(held)

        return stream

    # -- the parts -----------------------------------------------------------------------

    async def _begin(self, request: Any, context: grpc.aio.ServicerContext) -> bool:
        """Is the call activated? If so, the echo goes out now, in the initial metadata.
        A request that did not decode ends the call here."""
        activated = _activated(context)
        if activated:
            await context.send_initial_metadata(((_KEY, EXTENSION_URI),))
        if isinstance(request, _Undecoded):
            await _abort(
                context, InvalidRequest(f"not this rpc's protobuf message ({request.problem})")
            )
        return activated

    async def _check(
        self, name: str, request: Any, context: grpc.aio.ServicerContext
    ) -> Hold | None:
        """The answer a send request carries, checked and held (None: not an answer);
        a rejection ends the call here, before the SDK sees the request."""
        if name not in _SENDS or not request.HasField("message"):
            return None
        answer = RESPONSE_KEY.encode() in request.message.SerializeToString()
        if not (answer or request.message.task_id):
            return None  # a new task
        try:
            message = _message(request.message, answer)
            if message is None:
                return None
            return await self.gate.check(message, self._reader(request, context))
        except A2AError as exc:
            await _abort(context, exc)
        return None  # not reached: abort raises

    def _call_context(self, request: Any, context: grpc.aio.ServicerContext) -> ServerCallContext:
        """The SDK's call context for this call, as its ``GrpcHandler`` builds it."""
        built = self.context_builder.build(context)
        built.tenant = getattr(request, "tenant", "")
        return built

    def _reader(self, request: Any, context: grpc.aio.ServicerContext) -> TaskReader:
        async def read(task_id: str) -> Any:
            call = self._call_context(request, context)
            return stored_task(await self.task_store.get(task_id, call))

        return read

    async def _opened(
        self, request: Any, context: grpc.aio.ServicerContext, first: Any
    ) -> list[Any]:
        """The stream's first events, opened with the stored Task (§3.1.2)."""
        if first.HasField("task") or first.HasField("message"):
            return [first]
        call = self._call_context(request, context)
        found = await self.task_store.get(request.message.task_id, call)
        task = getattr(found, "task", found)
        if not isinstance(task, Task):
            return [first]
        configuration = request.configuration
        if configuration.HasField("history_length"):
            length = SendMessageConfiguration(history_length=configuration.history_length)
            task = apply_history_length(task, length)
        opened = Task()
        opened.CopyFrom(task)
        if first.HasField("status_update"):
            # The Task as that update left it: the update's own status, not a later one.
            opened.status.CopyFrom(first.status_update.status)
            return [StreamResponse(task=opened)]
        return [StreamResponse(task=opened), first]


def _message(proto: Any, answer: bool) -> Message | None:
    """A request's message in the neutral model, its whole numbers ints again (None: not
    A2A, left to the SDK; InvalidParams when it carries an answer)."""
    try:
        doc = whole_numbers(from_proto(proto))
        return CODEC_V1.decode_message(doc, "/message")
    except WireDecodeError as exc:
        if answer:
            raise InvalidParams(str(exc)) from None
        return None
