"""HTTP plumbing shared by both bindings: headers, bounded bodies, SSE streams.

Nothing here knows JSON-RPC or REST; it returns parsed JSON (with the status) and
yields ``(event_id, data)`` pairs from ``text/event-stream`` answers. Every httpx and
parsing failure is translated here, with ``raise ... from``.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from hitl_nb._json import parse_json
from hitl_nb.a2a import SSEParser
from hitl_nb.errors import BadJSON, ProtocolViolation

from ._errors import from_httpx
from ._exchange import Exchange, redact_headers
from ._trace import Trace

__all__ = ["HttpLimits", "HttpSession", "JsonAnswer"]

_JSON_TYPES = ("application/json", "application/a2a+json")
# An envelope's schema may nest 32 levels (S-2) below a dozen levels of Task JSON.
_MAX_JSON_DEPTH = 128


@dataclass(frozen=True)
class HttpLimits:
    """A client's timeouts (seconds) and size caps (bytes); each gives a clear
    :class:`~hitl_nb.errors.TransportError` when reached, never a hang.

    ``timeout`` bounds each ordinary request (connect, write, read); ``connect_timeout``
    the connection; ``stream_idle_timeout`` the silence allowed on an open stream (SSE
    agents send ``: ping`` comments to stay under it); ``max_body_size`` a JSON answer;
    ``max_event_size`` one server-sent event.

    >>> HitlClient(url, limits=HttpLimits(timeout=10, max_event_size=256 * 1024))  # doctest: +SKIP
    """

    timeout: float = 30.0
    connect_timeout: float = 5.0
    stream_idle_timeout: float = 60.0
    max_body_size: int = 8 * 1024 * 1024
    max_event_size: int = 1024 * 1024

    def __post_init__(self) -> None:
        for name in ("timeout", "connect_timeout", "stream_idle_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"HttpLimits: {name} must be a positive number, got {value!r}")
        for name in ("max_body_size", "max_event_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"HttpLimits: {name} must be a positive integer, got {value!r}")

    def request_timeout(self) -> httpx.Timeout:
        """The httpx timeout of an ordinary request."""
        return httpx.Timeout(self.timeout, connect=self.connect_timeout)

    def stream_timeout(self) -> httpx.Timeout:
        """The httpx timeout of a stream (the read timeout is the idle timeout)."""
        return httpx.Timeout(
            self.timeout, connect=self.connect_timeout, read=self.stream_idle_timeout
        )


@dataclass(frozen=True)
class JsonAnswer:
    """A parsed JSON answer and its HTTP status and headers."""

    status: int
    body: Any
    headers: httpx.Headers


#: Encodings this client decodes itself, in bounded steps (see :func:`decoded_chunks`).
ACCEPT_ENCODING = "gzip, deflate"
_STEP = 64 * 1024


class _Inflater:
    """zlib decoding of a ``gzip`` or ``deflate`` body that never makes more than
    ``_STEP`` bytes of output at once: a gzip bomb is seen growing, step by step."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        gzip = encoding in ("gzip", "x-gzip")
        self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS if gzip else zlib.MAX_WBITS)
        self._raw_fallback = not gzip  # "deflate" is meant to be zlib; some send raw
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded bytes of ``data``, in pieces of at most ``_STEP`` bytes."""
        while data:
            try:
                out = self._zlib.decompress(data, _STEP)
            except zlib.error as exc:
                if self._raw_fallback and not self._started:
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    self._raw_fallback = False
                    continue
                raise ProtocolViolation(f"bad {self.encoding} answer body: {exc}") from exc
            self._started = True
            data = self._zlib.unconsumed_tail
            if out:
                yield out

    def flush(self) -> bytes:
        """Whatever the decompressor still holds at the end of the body."""
        return self._zlib.flush()


async def decoded_chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The response body, decoded by this module instead of httpx.

    httpx inflates each network read (about 64 KiB) whole: one read of a gzip bomb
    became some 64 MiB in memory before a size check could look at it. Here every
    piece is at most 64 KiB. Encodings other than gzip and deflate (which is all this
    client asks for) are refused as a protocol violation.

    A body someone else already read (an httpx event hook that called ``aread()``, a
    transport that returns ``httpx.Response(content=...)``) is taken as httpx decoded
    it, instead of failing with ``StreamConsumed``.
    """
    if response.is_stream_consumed:
        try:
            content = response.content
        except httpx.ResponseNotRead:
            raise ProtocolViolation(
                "the answer's body was consumed before the client could read it (an httpx "
                "event hook or transport that reads it must keep it: await response.aread())"
            ) from None
        for start in range(0, len(content), _STEP):
            yield content[start : start + _STEP]
        return
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding in ("", "identity"):
        async for raw in response.aiter_raw():
            for start in range(0, len(raw), _STEP):
                yield raw[start : start + _STEP]
        return
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise ProtocolViolation(
            f"answer has Content-Encoding {encoding!r}; this client asked for "
            f"{ACCEPT_ENCODING} (or none)"
        )
    inflater = _Inflater(encoding)
    async for raw in response.aiter_raw():
        for piece in inflater.feed(raw):
            yield piece
    tail = inflater.flush()
    if tail:
        yield tail


def _refuse_redirect(response: httpx.Response, what: str) -> None:
    """Redirects are never followed, even by an injected client that would: a request
    carrying the answer to a prompt must not go to a host nobody named."""
    if 300 <= response.status_code < 400:
        target = response.headers.get("location", "")
        raise ProtocolViolation(
            f"{what}: the agent redirects (HTTP {response.status_code}) to {target[:200]!r}; "
            "redirects are not followed: use that URL if you trust it"
        )


def _media_type(response: httpx.Response) -> str:
    value: str = response.headers.get("content-type", "")
    return value.split(";")[0].strip().lower()


class HttpSession:
    """Requests to one agent with fixed headers; ``on_response`` sees every answer, and
    ``trace`` (when given) records every exchange as this class reads it."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        headers: Mapping[str, str],
        limits: HttpLimits,
        on_response: Callable[[httpx.Response], None] | None = None,
        trace: Trace | None = None,
    ) -> None:
        self.client = client
        self.headers = dict(headers)
        if not any(name.lower() == "accept-encoding" for name in self.headers):
            self.headers["Accept-Encoding"] = ACCEPT_ENCODING
        self.limits = limits
        self._on_response = on_response
        self.trace = trace

    def _seen(self, response: httpx.Response, exchange: Exchange | None) -> None:
        if exchange is not None and self.trace is not None:
            self.trace.answered(exchange, response.status_code, response.headers.multi_items())
            # What was really sent (request event hooks may have changed the headers).
            exchange.request_headers = redact_headers(response.request.headers.multi_items())
        if self._on_response is not None:
            self._on_response(response)

    def _begin(self, request: httpx.Request, what: str) -> Exchange | None:
        if self.trace is None:
            return None
        try:
            body = request.content
        except httpx.RequestNotRead:
            body = b""
        return self.trace.begin(
            request.method, str(request.url), what, request.headers.multi_items(), body
        )

    async def _read_body(self, response: httpx.Response, what: str) -> bytes:
        limit = self.limits.max_body_size
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise ProtocolViolation(
                f"{what}: answer of {declared} bytes is over the limit of {limit} bytes"
            )
        chunks: list[bytes] = []
        size = 0
        async for chunk in decoded_chunks(response):
            size += len(chunk)
            if size > limit:
                raise ProtocolViolation(
                    f"{what}: answer is over the limit of {limit} bytes (max_body_size)"
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def _parse(self, raw: bytes, response: httpx.Response, what: str) -> Any:
        media = _media_type(response)
        if media not in _JSON_TYPES and not media.endswith("+json"):
            snippet = raw[:120].decode("utf-8", "replace")
            raise ProtocolViolation(
                f"{what}: expected a JSON answer, got HTTP {response.status_code} "
                f"with content type {media or 'none'!r}: {snippet!r}"
            )
        try:
            return parse_json(raw, max_bytes=self.limits.max_body_size, max_depth=_MAX_JSON_DEPTH)
        except BadJSON as exc:
            raise ProtocolViolation(
                f"{what}: agent answered HTTP {response.status_code} with bad JSON: {exc}"
            ) from exc

    async def request_json(
        self,
        method: str,
        url: str,
        what: str,
        *,
        json_body: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> JsonAnswer:
        """Send one request and parse its JSON answer (any HTTP status)."""
        exchange: Exchange | None = None
        try:
            request = self.client.build_request(
                method,
                url,
                json=json_body,
                params=params,
                headers=self.headers,
                timeout=self.limits.request_timeout(),
            )
            exchange = self._begin(request, what)
            response = await self.client.send(request, stream=True, follow_redirects=False)
            try:
                self._seen(response, exchange)
                _refuse_redirect(response, what)
                raw = await self._read_body(response, what)
            finally:
                await response.aclose()
            if exchange is not None and self.trace is not None:
                self.trace.body(exchange, raw)
            return JsonAnswer(
                response.status_code, self._parse(raw, response, what), response.headers
            )
        except httpx.HTTPError as exc:
            error = from_httpx(exc, what)
            self._failed(exchange, error)
            raise error from exc
        except BaseException as exc:
            self._failed(exchange, exc)
            raise

    def _failed(self, exchange: Exchange | None, error: BaseException) -> None:
        if exchange is not None and self.trace is not None:
            self.trace.failed(exchange, error)

    async def events(
        self,
        method: str,
        url: str,
        what: str,
        *,
        json_body: Any = None,
        last_event_id: str | None = None,
        on_json: Callable[[JsonAnswer], None],
    ) -> AsyncGenerator[tuple[str | None, Any], None]:
        """Open a stream and yield ``(event_id, parsed data)`` for each SSE event.

        An answer that is JSON instead of ``text/event-stream`` (how agents refuse a
        stream) goes to ``on_json``, which must raise. Closing the iterator closes the
        connection.
        """
        fields = httpx.Headers(self.headers)
        fields["Accept"] = "text/event-stream"
        headers = list(fields.raw)
        if last_event_id is not None:
            # An id is any text without NUL, CR, LF; httpx encodes str headers as ASCII
            # (UnicodeEncodeError on "café"). Send UTF-8 bytes, as browsers do.
            headers.append((b"Last-Event-ID", last_event_id.encode("utf-8")))
        parser = SSEParser(max_event_size=self.limits.max_event_size)
        exchange: Exchange | None = None
        trace = self.trace
        try:
            request = self.client.build_request(
                method, url, json=json_body, headers=headers, timeout=self.limits.stream_timeout()
            )
            exchange = self._begin(request, what)
            response = await self.client.send(request, stream=True, follow_redirects=False)
            try:
                self._seen(response, exchange)
                _refuse_redirect(response, what)
                media = _media_type(response)
                if media != "text/event-stream":
                    raw = await self._read_body(response, what)
                    if exchange is not None and trace is not None:
                        trace.body(exchange, raw)
                    body = self._parse(raw, response, what)
                    on_json(JsonAnswer(response.status_code, body, response.headers))
                    raise ProtocolViolation(f"{what}: expected an event stream, got {media!r}")
                if response.status_code >= 300:
                    raise ProtocolViolation(
                        f"{what}: event stream with HTTP status {response.status_code}"
                    )
                async for chunk in decoded_chunks(response):
                    for event in parser.feed(chunk):
                        if exchange is not None and trace is not None:
                            trace.event(exchange, event.id, event.data)
                        yield event.id, self._event_json(event.data, what)
                for event in parser.close():
                    if exchange is not None and trace is not None:
                        trace.event(exchange, event.id, event.data)
                    yield event.id, self._event_json(event.data, what)
            finally:
                await response.aclose()
                if exchange is not None and trace is not None:
                    trace.done(exchange)
        except httpx.HTTPError as exc:
            error = from_httpx(exc, what)
            self._failed(exchange, error)
            raise error from exc
        except Exception as exc:
            self._failed(exchange, exc)
            raise

    def _event_json(self, data: str, what: str) -> Any:
        try:
            return parse_json(
                data, max_bytes=self.limits.max_event_size * 4, max_depth=_MAX_JSON_DEPTH
            )
        except BadJSON as exc:
            raise ProtocolViolation(f"{what}: an event's data is not JSON: {exc}") from exc
