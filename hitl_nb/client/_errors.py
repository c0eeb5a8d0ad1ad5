"""The one boundary where wire failures become hitl-nb errors.

::

    httpx.TimeoutException (connect, read, write, pool)  -> AgentTimeout
    httpx.TransportError (connect, read, protocol, ...)  -> AgentUnreachable
    BadJSON, WireDecodeError, bad SSE, wrong type, size  -> ProtocolViolation
    JSON-RPC ``error`` object {code, message, data}       -> error_for_code(code)
    HTTP+JSON ``google.rpc.Status`` body + HTTP status    -> error_for_status(status, reason)
    gRPC status + ``google.rpc.Status`` details           -> from_grpc_status: the ErrorInfo
                                                             reason, else the status code

``validation_errors`` for :class:`~hitl_nb.errors.ResponseInvalid` are read from every
place an agent may put them: the 0.3 / reference ``data`` object
(``data.validation_errors``), the 1.0 ``data`` array and the REST ``details`` array
(a detail holding ``validation_errors``, an ErrorInfo whose ``metadata`` holds them as
JSON text, or a ``google.rpc.BadRequest``'s ``fieldViolations``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx

from hitl_nb._json import parse_json
from hitl_nb.errors import (
    A2AError,
    AgentTimeout,
    AgentUnreachable,
    BadJSON,
    InternalError,
    InvalidParams,
    MethodNotFound,
    ResponseInvalid,
    TaskNotFound,
    TransportError,
    error_for_code,
    error_for_reason,
    error_for_status,
)
from hitl_nb.validation import ValidationIssue

__all__ = [
    "from_grpc_status",
    "from_httpx",
    "from_jsonrpc_error",
    "from_rest_error",
    "validation_errors_in",
]


def from_httpx(exc: httpx.HTTPError, what: str) -> TransportError:
    """The hitl-nb error for an httpx failure while doing ``what`` (e.g. "GetTask")."""
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        kind = {
            httpx.ConnectTimeout: "connecting",
            httpx.ReadTimeout: "waiting for the answer",
            httpx.WriteTimeout: "sending the request",
            httpx.PoolTimeout: "waiting for a free connection",
        }.get(type(exc), "waiting")
        return AgentTimeout(f"{what}: the agent timed out ({kind}): {detail}")
    if isinstance(exc, httpx.ConnectError):
        return AgentUnreachable(f"{what}: cannot connect to the agent: {detail}")
    return AgentUnreachable(f"{what}: connection to the agent failed: {detail}")


def _issues_from_list(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    return [ValidationIssue.from_json(item).to_json() for item in value]


def _from_detail(detail: Any, forms: set[str]) -> Iterator[dict[str, Any]]:
    """The entries in one detail object; ``forms`` learns how they were carried."""
    if not isinstance(detail, dict):
        return
    listed = _issues_from_list(detail.get("validation_errors"))
    if listed:
        forms.add("array")
    yield from listed
    meta = detail.get("metadata")
    if isinstance(meta, dict):
        packed = meta.get("validation_errors")
        if isinstance(packed, str):  # ErrorInfo metadata values are strings
            try:  # parse_json: json.loads would recurse out on "[[[[..." (RecursionError)
                packed = parse_json(packed, max_bytes=len(packed) * 4 + 16, max_depth=16)
            except BadJSON:
                packed = None
        unpacked = _issues_from_list(packed)
        if unpacked:
            forms.add("text")
        yield from unpacked
    for violation in detail.get("fieldViolations") or []:
        if isinstance(violation, dict):
            forms.add("fieldViolations")
            field = violation.get("field", "")
            path = field if isinstance(field, str) else ""
            if path and not path.startswith("/"):
                path = "/" + path.replace(".", "/")
            yield {
                "path": path,
                "keyword": str(violation.get("reason") or "invalid"),
                "message": str(violation.get("description", "")),
            }


def _gather(places: tuple[Any, ...]) -> tuple[list[dict[str, Any]], set[str]]:
    found: list[dict[str, Any]] = []
    forms: set[str] = set()
    for place in places:
        for detail in place if isinstance(place, list) else [place]:
            for issue in _from_detail(detail, forms):
                if issue not in found:  # the same list in two places counts once
                    found.append(issue)
    return found, forms


def validation_errors_in(*places: Any) -> list[dict[str, Any]]:
    """Every ``validation_errors`` entry found in the given error ``data``/``details``.

    Read wherever a real agent may put them: a detail object of any ``@type`` (or the
    0.3 ``data`` object) holding a ``validation_errors`` array, an ErrorInfo whose
    ``metadata.validation_errors`` is that array as JSON text, a
    ``google.rpc.BadRequest``'s ``fieldViolations``. An entry found twice counts once.
    """
    return _gather(places)[0]


def _carriage_deviation(forms: set[str]) -> str | None:
    """What departs from §Acceptance and rejection's ``validation_errors`` array."""
    if "array" in forms or not forms:
        return None
    if "text" in forms:
        return (
            "validation_errors came as JSON text in an ErrorInfo's metadata (ErrorInfo "
            "metadata holds strings), not as the array §Acceptance and rejection shows"
        )
    return (
        "no validation_errors array (§Acceptance and rejection: MUST); the entries were "
        "read from a google.rpc.BadRequest's fieldViolations"
    )


def _build(cls: type[A2AError], message: str | None, data: Any, *places: Any) -> A2AError:
    if issubclass(cls, ResponseInvalid):
        issues, forms = _gather(places)
        error = cls(message, data=data, validation_errors=issues)
        deviation = _carriage_deviation(forms)
        if deviation:
            error.deviations.append(deviation)
        return error
    return cls(message, data=data)


def from_jsonrpc_error(error: Any) -> A2AError:
    """The typed error for a JSON-RPC ``error`` member (1.0 or 0.3 shape)."""
    if not isinstance(error, dict):
        return A2AError(f"agent sent a malformed JSON-RPC error: {error!r:.200}", data=error)
    code = error.get("code")
    message = error.get("message")
    data = error.get("data")
    cls = error_for_code(code) if isinstance(code, int) and not isinstance(code, bool) else A2AError
    text = message if isinstance(message, str) and message else None
    if cls is A2AError:
        text = f"agent error {code}: {text or 'no message'}"
    return _build(cls, text, data, data)


def _error_info_reason(details: Any) -> str | None:
    if not isinstance(details, list):
        return None
    for detail in details:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("ErrorInfo"):
            reason = detail.get("reason")
            if isinstance(reason, str):
                return reason
    return None


def from_rest_error(status: int, body: Any) -> A2AError:
    """The typed error for an HTTP+JSON error answer (``google.rpc.Status`` body)."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, str):  # some servers send {"error": "text", ...}
        error = {"message": error}
    if not isinstance(error, dict):
        error = body if isinstance(body, dict) else {}
    details = error.get("details")
    cls = error_for_status(status, _error_info_reason(details))
    message = error.get("message")
    text = message if isinstance(message, str) and message else None
    if text is None:
        text = f"HTTP {status}" + (f": {cls.default_message}" if cls is not A2AError else "")
    data = details if details is not None else error.get("data")
    top = body if isinstance(body, dict) else None
    return _build(cls, text, data, details, error.get("data"), top, error)


#: The class for a gRPC status code when no ErrorInfo names the error (A2A 1.0 §5.4 and
#: a2a-sdk's table: NOT_FOUND is TaskNotFound for the task methods, which are all this
#: client calls on a task).
_BY_GRPC_CODE: dict[str, type[A2AError]] = {
    "NOT_FOUND": TaskNotFound,
    "UNIMPLEMENTED": MethodNotFound,
    "INVALID_ARGUMENT": InvalidParams,
    "INTERNAL": InternalError,
    "UNKNOWN": InternalError,
    "DATA_LOSS": InternalError,
}


def from_grpc_status(code: str, message: str, details: list[dict[str, Any]]) -> A2AError:
    """The typed error for a gRPC error status: its code's name (``"ABORTED"``), its
    message and its ``google.rpc.Status`` details as ProtoJSON (``@type`` members).

    The ErrorInfo's reason decides, as the A2A reasons name their errors on every binding
    (and hitl-prompt/v1's ``HITL_ALREADY_ANSWERED_OR_UNKNOWN`` / ``HITL_RESPONSE_INVALID``,
    sent as ABORTED / INVALID_ARGUMENT, its 409 / 422); without one, the code does.
    ``validation_errors`` are read as from the other bindings' details (a detail holding
    the array, an ErrorInfo's metadata, a BadRequest's fieldViolations).
    """
    reason = _error_info_reason(details)
    cls = error_for_reason(reason) if reason else None
    if cls is None:
        cls = _BY_GRPC_CODE.get(code, A2AError)
    text = message or None
    if cls is A2AError:
        text = f"agent error (gRPC {code}): {text or 'no message'}"
    return _build(cls, text, details, details)
