"""The little raw HTTP the harness needs where the client hides wire facts (CF-6).

:class:`RawSubscription` opens SubscribeToTask (``tasks/resubscribe`` in A2A 0.3, ``POST
/tasks/{id}:subscribe`` over HTTP+JSON) itself, so the harness can read events one by
one, send ``Last-Event-ID`` to ask for a replay, and really cut the connection in the
middle of a stream (closing a response whose body is not finished closes its socket).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterable
from typing import Any
from urllib.parse import quote

import httpx

from hitl_nb._json import parse_json
from hitl_nb.a2a import Codec, ServerSentEvent, SSEParser, StreamEvent
from hitl_nb.client import ACCEPT_ENCODING, Exchange, Trace, decoded_chunks
from hitl_nb.errors import BadJSON, ProtocolViolation, WireDecodeError

__all__ = ["RawSubscription", "read_bounded"]

#: The most the harness reads of an answer that is not an event stream (a card, an
#: error page): it talks to agents it does not trust.
MAX_ANSWER_BYTES = 1024 * 1024


async def read_bounded(response: httpx.Response, limit: int = MAX_ANSWER_BYTES) -> bytes:
    """The body of a streamed ``response``, decoded in 64 KiB pieces, at most ``limit``.

    Raises ProtocolViolation past the limit; a gzip bomb stops there instead of being
    inflated whole by httpx.
    """
    size, pieces = 0, []
    async for piece in decoded_chunks(response):
        size += len(piece)
        if size > limit:
            raise ProtocolViolation(f"the agent's answer is over {limit} bytes")
        pieces.append(piece)
    return b"".join(pieces)


_SUBSCRIBE = {"1.0": "SubscribeToTask", "0.3": "tasks/resubscribe"}


class RawSubscription:
    """One SubscribeToTask stream read event by event; :meth:`cut` drops the connection."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        url: str,
        binding: str,
        version: str,
        codec: Codec,
        headers: dict[str, str],
        task_id: str,
        last_event_id: str | None = None,
        trace: Trace | None = None,
    ) -> None:
        self.http = http
        self.trace = trace
        self._exchange: Exchange | None = None
        self.codec = codec
        self.binding = binding
        self.task_id = task_id
        self.last_event_id = last_event_id
        self._headers: dict[str, Any] = {
            "Accept-Encoding": ACCEPT_ENCODING,
            **headers,
            "Accept": "text/event-stream",
        }
        if last_event_id is not None:
            # An id is any text the agent chose; it goes back as UTF-8 bytes, as browsers do.
            self._headers["Last-Event-ID"] = last_event_id.encode("utf-8")
        if binding == "JSONRPC":
            self._url = url
            self._body: Any = {
                "jsonrpc": "2.0",
                "id": str(uuid.uuid4()),
                "method": _SUBSCRIBE[version],
                "params": {"id": task_id},
            }
        else:
            self._url = f"{url.rstrip('/')}/tasks/{quote(task_id, safe='')}:subscribe"
            self._body = None
        self._response: httpx.Response | None = None
        self._chunks: AsyncIterator[bytes] | None = None
        self._parser = SSEParser()
        self._pending: list[tuple[str | None, Any]] = []
        self.ended = False

    async def open(self) -> None:
        """Send the request; raises ProtocolViolation when the answer is not a stream."""
        request = self.http.build_request("POST", self._url, json=self._body, headers=self._headers)
        if self.trace is not None:
            self._exchange = self.trace.begin(
                "POST",
                self._url,
                "SubscribeToTask (raw)",
                request.headers.multi_items(),
                request.content,
            )
        try:
            self._response = await self.http.send(request, stream=True)
        except Exception as exc:
            if self.trace is not None and self._exchange is not None:
                self.trace.failed(self._exchange, exc)
            raise
        if self.trace is not None and self._exchange is not None:
            self.trace.answered(
                self._exchange, self._response.status_code, self._response.headers.multi_items()
            )
        media = self._response.headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "text/event-stream":
            try:
                body = (await read_bounded(self._response, 64 * 1024))[:300].decode(
                    "utf-8", "replace"
                )
            except ProtocolViolation as exc:
                body = str(exc)
            await self._response.aclose()
            raise ProtocolViolation(
                f"subscription answered HTTP {self._response.status_code} {media or 'no type'} "
                f"instead of an event stream: {body}"
            )
        self._chunks = decoded_chunks(self._response)

    async def next(self, timeout: float) -> tuple[str | None, StreamEvent] | None:
        """The next ``(event id, event)``; None when the agent ended the stream.

        Raises ``asyncio.TimeoutError`` after ``timeout`` seconds of silence.
        """
        assert self._chunks is not None, "open() first"
        while not self._pending:
            if self.ended:
                return None
            try:
                chunk = await asyncio.wait_for(self._chunks.__anext__(), timeout)
            except StopAsyncIteration:
                self.ended = True
                self._pending += self._traced(self._parser.close())
                if self.trace is not None and self._exchange is not None:
                    self.trace.done(self._exchange)
                continue
            self._pending += self._traced(self._parser.feed(chunk))
        event_id, data = self._pending.pop(0)
        return event_id, self._decode(data)

    def _traced(self, events: Iterable[ServerSentEvent]) -> list[tuple[str | None, str]]:
        out = []
        for event in events:
            if self.trace is not None and self._exchange is not None:
                self.trace.event(self._exchange, event.id, event.data)
            out.append((event.id, event.data))
        return out

    def _decode(self, data: str) -> StreamEvent:
        try:
            obj = parse_json(data, max_depth=128)
        except BadJSON as exc:
            raise ProtocolViolation(f"a subscription event is not JSON: {exc}") from exc
        if self.binding == "JSONRPC":
            if not isinstance(obj, dict) or "result" not in obj:
                raise ProtocolViolation(f"a subscription event has no result: {data[:200]}")
            obj = obj["result"]
        try:
            event: StreamEvent = self.codec.decode_stream_response(obj)
        except WireDecodeError as exc:
            raise ProtocolViolation(f"a subscription event does not decode: {exc}") from exc
        return event

    async def cut(self) -> None:
        """Close the connection now, whatever the agent still has to send."""
        if self._response is not None:
            await self._response.aclose()
        if self.trace is not None and self._exchange is not None:
            self.trace.done(self._exchange)
        self.ended = True
