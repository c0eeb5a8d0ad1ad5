"""Server-sent events: an incremental parser with a size cap, and an encoder.

The parser follows the WHATWG "event stream interpretation" rules: lines end in LF, CRLF
or CR (a CR at the end of a chunk waits for the next one), a leading BOM is dropped,
lines starting with ``:`` are comments, ``data:`` lines join with LF, ``id:`` sets the
last event id (kept across events, ignored when it contains NUL), ``retry:`` takes ASCII
digits only (at most 18 of them), and an event whose data buffer is empty is not dispatched.

Why not ``httpx-sse`` (installed, maintained): it keeps no bound on a line or an event
(a 50 MB ``data:`` line is buffered whole before anything can object), it dispatches
events that carry no data, its ``retry`` accepts ``int()`` spellings the standard
refuses (``-5``, ``+5``), it keeps a leading BOM, and it only offers a line iterator
over an ``httpx.Response``. Reconnecting with ``Last-Event-ID`` needs the parser's state
(the last id) to outlive one response, which :class:`SSEParser` keeps. The parser does
no I/O: :func:`aiter_events` drives it over any async byte iterator (an httpx stream).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

from hitl_nb.errors import EventTooLarge

__all__ = [
    "DEFAULT_MAX_EVENT_SIZE",
    "SSEParser",
    "ServerSentEvent",
    "aiter_events",
    "encode_comment",
    "encode_event",
]

#: Default cap on one event: its lines, including field names, in characters.
DEFAULT_MAX_EVENT_SIZE = 1 << 20  # 1 MiB

_LINE_END = re.compile(r"\r\n|\r|\n")
_DIGITS = re.compile(r"[0-9]+")
# A retry longer than this many digits is ignored: no sane delay, and int() refuses
# more than 4300 digits (a ValueError out of the parser).
_MAX_RETRY_DIGITS = 18


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event.

    ``id`` is the stream's last event id when the event was dispatched (``None`` if the
    stream never sent an ``id:`` line); ``retry`` the reconnection delay in milliseconds
    the stream last asked for, if any.
    """

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SSEParser:
    """Incremental ``text/event-stream`` parser.

    Feed it bytes as they arrive; it returns the events completed by each chunk. The
    ``last_event_id`` and ``retry`` survive :meth:`reset`, so one parser can follow a
    stream across reconnects (send ``last_event_id`` as ``Last-Event-ID``).

    ``max_event_size`` bounds the characters of one event (all its lines, field names
    included); going over raises :class:`EventTooLarge` as soon as it is known, before
    the rest of the event is read.
    """

    def __init__(self, *, max_event_size: int = DEFAULT_MAX_EVENT_SIZE) -> None:
        if max_event_size <= 0:
            raise ValueError(f"max_event_size must be positive, got {max_event_size}")
        self.max_event_size = max_event_size
        self.last_event_id: str | None = None
        self.retry: int | None = None
        self.reset()

    def reset(self) -> None:
        """Forget a half-read event and start a new stream (keeps the last id, retry)."""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        # The unfinished line, in pieces: joined once when its end arrives (joining on
        # every chunk made a long line trickled in small chunks cost quadratic time).
        self._partial: list[str] = []
        self._partial_size = 0
        # The last chunk ended in a CR that may be the first half of a CRLF: the line
        # in ``_partial`` is complete but waits for the next chunk (or the end).
        self._held_cr = False
        self._at_start = True
        self._data: list[str] = []
        self._event_type = ""
        self._event_size = 0
        self._saw_field = False

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Parse one chunk of bytes; return the events it completed, in order."""
        return self._feed_text(self._decoder.decode(chunk))

    def close(self) -> list[ServerSentEvent]:
        """End of stream: flush the decoder. A half-written event is discarded (WHATWG)."""
        events = self._feed_text(self._decoder.decode(b"", final=True))
        if self._held_cr:
            events += self._feed_text("\n")
        self._partial, self._partial_size = [], 0
        self._data = []
        self._event_type = ""
        self._event_size = 0
        return events

    @property
    def in_event(self) -> bool:
        """True when part of an event (or a line) has been read but not dispatched."""
        return bool(self._partial) or self._saw_field

    def _feed_text(self, text: str) -> list[ServerSentEvent]:
        if not text:
            return []
        if self._at_start:
            self._at_start = False
            if text.startswith("\ufeff"):
                text = text[1:]
        events: list[ServerSentEvent] = []
        if self._held_cr:
            self._held_cr = False
            if text.startswith("\n"):  # the second half of a CRLF
                text = text[1:]
            events += self._take_line("")
        pos = 0
        for match in _LINE_END.finditer(text):  # only the new text is scanned
            if match.group() == "\r" and match.end() == len(text):
                # A lone CR at the very end may be the first half of CRLF: wait for more.
                self._partial.append(text[pos : match.start()])
                self._partial_size += match.end() - pos
                self._held_cr = True
                pos = len(text)
                break
            events += self._take_line(text[pos : match.start()])
            pos = match.end()
        if pos < len(text):
            self._partial.append(text[pos:])
            self._partial_size += len(text) - pos
        pending = self._event_size + self._partial_size
        if pending > self.max_event_size:
            raise EventTooLarge(pending, self.max_event_size)
        return events

    def _take_line(self, tail: str) -> list[ServerSentEvent]:
        """Finish the pending line with ``tail`` and interpret it."""
        if self._partial:
            tail = "".join(self._partial) + tail
            self._partial, self._partial_size = [], 0
        event = self._line(tail)
        return [] if event is None else [event]

    def _line(self, line: str) -> ServerSentEvent | None:
        if not line:
            return self._dispatch()
        self._event_size += len(line) + 1
        if self._event_size > self.max_event_size:
            raise EventTooLarge(self._event_size, self.max_event_size)
        self._saw_field = True
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event_type = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry":
            if len(value) <= _MAX_RETRY_DIGITS and _DIGITS.fullmatch(value):
                self.retry = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        data, event_type = self._data, self._event_type
        self._data, self._event_type, self._event_size = [], "", 0
        self._saw_field = False
        if not data:
            return None
        return ServerSentEvent(
            data="\n".join(data),
            event=event_type or "message",
            id=self.last_event_id,
            retry=self.retry,
        )


async def aiter_events(
    chunks: AsyncIterable[bytes], parser: SSEParser | None = None
) -> AsyncIterator[ServerSentEvent]:
    """Parse an async byte stream (e.g. ``response.aiter_bytes()``) into events.

    Pass your own ``parser`` to keep its ``last_event_id`` after the stream ends.
    """
    parser = parser or SSEParser()
    async for chunk in chunks:
        for event in parser.feed(chunk):
            yield event
    for event in parser.close():
        yield event


def _check_field(name: str, value: str) -> None:
    if "\r" in value or "\n" in value:
        raise ValueError(f"SSE {name} must not contain CR or LF: {value!r}")


def encode_event(
    data: str, id: str | None = None, event: str | None = None, retry: int | None = None
) -> bytes:
    """Encode one event as UTF-8 ``text/event-stream`` bytes, ending in a blank line.

    Every line of ``data`` (split on CRLF, CR or LF, which the reader turns back into
    LF) becomes a ``data:`` line. ``id`` must not contain CR, LF or NUL; ``event`` must
    not contain CR or LF; ``retry`` is a non-negative number of milliseconds.
    """
    out: list[str] = []
    if event is not None:
        _check_field("event", event)
        out.append(f"event: {event}\n")
    if id is not None:
        _check_field("id", id)
        if "\0" in id:
            raise ValueError(f"SSE id must not contain NUL: {id!r}")
        out.append(f"id: {id}\n")
    if retry is not None:
        if retry < 0:
            raise ValueError(f"SSE retry must be non-negative, got {retry}")
        out.append(f"retry: {retry}\n")
    out.extend(f"data: {line}\n" for line in _LINE_END.split(data))
    out.append("\n")
    return "".join(out).encode("utf-8")


def encode_comment(text: str = "") -> bytes:
    """Encode a comment line (a keep-alive ping such as ``: ping``); ignored by readers."""
    _check_field("comment", text)
    return f": {text}\n\n".encode() if text else b":\n\n"
