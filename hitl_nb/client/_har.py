"""A wire trace as an HTTP Archive (HAR 1.2), so browser developer tools can open it.

Fields follow the HAR 1.2 specification (W3C Web Performance draft, "HTTP Archive
(HAR) format"): ``log.version``, ``log.creator``, ``log.entries[]`` with
``startedDateTime``, ``time``, ``request``, ``response``, ``cache`` and ``timings``
(``send``, ``wait``, ``receive`` required; -1 where not known). A streamed answer's
body is the event stream as text (``id:`` / ``data:`` lines), and its events with their
ids and arrival times are in the custom field ``_events`` (custom fields start with an
underscore, which the specification allows). An exchange that got no answer (refused
connection, timeout) has status 0, as browsers write it, and ``_error``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from hitl_nb.errors import reason_phrase

from ._exchange import Exchange

__all__ = ["trace_to_har"]

_VERSION = "1.2"


def _creator_version() -> str:
    try:
        from importlib.metadata import version

        return version("hitl-nb")
    except Exception:  # not installed (a checkout on the path)
        return "0"


def _pairs(headers: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in headers]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _media(ex: Exchange, side: str, default: str) -> str:
    return ex.header("content-type", side) or default


def _request(ex: Exchange) -> dict[str, Any]:
    query = urlsplit(ex.url).query
    request: dict[str, Any] = {
        "method": ex.method,
        "url": ex.url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": _pairs(ex.request_headers),
        "queryString": [{"name": k, "value": v} for k, v in parse_qsl(query)],
        "headersSize": -1,
        "bodySize": ex.request_size,
    }
    if ex.request_json is not None:
        request["postData"] = {
            "mimeType": _media(ex, "request", "application/json"),
            "text": _text(ex.request_json),
        }
    return request


def _stream_text(ex: Exchange) -> str:
    blocks = []
    for event in ex.events:
        head = f"id: {event.event_id}\n" if event.event_id is not None else ""
        blocks.append(f"{head}data: {_text(event.data)}\n\n")
    return "".join(blocks)


def _response(ex: Exchange) -> dict[str, Any]:
    status = ex.status or 0
    reason = reason_phrase(status) if status else ""
    if ex.streamed:
        text = _stream_text(ex)
        size = len(text.encode("utf-8"))
    else:
        text = "" if ex.response_json is None else _text(ex.response_json)
        size = ex.response_size if ex.response_size is not None else 0
    content: dict[str, Any] = {
        "size": size,
        "mimeType": _media(ex, "response", "application/octet-stream" if not text else ""),
        "text": text,
    }
    return {
        "status": status,
        "statusText": reason,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": _pairs(ex.response_headers),
        "content": content,
        "redirectURL": ex.header("location") or "",
        "headersSize": -1,
        "bodySize": size if ex.status is not None else -1,
    }


def _entry(ex: Exchange) -> dict[str, Any]:
    total = ex.duration_ms if ex.duration_ms is not None else ex.wait_ms or 0.0
    wait = ex.wait_ms if ex.wait_ms is not None else total
    entry: dict[str, Any] = {
        "startedDateTime": ex.started_at,
        "time": round(total, 3),
        "request": _request(ex),
        "response": _response(ex),
        "cache": {},
        "timings": {
            "blocked": -1,
            "dns": -1,
            "connect": -1,
            "send": 0,
            "wait": round(wait, 3),
            "receive": round(max(total - wait, 0.0), 3),
            "ssl": -1,
        },
        "comment": ex.what,
    }
    if ex.streamed:
        entry["_events"] = [e.to_json() for e in ex.events]
    if ex.error is not None:
        entry["_error"] = ex.error
    if ex.hitl_error is not None:
        entry["_hitlError"] = ex.hitl_error
    if ex.notes:
        entry["_notes"] = list(ex.notes)
    return entry


def trace_to_har(exchanges: Sequence[Exchange]) -> dict[str, Any]:
    """The exchanges as a HAR 1.2 object (``{"log": {...}}``)."""
    return {
        "log": {
            "version": _VERSION,
            "creator": {"name": "hitl-nb", "version": _creator_version()},
            "pages": [],
            "entries": [_entry(ex) for ex in exchanges],
            "comment": "hitl-prompt/v1 wire trace",
        }
    }
