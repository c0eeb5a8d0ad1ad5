"""The gRPC binding (A2A 1.0 §10): the same operations as the JSON bindings, over
``lf.a2a.v1.A2AService`` with a2a-sdk's generated stub and messages.

Requests are made as the JSON bindings make them (the 1.0 codec's JSON), turned into
protobuf messages by :mod:`hitl_nb.a2a._protojson`, and answers come back the same way,
so everything above the binding (follow, answers, prompts) is shared. A2A's service
parameters are gRPC metadata (§10.2): ``a2a-version: 1.0`` and ``a2a-extensions`` with
the extension's URI, plus the client's own ``headers`` (lower-cased, as gRPC wants).

Errors are read at this one boundary: a ``google.rpc.Status`` in the trailing metadata
(``grpc-status-details-bin``, §10.6) becomes the package's error through
:func:`~hitl_nb.client._errors.from_grpc_status` (the ErrorInfo reason decides;
hitl-prompt/v1's 409 / 422 come as ABORTED / INVALID_ARGUMENT with the extension's
reasons), and a connection that fails, times out or carries what does not decode becomes
a :class:`~hitl_nb.errors.TransportError` like its HTTP counterparts.

The interface's URL names the server: ``grpc://host:port`` or ``http://host:port``
(plain text), ``grpcs://`` or ``https://`` (TLS with the system's certificates), or a
bare ``host:port`` (plain text). Message sizes are bounded by ``HttpLimits.max_body_size``
both ways; a stream silent for longer than ``stream_idle_timeout`` fails as a timeout.
This module imports ``grpc``: the client imports it only when the gRPC interface is chosen.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import grpc
import grpc.aio
from a2a.types import a2a_pb2_grpc
from google.protobuf import json_format
from google.rpc import status_pb2

from hitl_nb.a2a import GRPC_SERVICE, Codec, Message, SendResult, Task, TaskState
from hitl_nb.a2a import from_proto as _from_proto
from hitl_nb.a2a import to_proto as _to_proto
from hitl_nb.errors import (
    A2AError,
    AgentTimeout,
    AgentUnreachable,
    HitlError,
    ProtocolViolation,
    UnsupportedOperation,
    WireDecodeError,
)

from ._bindings import Binding, TaskPage, WireEvent
from ._errors import from_grpc_status
from ._exchange import Exchange
from ._http import HttpLimits
from ._trace import Trace

__all__ = ["GrpcBinding", "GrpcSession", "grpc_target"]

#: The trailing metadata key of the rich error status (gRPC's own convention).
STATUS_DETAILS_KEY = "grpc-status-details-bin"
_STRUCT_TYPE = "type.googleapis.com/google.protobuf.Struct"
#: The HTTP status a trace shows for a gRPC status (Google's mapping, google/rpc/code.proto).
_HTTP_OF = {
    "OK": 200,
    "CANCELLED": 499,
    "UNKNOWN": 500,
    "INVALID_ARGUMENT": 400,
    "DEADLINE_EXCEEDED": 504,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "PERMISSION_DENIED": 403,
    "RESOURCE_EXHAUSTED": 429,
    "FAILED_PRECONDITION": 400,
    "ABORTED": 409,
    "OUT_OF_RANGE": 400,
    "UNIMPLEMENTED": 501,
    "INTERNAL": 500,
    "UNAVAILABLE": 503,
    "DATA_LOSS": 500,
    "UNAUTHENTICATED": 401,
}


def grpc_target(url: str) -> tuple[str, bool]:
    """``(host:port, tls)`` for an interface URL (see the module docstring).

    Raises ``ValueError`` for a URL that names no host.
    """
    if "://" not in url:
        url = "grpc://" + url
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("grpc", "grpcs", "http", "https") or not parts.hostname:
        raise ValueError(f"not a gRPC address: {url!r} (use grpc://host:port or grpcs://...)")
    tls = scheme in ("grpcs", "https")
    port = parts.port or (443 if tls else 80)
    host = parts.hostname
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    return f"{host}:{port}", tls


_METADATA_KEY = re.compile(r"[0-9a-z_.-]+")


def _checked_metadata(metadata: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The headers as gRPC metadata: lower-cased keys of ``0-9 a-z _ . -`` and printable
    ASCII values (gRPC refuses others deep in a call, with an error naming nothing)."""
    out = []
    for key, value in metadata.items():
        name = key.lower()
        if not _METADATA_KEY.fullmatch(name) or name.endswith("-bin") or name.startswith("grpc-"):
            raise ValueError(f"header {key!r} cannot be sent as gRPC metadata")
        if not all(" " <= c <= "~" for c in value):
            raise ValueError(f"header {key!r}: gRPC metadata values are printable ASCII")
        out.append((name, value))
    return tuple(out)


def _details_of(error: Any) -> list[dict[str, Any]]:
    """The ``google.rpc.Status`` details of a failed call, as ProtoJSON objects."""
    for key, value in error.trailing_metadata() or ():
        if key != STATUS_DETAILS_KEY or not isinstance(value, bytes):
            continue
        try:
            status = status_pb2.Status.FromString(value)
        except Exception:  # protobuf's DecodeError: an agent's malformed bytes
            return [{"@type": "malformed google.rpc.Status"}]
        out: list[dict[str, Any]] = []
        for detail in status.details:
            try:
                doc = json_format.MessageToDict(detail)
            except Exception:  # a type this process does not know: kept by name
                doc = {"@type": detail.type_url}
            if doc.get("@type") == _STRUCT_TYPE and isinstance(doc.get("value"), dict):
                doc = {"@type": _STRUCT_TYPE, **doc["value"]}
            out.append(doc)
        return out
    return []


def _metadata_pairs(metadata: Any) -> list[tuple[str, str]]:
    pairs = []
    for key, value in metadata or ():
        text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        pairs.append((str(key), text if not str(key).endswith("-bin") else "[binary]"))
    return pairs


class GrpcSession:
    """One channel to an agent's gRPC interface, with fixed metadata.

    ``on_extensions(values, where)`` is told the ``a2a-extensions`` metadata of each
    answer (the activation echo); ``trace`` (when given) records every call as
    :class:`~hitl_nb.client.Trace` records HTTP exchanges, with the method ``GRPC``.
    """

    def __init__(
        self,
        url: str,
        metadata: Mapping[str, str],
        limits: HttpLimits,
        on_extensions: Callable[[list[str], str], None] | None = None,
        trace: Trace | None = None,
    ) -> None:
        target, tls = grpc_target(url)
        self.url = f"{'grpcs' if tls else 'grpc'}://{target}"
        self.limits = limits
        self.metadata = _checked_metadata(metadata)
        self._on_extensions = on_extensions
        self.trace = trace
        options = [
            ("grpc.max_receive_message_length", limits.max_body_size),
            ("grpc.max_send_message_length", limits.max_body_size),
            # An answer must never be resent by the channel on its own (exactly once).
            ("grpc.enable_retries", 0),
        ]
        if tls:
            credentials = grpc.ssl_channel_credentials()
            self.channel = grpc.aio.secure_channel(target, credentials, options=options)
        else:
            self.channel = grpc.aio.insecure_channel(target, options=options)
        self.stub = a2a_pb2_grpc.A2AServiceStub(self.channel)  # type: ignore[no-untyped-call]

    async def aclose(self) -> None:
        """Close the channel (calls still open are cancelled)."""
        await self.channel.close()

    # -- recording -------------------------------------------------------------------

    def _begin(self, method: str, what: str, doc: Any) -> Exchange | None:
        if self.trace is None:
            return None
        body = json.dumps(doc, ensure_ascii=False).encode()
        url = f"{self.url}/{GRPC_SERVICE}/{method}"
        return self.trace.begin("GRPC", url, what, self.metadata, body)

    def _answered(self, exchange: Exchange | None, metadata: Any) -> None:
        pairs = _metadata_pairs(metadata)
        if exchange is not None and self.trace is not None:
            self.trace.answered(exchange, 200, pairs)
            exchange.notes.append("gRPC status OK")
        if self._on_extensions is not None:
            values = [v for k, v in pairs if k.lower() == "a2a-extensions"]
            self._on_extensions(values, self.url)

    def _failed(self, exchange: Exchange | None, error: BaseException, grpc_error: Any) -> None:
        if exchange is None or self.trace is None:
            return
        if isinstance(error, A2AError) and grpc_error is not None:
            code = grpc_error.code().name
            # The answer's headers (initial metadata: the activation echo, sent before the
            # call failed) and its trailers (the status details), as HTTP/2 carried them.
            metadata = _metadata_pairs(grpc_error.initial_metadata()) + _metadata_pairs(
                grpc_error.trailing_metadata()
            )
            self.trace.answered(exchange, error.http_status, metadata)
            exchange.notes.append(f"gRPC status {code}")
            body = {
                "error": {
                    "code": error.http_status,
                    "status": code,
                    "message": grpc_error.details() or "",
                    "details": error.data if isinstance(error.data, list) else [],
                }
            }
            self.trace.body(exchange, json.dumps(body, ensure_ascii=False).encode())
        else:
            self.trace.failed(exchange, error)

    # -- errors ----------------------------------------------------------------------

    def _error(self, exc: Any, what: str) -> HitlError:
        code = exc.code().name
        text = exc.details() or code
        if code == "UNAVAILABLE" or code == "CANCELLED":
            return AgentUnreachable(f"{what}: cannot reach the agent over gRPC: {text}")
        if code == "DEADLINE_EXCEEDED":
            return AgentTimeout(f"{what}: the agent timed out (gRPC deadline): {text}")
        details = _details_of(exc)
        if not details and code == "RESOURCE_EXHAUSTED":
            return ProtocolViolation(
                f"{what}: a message over the limit of {self.limits.max_body_size} bytes "
                f"(max_body_size): {text}"
            )
        if not details and code == "INTERNAL" and "serializ" in text.lower():
            return ProtocolViolation(f"{what}: the agent's answer is not protobuf A2A: {text}")
        return from_grpc_status(code, exc.details() or "", details)

    def _request(self, name: str, doc: Any, what: str) -> Any:
        try:
            return _to_proto(name, doc)
        except WireDecodeError as exc:
            raise ProtocolViolation(f"{what}: cannot be sent over gRPC: {exc}") from exc

    def _decode(self, message: Any, what: str) -> dict[str, Any]:
        if message is None:  # grpc logs the parse error and hands over nothing
            raise ProtocolViolation(f"{what}: the agent's answer is not protobuf A2A")
        try:
            return _from_proto(message)
        except WireDecodeError as exc:
            raise ProtocolViolation(f"{what}: the agent's answer has no JSON form: {exc}") from exc

    # -- calls -----------------------------------------------------------------------

    async def unary(self, method: str, request: str, doc: Any, what: str) -> dict[str, Any]:
        """Call ``method`` with the ``request`` message made from ``doc``; its answer's JSON."""
        message = self._request(request, doc, what)
        exchange = self._begin(method, what, doc)
        call = getattr(self.stub, method)(
            message, metadata=self.metadata, timeout=self.limits.timeout
        )
        try:
            answer = await call
            self._answered(exchange, await call.initial_metadata())
            out = self._decode(answer, what)
        except grpc.aio.AioRpcError as exc:
            error = self._error(exc, what)
            self._failed(exchange, error, exc)
            raise error from exc
        except BaseException as exc:
            self._failed(exchange, exc, None)
            raise
        if exchange is not None and self.trace is not None:
            self.trace.body(exchange, json.dumps(out, ensure_ascii=False).encode())
        return out

    async def stream(
        self, method: str, request: str, doc: Any, what: str
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Open the server stream ``method`` and yield each answer's JSON. Closing the
        iterator cancels the call."""
        message = self._request(request, doc, what)
        exchange = self._begin(method, what, doc)
        call = getattr(self.stub, method)(message, metadata=self.metadata)
        trace = self.trace
        try:
            first = True
            while True:
                try:
                    item = await asyncio.wait_for(call.read(), self.limits.stream_idle_timeout)
                except asyncio.TimeoutError:
                    raise AgentTimeout(
                        f"{what}: the stream was silent for {self.limits.stream_idle_timeout} s "
                        "(stream_idle_timeout)"
                    ) from None
                if first:
                    first = False
                    self._answered(exchange, await call.initial_metadata())
                if item is grpc.aio.EOF:
                    break
                out = self._decode(item, what)
                if exchange is not None and trace is not None:
                    trace.event(exchange, None, json.dumps(out, ensure_ascii=False))
                yield out
        except grpc.aio.AioRpcError as exc:
            error = self._error(exc, what)
            self._failed(exchange, error, exc)
            raise error from exc
        except Exception as exc:
            self._failed(exchange, exc, None)
            raise
        finally:
            call.cancel()
            if exchange is not None and trace is not None:
                trace.done(exchange)


#: The push-configuration operations: the rpc and its request message.
_PUSH_RPCS = {
    "push_create": ("CreateTaskPushNotificationConfig", "TaskPushNotificationConfig"),
    "push_get": ("GetTaskPushNotificationConfig", "GetTaskPushNotificationConfigRequest"),
    "push_list": ("ListTaskPushNotificationConfigs", "ListTaskPushNotificationConfigsRequest"),
    "push_delete": ("DeleteTaskPushNotificationConfig", "DeleteTaskPushNotificationConfigRequest"),
}


class GrpcBinding(Binding):
    """A2A 1.0 over gRPC (§10), through one :class:`GrpcSession`."""

    name = "GRPC"

    def __init__(self, session: GrpcSession, url: str, codec: Codec) -> None:
        if codec.version != "1.0":
            raise ValueError("the gRPC binding is spoken for A2A 1.0 only")
        self.session = session
        self.url = url
        self.codec = codec
        self.version = codec.version
        self.stable_order = False

    async def _events(
        self, method: str, request: str, doc: Any, what: str
    ) -> AsyncGenerator[WireEvent, None]:
        async for data in self.session.stream(method, request, doc, what):
            yield None, self._decode(self.codec.decode_stream_response, data, "", what), data

    async def send(self, message: Message, *, return_immediately: bool = False) -> SendResult:
        """SendMessage."""
        doc = self._send_params(message, return_immediately)
        result = await self.session.unary("SendMessage", "SendMessageRequest", doc, "SendMessage")
        return self._decode(self.codec.decode_send_result, result, "", "SendMessage")

    def stream(self, message: Message) -> AsyncGenerator[WireEvent, None]:
        """SendStreamingMessage (a server stream of StreamResponse)."""
        doc = self._send_params(message, False)
        return self._events(
            "SendStreamingMessage", "SendMessageRequest", doc, "SendStreamingMessage"
        )

    def subscribe(
        self, task_id: str, last_event_id: str | None = None
    ) -> AsyncGenerator[WireEvent, None]:
        """SubscribeToTask; gRPC numbers no events, so ``last_event_id`` is not sent (the
        task snapshot the stream opens with is the resume point)."""
        doc = {"id": task_id}
        return self._events("SubscribeToTask", "SubscribeToTaskRequest", doc, "SubscribeToTask")

    async def get_task(self, task_id: str, history_length: int | None = None) -> Task:
        """GetTask."""
        doc: dict[str, Any] = {"id": task_id}
        if history_length is not None:
            doc["historyLength"] = history_length
        result = await self.session.unary("GetTask", "GetTaskRequest", doc, "GetTask")
        return self._decode(self.codec.decode_task, result, "", "GetTask")

    async def list_tasks(self, filters: dict[str, Any]) -> TaskPage:
        """ListTasks."""
        doc = dict(filters)
        if isinstance(doc.get("status"), TaskState):
            doc["status"] = self.codec.state_to_wire(doc["status"])
        result = await self.session.unary("ListTasks", "ListTasksRequest", doc, "ListTasks")
        return self._page(result, "ListTasks")

    async def cancel(self, task_id: str) -> Task:
        """CancelTask."""
        doc = {"id": task_id}
        result = await self.session.unary("CancelTask", "CancelTaskRequest", doc, "CancelTask")
        return self._decode(self.codec.decode_task, result, "", "CancelTask")

    async def push_call(
        self, op: str, task_id: str, config_id: str | None, body: dict[str, Any]
    ) -> Any:
        """The push-configuration rpcs (§10.4.7-10.4.10); ``body`` is their 1.0 JSON."""
        if op not in _PUSH_RPCS:
            raise UnsupportedOperation(f"A2A gRPC has no {op} rpc")
        method, request = _PUSH_RPCS[op]
        return await self.session.unary(method, request, body, method)
