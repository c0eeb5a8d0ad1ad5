"""The little raw gRPC the harness needs, and what it records of every gRPC call.

On the gRPC binding (A2A 1.0 §10) the harness talks through the client's gRPC binding
like on the others; two things need more than the client shows:

- :class:`CallWatch`, a :class:`~hitl_nb.client.Trace` the harness hands its clients:
  each finished gRPC call becomes one record (its method, its gRPC status code, whether
  the call activated the extension, what the answer's ``a2a-extensions`` metadata
  echoed), the counterpart of what the HTTP response hook records for HTTP. Every
  exchange is passed on to the run's own trace when there is one.
- :class:`GrpcSubscription`, SubscribeToTask opened with a2a-sdk's generated stub and
  read message by message, so CF-6 can cut the call in the middle (cancelling it) and
  open a new one. gRPC numbers no events, so there is no ``Last-Event-ID``: the replay
  a resubscription gets is the Task snapshot A2A 1.0 §3.1.6 makes the stream begin with.

Requests are made as the JSON bindings make them (A2A 1.0 JSON) and turned into the
SDK's protobuf messages by :func:`hitl_nb.a2a.to_proto`; no message is written by hand.
This module imports ``grpc``: the session imports it only for an agent whose card lists
a gRPC interface.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from typing import Any, NoReturn
from urllib.parse import urlsplit

import grpc
import grpc.aio

from hitl_nb.a2a import GRPC_SERVICE, Codec, StreamEvent, from_proto, to_proto
from hitl_nb.client import Exchange, Trace
from hitl_nb.errors import ProtocolViolation, WireDecodeError

__all__ = ["CallWatch", "GrpcSubscription", "grpc_code_of", "grpc_target"]

_STATUS_NOTE = "gRPC status "


def grpc_code_of(exchange: Exchange) -> str | None:
    """The gRPC status code a traced gRPC call ended with (None: it never got one)."""
    for note in exchange.notes:
        if note.startswith(_STATUS_NOTE):
            return note[len(_STATUS_NOTE) :]
    return None


class CallWatch(Trace):
    """A trace that tells ``on_call`` of every gRPC call once it is over.

    It keeps nothing itself: each exchange goes to ``inner`` (the run's trace) when there
    is one; without, it is made here and kept only as long as the call lasts (no bodies).
    """

    def __init__(self, inner: Trace | None, on_call: Callable[[Exchange], None]) -> None:
        super().__init__(max_exchanges=1)
        self.inner = inner
        self._on_call = on_call
        self._open: dict[int, Exchange] = {}

    def begin(
        self, method: str, url: str, what: str, headers: Iterable[tuple[str, str]], body: bytes
    ) -> Exchange:
        """Start recording a call (in the run's trace, if any)."""
        headers = list(headers)
        if self.inner is not None:
            exchange = self.inner.begin(method, url, what, headers, body)
        else:
            exchange = Exchange(0, what, method, url, "")
            exchange.request_headers = headers
        if method == "GRPC":
            self._open[id(exchange)] = exchange
        return exchange

    def answered(self, exchange: Exchange, status: int, headers: Iterable[tuple[str, str]]) -> None:
        """The answer's status and (initial or trailing) metadata arrived."""
        if self.inner is not None:
            self.inner.answered(exchange, status, headers)
        else:
            exchange.status = status
            exchange.response_headers = list(headers)

    def body(self, exchange: Exchange, raw: bytes) -> None:
        """The whole answer arrived: the call is over."""
        if self.inner is not None:
            self.inner.body(exchange, raw)
        self._over(exchange)

    def event(self, exchange: Exchange, event_id: str | None, data: str) -> None:
        """One message of a stream."""
        if self.inner is not None:
            self.inner.event(exchange, event_id, data)

    def failed(self, exchange: Exchange, error: BaseException) -> None:
        """The call ended with an error on the client's side."""
        if self.inner is not None:
            self.inner.failed(exchange, error)
        elif exchange.error is None:
            exchange.error = f"{type(error).__name__}: {error}"[:2000]
        self._over(exchange)

    def done(self, exchange: Exchange) -> None:
        """The stream is over."""
        if self.inner is not None:
            self.inner.done(exchange)
        self._over(exchange)

    def _over(self, exchange: Exchange) -> None:
        if self._open.pop(id(exchange), None) is not None:
            self._on_call(exchange)


def grpc_target(url: str) -> tuple[str, bool]:
    """``(host:port, tls)`` of a gRPC interface URL (``grpc://``, ``grpcs://``, ``http(s)://``
    or a bare ``host:port``, as the client reads it)."""
    parts = urlsplit(url if "://" in url else "grpc://" + url)
    tls = parts.scheme.lower() in ("grpcs", "https")
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return f"{host}:{parts.port or (443 if tls else 80)}", tls


class GrpcSubscription:
    """One SubscribeToTask call read message by message; :meth:`cut` cancels it.

    The same interface as :class:`~hitl_nb.conformance._wire.RawSubscription` (``open``,
    ``next``, ``cut``); ``on_answer(exchange)`` is told how the call was answered (its
    status code once refused, ``"OK"`` once a first message came), as the client's calls
    are recorded. ``timeout``: how long :meth:`open` waits for the first message.
    """

    def __init__(
        self,
        *,
        url: str,
        codec: Codec,
        metadata: dict[str, str],
        task_id: str,
        trace: Trace | None = None,
        on_answer: Callable[[Exchange], None] | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.codec = codec
        self._timeout = timeout
        self._first: Any = None
        self.task_id = task_id
        self.last_event_id = None
        self._target, tls = grpc_target(url)
        self._url = f"{'grpcs' if tls else 'grpc'}://{self._target}/{GRPC_SERVICE}/SubscribeToTask"
        self._tls = tls
        self._metadata = tuple((k.lower(), v) for k, v in metadata.items())
        self._trace = trace
        self._on_answer = on_answer
        self._channel: Any = None
        self._call: Any = None
        self._exchange: Exchange | None = None
        self.ended = False

    async def open(self) -> None:
        """Start the call; raises ProtocolViolation when the agent refuses it."""
        from a2a.types import a2a_pb2_grpc

        doc = {"id": self.task_id}
        body = json.dumps(doc).encode()
        self._exchange = Exchange(0, "SubscribeToTask (raw)", "GRPC", self._url, "")
        self._exchange.request_headers = list(self._metadata)
        if self._trace is not None:
            self._exchange = self._trace.begin(
                "GRPC", self._url, "SubscribeToTask (raw)", self._metadata, body
            )
        if self._tls:
            self._channel = grpc.aio.secure_channel(self._target, grpc.ssl_channel_credentials())
        else:
            self._channel = grpc.aio.insecure_channel(self._target)
        stub = a2a_pb2_grpc.A2AServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._call = stub.SubscribeToTask(
            to_proto("SubscribeToTaskRequest", doc), metadata=self._metadata
        )
        # A refusal comes as the call's status, before any message: read the first one
        # now (kept for next()), so that open() says what the agent answered, as on HTTP.
        try:
            self._first = await asyncio.wait_for(self._call.read(), self._timeout)
        except grpc.aio.AioRpcError as exc:
            await self._refused(exc)
        except asyncio.TimeoutError:
            await self.cut()
            raise ProtocolViolation(
                f"SubscribeToTask sent nothing within {self._timeout:g} s"
            ) from None
        self._answered(200, await self._call.initial_metadata() or (), "OK")

    def _answered(self, status: int, metadata: Any, code: str) -> None:
        assert self._exchange is not None
        pairs = [(str(k), v if isinstance(v, str) else "[binary]") for k, v in metadata]
        if self._trace is not None:
            self._trace.answered(self._exchange, status, pairs)
        else:
            self._exchange.status, self._exchange.response_headers = status, pairs
        self._exchange.notes.append(_STATUS_NOTE + code)
        if self._on_answer is not None:
            self._on_answer(self._exchange)

    async def _refused(self, exc: Any) -> NoReturn:
        code = exc.code().name
        self._answered(_HTTP_OF.get(code, 500), exc.trailing_metadata() or (), code)
        await self.cut()
        raise ProtocolViolation(
            f"SubscribeToTask answered gRPC status {code} instead of a stream: {exc.details()}"
        )

    async def next(self, timeout: float) -> tuple[str | None, StreamEvent] | None:
        """The next ``(None, event)``; None when the agent ended the stream.

        Raises ``asyncio.TimeoutError`` after ``timeout`` seconds of silence.
        """
        assert self._call is not None, "open() first"
        if self.ended:
            return None
        if self._first is not None:
            item, self._first = self._first, None
        else:
            try:
                item = await asyncio.wait_for(self._call.read(), timeout)
            except grpc.aio.AioRpcError as exc:
                if exc.code() == grpc.StatusCode.CANCELLED:
                    self.ended = True
                    return None
                raise ProtocolViolation(
                    f"SubscribeToTask ended with gRPC status {exc.code().name}: {exc.details()}"
                ) from exc
        if item is grpc.aio.EOF:
            await self.cut()
            return None
        try:
            data = from_proto(item)
            event: StreamEvent = self.codec.decode_stream_response(data)
        except WireDecodeError as exc:
            raise ProtocolViolation(f"a subscription message does not decode: {exc}") from exc
        if self._trace is not None and self._exchange is not None:
            self._trace.event(self._exchange, None, json.dumps(data, ensure_ascii=False))
        return None, event

    async def cut(self) -> None:
        """Cancel the call and close its channel, whatever the agent still has to send."""
        if self._call is not None:
            self._call.cancel()
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
        if self._trace is not None and self._exchange is not None and not self.ended:
            self._trace.done(self._exchange)
        self.ended = True


#: The HTTP status a record shows for a gRPC status (google/rpc/code.proto's mapping).
_HTTP_OF = {
    "CANCELLED": 499,
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
    "UNAVAILABLE": 503,
    "UNAUTHENTICATED": 401,
}
