"""The wire trace: every HTTP exchange a client makes, recorded as it reads it.

``HitlClient(url, trace=True)`` keeps a :class:`Trace` in ``client.trace``. Each request
becomes an :class:`Exchange`: method and URL, the headers both ways (``A2A-Version``,
``A2A-Extensions`` ...; credentials redacted), the status, the request and response
JSON, each server-sent event with its id, and timings. The client records what it has
already read in its own reading path (``_http.HttpSession``): nothing reads a stream a
second time, so tracing never consumes or alters what the client sees.

The trace is bounded: at most ``max_exchanges`` exchanges and ``max_total_bytes`` of
kept bodies and events in all (the oldest exchanges are dropped and counted),
``max_events`` events per exchange, and bodies and events over ``max_body_bytes`` are
kept only as their first bytes, with a note. The exchange itself
is never truncated, only its picture here.

Renderings: :meth:`Trace.to_text`, :meth:`Trace.to_json`, :meth:`Trace.to_har` (HAR
1.2, for browser developer tools, see :mod:`hitl_nb.client._har`) and, in a notebook, a
collapsible timeline (drawn by :mod:`hitl_nb.notebook`).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from hitl_nb._display import renderer, stable_output
from hitl_nb._json import parse_json
from hitl_nb.errors import BadJSON

__all__ = ["Exchange", "Trace", "TracedEvent", "redact_headers"]

#: Header names whose values never enter a trace (a committed notebook must not leak them).
REDACTED_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"}
)
REDACTED = "[redacted]"
# JSON-RPC codes and HTTP statuses that are hitl-prompt/v1's own (§Acceptance and rejection).
_HITL_CODES = {-32010: "409 hitl_already_answered_or_unknown", -32011: "422 hitl_response_invalid"}
_HITL_STATUSES = {409: "409 hitl_already_answered_or_unknown", 422: "422 hitl_response_invalid"}


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def redact_headers(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The header pairs with credentials (Authorization, cookies, API keys) redacted."""
    return [(k, REDACTED if k.lower() in REDACTED_HEADERS else v) for k, v in pairs]


@dataclass
class TracedEvent:
    """One server-sent event: its id, its data (parsed JSON, or the first bytes of the
    text when it was over the trace's limit), its size and when it came."""

    event_id: str | None
    data: Any
    size: int
    at_ms: float
    truncated: bool = False

    def to_json(self) -> dict[str, Any]:
        """The event as a JSON object."""
        return {
            "id": self.event_id,
            "data": self.data,
            "size": self.size,
            "at_ms": round(self.at_ms, 3),
            "truncated": self.truncated,
        }


@dataclass
class Exchange:
    """One request and its answer, as the client saw them.

    ``request_json`` / ``response_json`` hold the bodies (parsed JSON; the text when the
    answer was not JSON; the first bytes as text when over the limit, see ``notes``).
    ``events`` are the server-sent events of a stream. ``wait_ms`` is the time to the
    answer's headers, ``duration_ms`` to the end of the body or stream. ``error`` says
    what went wrong in the client (connection, timeout, protocol), if anything.
    """

    number: int
    what: str
    method: str
    url: str
    started_at: str
    request_headers: list[tuple[str, str]] = field(default_factory=list)
    request_json: Any = None
    request_size: int = 0
    status: int | None = None
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    response_json: Any = None
    response_size: int | None = None
    streamed: bool = False
    events: list[TracedEvent] = field(default_factory=list)
    events_dropped: int = 0
    error: str | None = None
    wait_ms: float | None = None
    duration_ms: float | None = None
    notes: list[str] = field(default_factory=list)
    _t0: float = field(default=0.0, repr=False, compare=False)
    _kept: int = field(default=0, repr=False, compare=False)

    def header(self, name: str, side: str = "response") -> str | None:
        """A header's value (``side`` ``"request"`` or ``"response"``), joined when repeated."""
        pairs = self.request_headers if side == "request" else self.response_headers
        values = [v for k, v in pairs if k.lower() == name.lower()]
        return ", ".join(values) if values else None

    @property
    def hitl_error(self) -> str | None:
        """The hitl-prompt/v1 rejection this exchange carried (409 / 422), if any."""
        bodies = [self.response_json, *(e.data for e in self.events)]
        for body in bodies:
            error = body.get("error") if isinstance(body, dict) else None
            code = error.get("code") if isinstance(error, dict) else None
            if code in _HITL_CODES:
                return _HITL_CODES[code]
        return _HITL_STATUSES.get(self.status or 0)

    @property
    def failed(self) -> bool:
        """True for an HTTP error status, a JSON-RPC error, or a client-side error."""
        if self.error is not None or (self.status is not None and self.status >= 400):
            return True
        bodies = [self.response_json, *(e.data for e in self.events)]
        return any(isinstance(b, dict) and "error" in b for b in bodies)

    def summary(self) -> str:
        """One line: number, method, path, what, status and (unless stable) timing."""
        path = self.url.split("://", 1)[-1]
        path = "/" + path.split("/", 1)[1] if "/" in path else "/"
        status = str(self.status) if self.status is not None else "---"
        parts = [f"#{self.number}", self.method, path, f"({self.what})", status]
        if self.streamed:
            parts.append(f"{len(self.events)} event(s)")
        if self.hitl_error:
            parts.append(self.hitl_error)
        if self.error:
            parts.append(f"error: {self.error}")
        if self.duration_ms is not None and not stable_output():
            parts.append(f"{self.duration_ms:.1f} ms")
        return " ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The exchange as a JSON object."""
        return {
            "number": self.number,
            "what": self.what,
            "method": self.method,
            "url": self.url,
            "started_at": self.started_at,
            "request": {
                "headers": [[k, v] for k, v in self.request_headers],
                "json": self.request_json,
                "size": self.request_size,
            },
            "response": {
                "status": self.status,
                "headers": [[k, v] for k, v in self.response_headers],
                "json": self.response_json,
                "size": self.response_size,
                "streamed": self.streamed,
                "events": [e.to_json() for e in self.events],
                "events_dropped": self.events_dropped,
            },
            "error": self.error,
            "hitl_error": self.hitl_error,
            "wait_ms": None if self.wait_ms is None else round(self.wait_ms, 3),
            "duration_ms": None if self.duration_ms is None else round(self.duration_ms, 3),
            "notes": list(self.notes),
        }


class Trace:
    """The exchanges of one client, oldest first (bounded; see the module docstring).

    Iterate it, index it (``trace[-1]``), ``len()`` it, :meth:`clear` it; show it in a
    notebook cell (a collapsible timeline), or print :meth:`to_text`; export with
    :meth:`write_json` and :meth:`write_har`.
    """

    def __init__(
        self,
        *,
        max_exchanges: int = 500,
        max_body_bytes: int = 64 * 1024,
        max_events: int = 1000,
        max_total_bytes: int = 32 * 1024 * 1024,
    ) -> None:
        for name, value in (
            ("max_exchanges", max_exchanges),
            ("max_body_bytes", max_body_bytes),
            ("max_events", max_events),
            ("max_total_bytes", max_total_bytes),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"Trace: {name} must be a positive integer, got {value!r}")
        self.max_exchanges = max_exchanges
        self.max_body_bytes = max_body_bytes
        self.max_events = max_events
        self.max_total_bytes = max_total_bytes
        self._exchanges: deque[Exchange] = deque()
        self._lock = threading.Lock()
        self._count = 0
        self._total = 0  # bytes of bodies and events kept, over all exchanges
        #: Exchanges dropped because the trace was full (the oldest go first).
        self.dropped = 0

    # -- recording (called by the client's HTTP layer) ---------------------------------

    def begin(
        self, method: str, url: str, what: str, headers: Iterable[tuple[str, str]], body: bytes
    ) -> Exchange:
        """Start recording a request (``body``: the bytes about to be sent)."""
        with self._lock:
            self._count += 1
            while len(self._exchanges) >= self.max_exchanges:
                self._drop_oldest()
            exchange = Exchange(self._count, what, method, url, _now_iso())
            self._exchanges.append(exchange)
        exchange._t0 = time.perf_counter()
        exchange.request_headers = redact_headers(headers)
        exchange.request_size = len(body)
        if body:
            exchange.request_json = self._body(body, "request body", exchange)
        return exchange

    def answered(self, exchange: Exchange, status: int, headers: Iterable[tuple[str, str]]) -> None:
        """The answer's status and headers arrived."""
        exchange.status = status
        exchange.response_headers = redact_headers(headers)
        exchange.wait_ms = (time.perf_counter() - exchange._t0) * 1000

    def body(self, exchange: Exchange, raw: bytes) -> None:
        """The whole answer body (decoded) was read."""
        exchange.response_size = len(raw)
        exchange.response_json = self._body(raw, "response body", exchange)
        self.done(exchange)

    def event(self, exchange: Exchange, event_id: str | None, data: str) -> None:
        """One server-sent event was read (``data`` as received)."""
        exchange.streamed = True
        if len(exchange.events) >= self.max_events:
            if not exchange.events_dropped:
                exchange.notes.append(
                    f"only the first {self.max_events} events are kept in the trace"
                )
            exchange.events_dropped += 1
            return
        raw = data.encode("utf-8")
        at = (time.perf_counter() - exchange._t0) * 1000
        if not self._charge(exchange, min(len(raw), self.max_body_bytes)):
            if not exchange.events_dropped:
                exchange.notes.append(
                    f"the trace's budget of {self.max_total_bytes} bytes is spent: later "
                    "events are not kept"
                )
            exchange.events_dropped += 1
            return
        if len(raw) > self.max_body_bytes:
            prefix = raw[: self.max_body_bytes].decode("utf-8", "ignore")
            exchange.notes.append(
                f"event {event_id or len(exchange.events) + 1}: {len(raw)} bytes, only the "
                f"first {self.max_body_bytes} kept in the trace"
            )
            exchange.events.append(TracedEvent(event_id, prefix, len(raw), at, truncated=True))
            return
        exchange.events.append(TracedEvent(event_id, _json_or_text(data), len(raw), at))

    def failed(self, exchange: Exchange, error: BaseException) -> None:
        """The exchange ended with an error on the client's side."""
        if exchange.error is None:
            exchange.error = f"{type(error).__name__}: {error}"[:2000]
        self.done(exchange)

    def done(self, exchange: Exchange) -> None:
        """The body or stream is over."""
        if exchange.duration_ms is None:
            exchange.duration_ms = (time.perf_counter() - exchange._t0) * 1000

    def _drop_oldest(self) -> None:
        old = self._exchanges.popleft()
        self._total -= old._kept
        self.dropped += 1

    def _charge(self, exchange: Exchange, size: int) -> bool:
        """Count ``size`` kept bytes for ``exchange``, dropping the oldest exchanges to stay
        within ``max_total_bytes``; False when even this exchange alone is over it."""
        with self._lock:
            while (
                self._total + size > self.max_total_bytes
                and self._exchanges
                and self._exchanges[0] is not exchange
            ):
                self._drop_oldest()
            if self._total + size > self.max_total_bytes:
                return False
            exchange._kept += size
            self._total += size
            return True

    def _body(self, raw: bytes, what: str, exchange: Exchange) -> Any:
        if not self._charge(exchange, min(len(raw), self.max_body_bytes)):
            exchange.notes.append(
                f"{what}: {len(raw)} bytes, not kept: the trace's budget of "
                f"{self.max_total_bytes} bytes is spent"
            )
            return None
        if len(raw) > self.max_body_bytes:
            exchange.notes.append(
                f"{what}: {len(raw)} bytes, only the first {self.max_body_bytes} kept in the "
                "trace (the client read all of it)"
            )
            return raw[: self.max_body_bytes].decode("utf-8", "ignore")
        return _json_or_text(raw.decode("utf-8", "replace"))

    # -- reading -----------------------------------------------------------------------

    @property
    def exchanges(self) -> list[Exchange]:
        """A snapshot of the recorded exchanges, oldest first."""
        with self._lock:
            return list(self._exchanges)

    def __len__(self) -> int:
        return len(self._exchanges)

    def __bool__(self) -> bool:
        # Always true, even empty: ``if client.trace:`` asks whether tracing is on.
        return True

    def __iter__(self) -> Iterator[Exchange]:
        return iter(self.exchanges)

    def __getitem__(self, index: int) -> Exchange:
        return self.exchanges[index]

    def clear(self) -> None:
        """Forget every exchange (numbering goes on)."""
        with self._lock:
            self._exchanges.clear()
            self._total = 0
            self.dropped = 0

    # -- renderings --------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The whole trace as a JSON object."""
        return {
            "format": "hitl-nb trace",
            "version": 1,
            "dropped": self.dropped,
            "exchanges": [e.to_json() for e in self.exchanges],
        }

    def write_json(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_json` to ``path`` (UTF-8, indented)."""
        with open(path, "w", encoding="utf-8") as out:
            json.dump(self.to_json(), out, indent=2, ensure_ascii=False)
            out.write("\n")

    def to_har(self) -> dict[str, Any]:
        """The trace as an HTTP Archive (HAR 1.2), which browser developer tools open."""
        from ._har import trace_to_har

        return trace_to_har(self.exchanges)

    def write_har(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_har` to ``path`` (a ``.har`` file)."""
        with open(path, "w", encoding="utf-8") as out:
            json.dump(self.to_har(), out, indent=2, ensure_ascii=False)
            out.write("\n")

    def to_text(self, *, bodies: bool = True) -> str:
        """The trace as plain text: a line per exchange, then (with ``bodies``) the
        A2A headers both ways and the JSON, pretty-printed."""
        lines: list[str] = []
        if self.dropped:
            lines.append(f"({self.dropped} older exchange(s) dropped)")
        for ex in self.exchanges:
            lines.append(ex.summary())
            if not bodies:
                continue
            for side, arrow in (("request", ">"), ("response", "<")):
                for name in ("A2A-Version", "A2A-Extensions", "X-A2A-Extensions", "Last-Event-ID"):
                    value = ex.header(name, side)
                    if value is not None:
                        lines.append(f"  {arrow} {name}: {value}")
            if ex.request_json is not None:
                lines.append("  > " + _pretty(ex.request_json).replace("\n", "\n    "))
            if ex.response_json is not None:
                lines.append("  < " + _pretty(ex.response_json).replace("\n", "\n    "))
            for event in ex.events:
                head = f"  < event {event.event_id}" if event.event_id else "  < event"
                lines.append(head + ": " + _pretty(event.data).replace("\n", "\n    "))
            lines += [f"  note: {note}" for note in ex.notes]
        return "\n".join(lines) if lines else "(no exchanges recorded)"

    def __repr__(self) -> str:
        return f"<Trace {len(self)} exchange(s)>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        draw = renderer("trace")
        bundle: dict[str, Any] = dict(draw(self)) if draw is not None else {}
        bundle["text/plain"] = self.to_text(bodies=False)
        return bundle


def _json_or_text(text: str) -> Any:
    try:  # strict JSON (no NaN, no duplicate keys): the trace exports as valid JSON
        return parse_json(text, max_bytes=len(text.encode("utf-8")) + 1, max_depth=256)
    except BadJSON:
        return text


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)
