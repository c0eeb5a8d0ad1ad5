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
from typing import Any

from hitl_nb._display import renderer

from ._exchange import (
    Exchange,
    TracedEvent,
    json_or_text,
    now_iso,
    pretty,
    redact_headers,
)
from ._har import trace_to_har

__all__ = ["Exchange", "Trace", "TracedEvent", "redact_headers"]


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
            exchange = Exchange(self._count, what, method, url, now_iso())
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
        exchange.events.append(TracedEvent(event_id, json_or_text(data), len(raw), at))

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
        return json_or_text(raw.decode("utf-8", "replace"))

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
                lines.append("  > " + pretty(ex.request_json).replace("\n", "\n    "))
            if ex.response_json is not None:
                lines.append("  < " + pretty(ex.response_json).replace("\n", "\n    "))
            for event in ex.events:
                head = f"  < event {event.event_id}" if event.event_id else "  < event"
                lines.append(head + ": " + pretty(event.data).replace("\n", "\n    "))
            lines += [f"  note: {note}" for note in ex.notes]
        return "\n".join(lines) if lines else "(no exchanges recorded)"

    def __repr__(self) -> str:
        return f"<Trace {len(self)} exchange(s)>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        draw = renderer("trace")
        bundle: dict[str, Any] = dict(draw(self)) if draw is not None else {}
        bundle["text/plain"] = self.to_text(bodies=False)
        return bundle
