"""The ASGI middleware in front of an a2a-sdk server: what the SDK has no hook for.

a2a-sdk 1.x serves A2A from plain Starlette routes. Its public extension points (the
executor, the request handler, the call-context builder, the stores) cannot do what
follows, which hitl-prompt/v1 and A2A ask, so :class:`HitlMiddleware` does it around the
routes, on the HTTP exchange only (``docs/agent.md`` lists each gap for an upstream
report):

1. **Activation and echo** (§Activation): a request activates the extension with the
   ``A2A-Extensions`` header (``X-A2A-Extensions`` in A2A 0.3); every response to it
   names the URI in the same header. The SDK reads the header into
   ``ServerCallContext.requested_extensions`` but never writes one back.
2. **Answers checked before the executor** (§Acceptance and rejection): a send request is
   read (JSON-RPC ``SendMessage`` / ``SendStreamingMessage`` / 0.3 ``message/send`` /
   ``message/stream``, HTTP+JSON ``POST .../message:send|stream``), and an answer is
   checked by the :class:`~hitl_nb.agent._gate.Gate`; a rejection is written here, in
   the shapes of :mod:`hitl_nb._wire_errors` (-32010 / 409, -32011 / 422 with
   ``validation_errors``). The SDK cannot send either: its error tables are
   module-level dicts keyed by its own classes, and an executor that raises fails the
   task. An answer refused later, by a check only the executor can make (LangGraph's
   own validation of a Pydantic schema), is written here too, in place of the SDK's
   response, when the executor emitted nothing for it.
3. **No envelope without activation**: the envelope is taken out of the JSON and the
   server-sent events of every response to a request that did not activate it
   (:func:`~hitl_nb.agent._views.strip_envelopes`).
4. **The card's entry written out whole**: ``"required": false`` (the SDK's protobuf
   card leaves false booleans out); and the card's caching headers the SDK does not
   write (A2A 1.0 §8.6): ``Cache-Control: max-age`` when the app set none (SHOULD),
   ``Last-Modified`` (MAY: when this text of the card was first served) and a 304 for an
   ``If-Modified-Since`` it satisfies (the SDK answers ``If-None-Match`` itself).
5. **A stream on an existing task begins with the Task** (A2A 1.0 §3.1.2: "the stream
   MUST begin with the Task object"): the SDK opens such a stream (an answer, say) with
   the executor's first status update, and an executor cannot send the Task instead (the
   SDK drops it and the request's message with it). The first status update is sent as
   the Task it made, read from the store (as the SDK's blocking send returns it); any
   other first event gets the stored Task before it.

Bodies are read whole, as the SDK reads them, and go on to the SDK unchanged; only those
naming a task or carrying ``hitl_response_for`` are parsed, with the strict parser
(duplicate keys, NaN, a lone UTF-16 surrogate, depth), and only up to ``max_body``
bytes. A larger body carrying ``hitl_response_for`` anywhere is refused (413 / -32600),
however its chunks fall; any other larger body is passed through unparsed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from email.utils import format_datetime
from typing import Any

from hitl_nb import _wire_errors
from hitl_nb._json import lone_surrogate, parse_json
from hitl_nb.a2a import (
    CARD_MAX_AGE,
    CODEC_V03,
    CODEC_V1,
    CardStamps,
    Codec,
    Message,
    not_modified,
)
from hitl_nb.errors import (
    A2AError,
    BadJSON,
    InvalidParams,
    JSONParseError,
    PayloadTooLarge,
    PromptConflict,
    ResponseInvalid,
    WireDecodeError,
)
from hitl_nb.spec import EXTENSION_URI, HEADER_EXTENSIONS, HEADER_EXTENSIONS_V03, RESPONSE_KEY

from ._gate import Gate, TaskReader
from ._prompts import Hold
from ._views import declare_in_card, strip_envelopes

__all__ = ["HitlMiddleware", "SendRequest", "TaskSnapshot"]

Scope = MutableMapping[str, Any]
AsgiMessage = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[AsgiMessage]]
Send = Callable[[AsgiMessage], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Bodies are read whole up to this many bytes before the SDK gets them.
MAX_BODY_BYTES = 4 * 1024 * 1024
#: JSON nesting a request may have (the validator bounds a payload at 32, S-2).
MAX_BODY_DEPTH = 64

_V1_SENDS = ("SendMessage", "SendStreamingMessage")
_V03_SENDS = ("message/send", "message/stream")
_REST_SENDS = ("/message:send", "/message:stream")
_REST_V03_SENDS = ("/v1/message:send", "/v1/message:stream")
_CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")


#: Reads a task as JSON in an A2A version ("1.0", "0.3"), its history cut to a length
#: (None: whole), for the request at hand (None: no such task).
TaskSnapshot = Callable[[str, str, "int | None"], Awaitable["dict[str, Any] | None"]]


@dataclass(frozen=True)
class SendRequest:
    """A send request, as read off the wire: its binding, version, JSON-RPC id, message,
    whether it streams, and the history length it asks for."""

    rpc: bool
    version: str
    request_id: Any
    message: Message
    stream: bool = False
    history_length: int | None = None


def _header(scope: Scope, name: str) -> list[str]:
    key = name.lower().encode("latin-1")
    return [v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == key]


def _activated(scope: Scope) -> tuple[bool, bool]:
    """(activated, through the 0.3 header) for a request."""

    def names(header: str) -> bool:
        values = _header(scope, header)
        return any(v.strip() == EXTENSION_URI for value in values for v in value.split(","))

    legacy = names(HEADER_EXTENSIONS_V03)
    return names(HEADER_EXTENSIONS) or legacy, legacy


def _major_one(scope: Scope) -> bool:
    """Does the request ask for A2A 1.x (the SDK's rule: the header's major version)?"""
    values = _header(scope, "A2A-Version")
    return bool(values) and values[0].strip().split(".")[0] == "1"


class HitlMiddleware:
    """ASGI middleware adding hitl-prompt/v1 to an a2a-sdk server (see the module doc).

    ``gate`` checks answers; ``reader(scope)`` gives the task reader for one request (the
    SDK's task store, seen with that request's call context); ``snapshot(scope)`` reads a
    task whole for one request, to open a stream on an existing task with it (None: such
    streams are left as the SDK sends them); ``max_body`` bounds the bodies read whole.
    """

    def __init__(
        self,
        app: App,
        *,
        gate: Gate,
        reader: Callable[[Scope], TaskReader],
        snapshot: Callable[[Scope], TaskSnapshot] | None = None,
        max_body: int = MAX_BODY_BYTES,
    ) -> None:
        self.app = app
        self.gate = gate
        self.reader = reader
        self.snapshot = snapshot
        self.max_body = max_body
        #: When each text of the card was first served, per Host (its Last-Modified).
        self.card_stamps = CardStamps()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        activated, legacy = _activated(scope)
        path = scope.get("path", "")
        reply = _Reply(send, activated=activated, legacy=legacy)
        if scope["method"] == "GET" and path.endswith(_CARD_PATHS):
            reply.card = _CardRequest(scope, self.card_stamps)
        if scope["method"] != "POST" or path.endswith(_REST_V03_SENDS):
            # (A2A 0.3's HTTP+JSON routes, /v1/message:send, are left to the SDK.)
            await self.app(scope, receive, reply)
            return
        body, complete = await _read_body(receive)
        replay = _replayed(body, receive, complete)
        # Over the limit by the byte count alone, wherever the chunks end and wherever in
        # the body the answer's key lies: one answer for every answer too large to read.
        whole = complete and len(body) <= self.max_body
        if not (b"hitl_response_for" in body or b"taskId" in body):
            await self.app(scope, replay, reply)
            return
        rest = path.endswith(_REST_SENDS)
        try:
            if not whole:
                if RESPONSE_KEY.encode() in body:
                    raise PayloadTooLarge(f"an answer over {self.max_body} bytes")
                await self.app(scope, replay, reply)
                return
            request = self._read(scope, body, rest)
            held = None
            if request is not None:
                held = await self.gate.check(request.message, self.reader(scope))
        except A2AError as exc:
            await reply.error(exc, rpc=not rest, version=_version_of(body, rest), rid=_id(body))
            return
        if request is not None:
            reply.request = request
            if request.stream and request.message.task_id and self.snapshot is not None:
                reply.opening = self.snapshot(scope)
        if held is None:
            await self.app(scope, replay, reply)
            return
        reply.held = held
        try:
            await self.app(scope, replay, reply)
        finally:
            self.gate.book.release(held)

    def _read(self, scope: Scope, body: bytes, rest: bool) -> SendRequest | None:
        """The send request in ``body``; None when it is not one this gate checks.

        Raises JSONParseError (a body carrying an answer that is not acceptable JSON) or
        InvalidParams (an answer's message that is not A2A).
        """
        answer = RESPONSE_KEY.encode() in body
        try:
            doc = parse_json(body, max_bytes=self.max_body, max_depth=MAX_BODY_DEPTH)
        except BadJSON as exc:
            if answer:
                raise JSONParseError(str(exc)) from None
            return None
        if not isinstance(doc, dict):
            return None
        rid: Any = None
        params: Any
        if rest:
            version, codec, params = "1.0", CODEC_V1, doc
            stream = scope.get("path", "").endswith(_REST_SENDS[1])
        else:
            method = doc.get("method")
            if doc.get("jsonrpc") != "2.0" or method not in (*_V1_SENDS, *_V03_SENDS):
                return None
            rid = doc.get("id")
            if method in _V1_SENDS:
                version, codec = "1.0", CODEC_V1
            else:
                version, codec = "0.3", CODEC_V03
            params = doc.get("params")
            stream = method in (_V1_SENDS[1], _V03_SENDS[1])
        if (version == "1.0" and not _major_one(scope)) or not isinstance(params, dict):
            return None  # the SDK's own answer: VersionNotSupported, InvalidParams
        message = _message(params, codec, answer)
        if message is None:
            return None
        return SendRequest(not rest, version, rid, message, stream, _history_length(params))


def _message(params: dict[str, Any], codec: Codec, answer: bool) -> Message | None:
    """The request's message (None: not A2A, left to the SDK; InvalidParams when it
    carries an answer)."""
    try:
        return codec.decode_message(params.get("message"), "/message")
    except WireDecodeError as exc:
        if answer:
            raise InvalidParams(str(exc)) from None
        return None


def _history_length(params: dict[str, Any]) -> int | None:
    """``configuration.historyLength`` of a send (None: not given; the SDK checks it)."""
    configuration = params.get("configuration")
    value = configuration.get("historyLength") if isinstance(configuration, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _version_of(body: bytes, rest: bool) -> str:
    return "0.3" if not rest and b'"message/' in body else "1.0"


def _id(body: bytes) -> Any:
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        return None
    rid = doc.get("id") if isinstance(doc, dict) else None
    if isinstance(rid, str) and lone_surrogate(rid) is not None:
        return None  # not to be written back: no JSON reader should take it
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    """The request body: ``(body, complete)`` (not complete: the client went away).

    Read to its end whatever its size, as the SDK reads it (Starlette's ``body()``): a
    body over the limit is refused when it carries an answer anywhere, the first byte
    to the last, and handed on unchanged when it does not.
    """
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), True


def _replayed(body: bytes, receive: Receive, whole: bool) -> Receive:
    """A ``receive`` that gives the app the body read so far, then the rest."""
    sent = False

    async def replay() -> AsgiMessage:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": not whole}
        return await receive()

    return replay


class _Reply:
    """The ``send`` the app is given: the echo, the card, envelopes taken out, a stream on
    an existing task opened with the Task, and an answer refused by the executor written
    in place of the SDK's response."""

    def __init__(self, send: Send, *, activated: bool, legacy: bool) -> None:
        self.send = send
        self.activated = activated
        self.legacy = legacy
        #: The card's request, when this answers one.
        self.card: _CardRequest | None = None
        self.held: Hold | None = None
        self.request: SendRequest | None = None
        #: Reads the task to open this stream with (None: the stream goes as it is).
        self.opening: TaskSnapshot | None = None
        self._start: AsgiMessage | None = None
        self._mode = "pass"  # pass | buffer | sse | drop
        self._chunks: list[bytes] = []
        self._tail = b""

    async def __call__(self, message: AsgiMessage) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            await self._begin(message)
        elif kind == "http.response.body":
            await self._body(message)
        else:
            await self.send(message)

    def _headers(self, message: AsgiMessage) -> list[tuple[bytes, bytes]]:
        headers = [(bytes(k), bytes(v)) for k, v in message.get("headers", [])]
        if self.activated:
            for name, wanted in ((HEADER_EXTENSIONS, True), (HEADER_EXTENSIONS_V03, self.legacy)):
                if wanted:
                    headers = _named(headers, name.lower().encode())
        return headers

    async def _begin(self, message: AsgiMessage) -> None:
        held = self.held
        if held is not None and held.refusal is not None and self.request is not None:
            self._mode = "drop"  # the executor refused the answer and emitted nothing
            await self.error(
                held.refusal,
                rpc=self.request.rpc,
                version=self.request.version,
                rid=self.request.request_id,
            )
            return
        message = {**message, "headers": self._headers(message)}
        kind = _content_type(message)
        if self.card is not None and message.get("status") == 200 and "json" in kind:
            self._mode = "card"
        elif not self.activated and "json" in kind:
            self._mode = "buffer"
        elif "event-stream" in kind and (not self.activated or self.opening is not None):
            self._mode = "sse"
        if self._mode in ("card", "buffer"):
            self._start = message
            return
        if self.card is not None and message.get("status") == 304:
            # The SDK's answer to If-None-Match: a 304 carries the Cache-Control its 200
            # would have (RFC 9110 §15.4.5).
            message["headers"] = self.card.lasting(message["headers"])
        await self.send(message)

    async def _body(self, message: AsgiMessage) -> None:
        chunk = bytes(message.get("body", b""))
        more = bool(message.get("more_body", False))
        if self._mode == "drop":
            return
        if self._mode == "pass":
            await self.send(message)
        elif self._mode == "sse":
            ready = self._events(chunk, final=not more)
            if self.opening is not None and b"data:" in ready:
                ready = await self._open_with_task(ready)
            if not self.activated and EXTENSION_URI.encode() in ready:
                ready = b"".join(_strip_line(line) for line in ready.splitlines(keepends=True))
            await self.send({**message, "body": ready})
        else:
            self._chunks.append(chunk)
            if not more:
                await self._flush(b"".join(self._chunks))

    async def _flush(self, body: bytes) -> None:
        assert self._start is not None
        if EXTENSION_URI.encode() in body:
            try:
                doc = json.loads(body)
            except (ValueError, RecursionError):
                doc = None
            rewrite = declare_in_card if self._mode == "card" else strip_envelopes
            if doc is not None and rewrite(doc):
                body = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
        headers = [(k, v) for k, v in self._start["headers"] if k.lower() != b"content-length"]
        start = self._start
        if self._mode == "card" and self.card is not None:
            headers, fresh = self.card.cached(headers, body)
            if fresh:
                start, body = {**start, "status": 304}, b""
                headers = [(k, v) for k, v in headers if k.lower() != b"content-type"]
        if start["status"] != 304:
            headers.append((b"content-length", str(len(body)).encode()))
        await self.send({**start, "headers": headers})
        await self.send({"type": "http.response.body", "body": body, "more_body": False})

    def _events(self, chunk: bytes, *, final: bool) -> bytes:
        """Complete events of the stream so far; the rest kept for the next chunk."""
        data = self._tail + chunk
        cut = max(data.rfind(b"\n\n"), data.rfind(b"\r\n\r\n"), data.rfind(b"\r\r"))
        if final:
            ready, self._tail = data, b""
        elif cut < 0:
            self._tail = data
            return b""
        else:
            end = cut + (4 if data[cut : cut + 4] == b"\r\n\r\n" else 2)
            ready, self._tail = data[:end], data[end:]
        return ready

    async def _open_with_task(self, ready: bytes) -> bytes:
        """The stream's first events (``ready`` holds the first ``data:`` line) opened
        with the Task; only the first event is looked at."""
        request = self.request
        assert self.opening is not None and request is not None and request.message.task_id
        lines = ready.splitlines(keepends=True)
        at = next((i for i, line in enumerate(lines) if line.startswith(b"data:")), None)
        if at is None:
            return ready  # comments only: the first event is still to come
        opening, self.opening = self.opening, None
        line = lines[at]
        end = len(line.rstrip(b"\r\n"))
        try:
            doc = json.loads(line[5:end])
        except (ValueError, RecursionError):
            return ready
        payload = doc.get("result") if request.rpc and isinstance(doc, dict) else doc
        kind = _event_kind(payload, request.version)
        if kind is None:
            return ready  # a Task or Message already, or an error
        task = await opening(request.message.task_id, request.version, request.history_length)
        if task is None:
            return ready
        eol = line[end:] or b"\n"
        if kind == "status":
            # The Task as that update left it: the update's own status, not a later one.
            task["status"] = _status_of(payload, request.version)
            lines[at] = _data_line(_wrapped(doc, task, request), eol)
            return b"".join(lines)
        return _data_line(_wrapped(doc, task, request), eol) + eol + ready

    async def error(self, exc: A2AError, *, rpc: bool, version: str, rid: Any) -> None:
        """Answer with ``exc`` in the request's binding and version."""
        status = 200
        if rpc:
            obj: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": rid,
                "error": _wire_errors.jsonrpc_error(exc, version),
            }
            if version == "0.3" and isinstance(exc, (PromptConflict, ResponseInvalid)):
                # As the mock agent: the spec's example (written for A2A 0.3) pairs the
                # JSON-RPC error with HTTP 409 / 422; 1.0 keeps HTTP 200.
                status = exc.http_status
        else:
            obj = _wire_errors.rest_error_body(exc)
            status = exc.http_status
        body = json.dumps(obj, separators=(",", ":")).encode()
        start = {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
        await self.send({**start, "headers": self._headers(start)})
        await self.send({"type": "http.response.body", "body": body, "more_body": False})


class _CardRequest:
    """A GET of the agent card: the caching headers its 200 gets, and whether the client's
    copy is current (``If-Modified-Since``; ``If-None-Match`` decides when sent)."""

    def __init__(self, scope: Scope, stamps: CardStamps) -> None:
        host = _header(scope, "host")
        self.base = host[0] if host else ""
        if_none_match = _header(scope, "if-none-match")
        self.if_none_match = if_none_match[0] if if_none_match else None
        if_modified_since = _header(scope, "if-modified-since")
        self.if_modified_since = if_modified_since[0] if if_modified_since else None
        self.stamps = stamps

    def cached(
        self, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> tuple[list[tuple[bytes, bytes]], bool]:
        """``headers`` with ``Cache-Control`` (unless the app set one) and
        ``Last-Modified``; and whether the answer is 304 Not Modified."""
        digest, modified = self.stamps.stamp(self.base, body)
        etag = next((v.decode("latin-1") for k, v in headers if k.lower() == b"etag"), digest)
        out = self.lasting(headers)
        if b"last-modified" not in {k.lower() for k, _ in out}:
            out.append((b"last-modified", format_datetime(modified, usegmt=True).encode()))
        fresh = not_modified(self.if_none_match, self.if_modified_since, etag, modified)
        return out, fresh

    @staticmethod
    def lasting(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        """``headers`` with ``Cache-Control: max-age`` unless the app set one."""
        if any(k.lower() == b"cache-control" for k, _ in headers):
            return list(headers)
        return [*headers, (b"cache-control", f"max-age={CARD_MAX_AGE}".encode())]


def _event_kind(payload: Any, version: str) -> str | None:
    """Is a stream event a status update ("status"), another task update ("update"), or
    (None) a Task, a Message or an error?"""
    if not isinstance(payload, dict):
        return None
    if version == "0.3":
        kind = payload.get("kind")
        return {"status-update": "status", "artifact-update": "update"}.get(str(kind))
    if "statusUpdate" in payload:
        return "status"
    return "update" if "artifactUpdate" in payload else None


def _status_of(payload: Any, version: str) -> Any:
    return payload["status"] if version == "0.3" else payload["statusUpdate"]["status"]


def _wrapped(doc: Any, task: dict[str, Any], request: SendRequest) -> Any:
    """A stream event carrying ``task``, in the request's binding and version."""
    result = task if request.version == "0.3" else {"task": task}
    return {**doc, "result": result} if request.rpc else result


def _data_line(doc: Any, eol: bytes) -> bytes:
    return b"data: " + json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode() + eol


def _named(headers: list[tuple[bytes, bytes]], name: bytes) -> list[tuple[bytes, bytes]]:
    """``headers`` with ``name`` listing the extension's URI (added to what is there)."""
    uri = EXTENSION_URI.encode()
    for i, (key, value) in enumerate(headers):
        if key.lower() == name:
            if uri not in [v.strip() for v in value.split(b",")]:
                headers[i] = (key, value + b", " + uri if value.strip() else uri)
            return headers
    return [*headers, (name, uri)]


def _content_type(message: AsgiMessage) -> str:
    for key, value in message.get("headers", []):
        if bytes(key).lower() == b"content-type":
            return bytes(value).decode("latin-1").lower()
    return ""


def _strip_line(line: bytes) -> bytes:
    """One SSE line: a ``data:`` line carrying JSON has its envelopes taken out."""
    if not line.startswith(b"data:") or EXTENSION_URI.encode() not in line:
        return line
    end = len(line.rstrip(b"\r\n"))
    try:
        doc = json.loads(line[5:end])
    except (ValueError, RecursionError):
        return line
    strip_envelopes(doc)
    return b"data: " + json.dumps(doc, separators=(",", ":")).encode() + line[end:]
