"""How the mock agent writes an A2A error on each binding.

JSON-RPC 1.0 puts a list of detail objects in ``error.data`` (an ErrorInfo, then, for a
422, the ``validation_errors`` detail); JSON-RPC 0.3 puts the object of the spec's example
there; HTTP+JSON answers with a ``google.rpc.Status`` body carrying the same details.
"""

from __future__ import annotations

from typing import Any

from hitl_nb.errors import A2AError, ResponseInvalid
from hitl_nb.mock_agent._acceptance import OMIT_ERRORS
from hitl_nb.spec import EXTENSION_URI

__all__ = [
    "VALIDATION_DETAIL_TYPE",
    "error_data_v03",
    "error_details",
    "rest_error_body",
]

ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
#: ``@type`` of the error detail that carries ``validation_errors`` (422 / -32011).
VALIDATION_DETAIL_TYPE = "type.googleapis.com/hitl_prompt.v1.ValidationErrors"

_GRPC_STATUS = {
    400: "INVALID_ARGUMENT",
    404: "NOT_FOUND",
    409: "ABORTED",
    413: "INVALID_ARGUMENT",
    415: "INVALID_ARGUMENT",
    422: "INVALID_ARGUMENT",
    500: "INTERNAL",
}
_PRECONDITION = (
    "TASK_NOT_CANCELABLE",
    "PUSH_NOTIFICATION_NOT_SUPPORTED",
    "UNSUPPORTED_OPERATION",
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    "VERSION_NOT_SUPPORTED",
)


def error_details(exc: A2AError) -> list[dict[str, Any]]:
    """The 1.0 ``error.data`` / REST ``details`` list: an ErrorInfo, then hitl details."""
    meta: dict[str, str] = {}
    data = exc.data if isinstance(exc.data, dict) else {}
    for key, wire in (
        ("extension", "extension"),
        ("prompt_id", "promptId"),
        ("task_id", "taskId"),
        ("detail", "detail"),
    ):
        if isinstance(data.get(key), str):
            meta[wire] = data[key]
    details: list[dict[str, Any]] = [
        {"@type": ERROR_INFO_TYPE, "reason": exc.reason, "domain": exc.domain, "metadata": meta}
    ]
    if isinstance(exc, ResponseInvalid) and not data.get(OMIT_ERRORS):
        details.append(
            {
                "@type": VALIDATION_DETAIL_TYPE,
                "extension": EXTENSION_URI,
                "prompt_id": data.get("prompt_id"),
                "validation_errors": exc.validation_errors,
            }
        )
    return details


def error_data_v03(exc: A2AError) -> dict[str, Any] | None:
    """The 0.3 ``error.data`` object (the shape of the spec's example, for hitl errors)."""
    if not isinstance(exc.data, dict) or "extension" not in exc.data:
        return None
    out: dict[str, Any] = {"extension": EXTENSION_URI, "prompt_id": exc.data.get("prompt_id")}
    if isinstance(exc, ResponseInvalid) and not exc.data.get(OMIT_ERRORS):
        out["validation_errors"] = exc.validation_errors
    return out


def rest_error_body(exc: A2AError) -> dict[str, Any]:
    """A ``google.rpc.Status`` body for ``exc``."""
    status = "FAILED_PRECONDITION" if exc.reason in _PRECONDITION else None
    return {
        "error": {
            "code": exc.http_status,
            "status": status or _GRPC_STATUS.get(exc.http_status, "UNKNOWN"),
            "message": exc.message,
            "details": error_details(exc),
        }
    }
