"""One recorded HTTP exchange of the wire trace, and the pieces it is made of.

:class:`Exchange` and :class:`TracedEvent` are what :class:`~hitl_nb.client.Trace` keeps
and what the HAR export (``_har.py``) reads; they live here so neither of those two
modules needs the other's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from hitl_nb._display import stable_output
from hitl_nb._json import parse_json
from hitl_nb.errors import BadJSON

__all__ = [
    "REDACTED",
    "Exchange",
    "TracedEvent",
    "json_or_text",
    "now_iso",
    "pretty",
    "redact_headers",
]

#: Header names whose values never enter a trace (a committed notebook must not leak them).
REDACTED_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"}
)
REDACTED = "[redacted]"
# JSON-RPC codes and HTTP statuses that are hitl-prompt/v1's own (§Acceptance and rejection).
_HITL_CODES = {-32010: "409 hitl_already_answered_or_unknown", -32011: "422 hitl_response_invalid"}
_HITL_STATUSES = {409: "409 hitl_already_answered_or_unknown", 422: "422 hitl_response_invalid"}


def now_iso() -> str:
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
        grpc_code = next((n[12:] for n in self.notes if n.startswith("gRPC status ")), None)
        if self.method == "GRPC" and grpc_code is not None:
            status += f" {grpc_code}"  # the call's own status code (OK, ABORTED, ...)
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


def json_or_text(text: str) -> Any:
    try:  # strict JSON (no NaN, no duplicate keys): the trace exports as valid JSON
        return parse_json(text, max_bytes=len(text.encode("utf-8")) + 1, max_depth=256)
    except BadJSON:
        return text


def pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)
