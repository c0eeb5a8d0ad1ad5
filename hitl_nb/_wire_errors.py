"""hitl-prompt/v1's errors as an agent writes them, on each binding.

One shape for every agent hitl-nb ships (the mock agent, and ``hitl_nb.agent`` in front
of an a2a-sdk server), so a client reads them all alike:

- JSON-RPC 1.0 puts a list of detail objects in ``error.data``: a
  ``google.rpc.ErrorInfo`` (reason, domain, metadata of strings), then, for a 422 /
  -32011, the ``validation_errors`` detail (§Acceptance and rejection: "The error
  envelope MUST include a validation_errors array");
- JSON-RPC 0.3 puts the object of the spec's example there (``reference/examples/
  invalid-response-422.json``: ``extension``, ``prompt_id``, ``validation_errors``);
- HTTP+JSON answers with a ``google.rpc.Status`` body carrying the same details;
- gRPC ends the call with a status (409: ABORTED, 422: INVALID_ARGUMENT, A2A's errors as
  a2a-sdk maps them) whose ``google.rpc.Status`` (``grpc-status-details-bin``) carries the
  ErrorInfo and, for a 422, the ``validation_errors`` detail as a ``google.protobuf.Struct``
  (ErrorInfo metadata holds only strings; a Struct keeps the array an array).

``with_errors=False`` leaves the ``validation_errors`` out (the mock agent's
``422-without-errors`` fault, for negative tests of a harness).
"""

from __future__ import annotations

from typing import Any

from .errors import A2AError, ResponseInvalid
from .spec import EXTENSION_URI

__all__ = [
    "ERROR_INFO_TYPE",
    "VALIDATION_DETAIL_TYPE",
    "error_data_v03",
    "error_details",
    "grpc_code",
    "grpc_status",
    "jsonrpc_error",
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


def error_details(exc: A2AError, *, with_errors: bool = True) -> list[dict[str, Any]]:
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
    if isinstance(exc, ResponseInvalid) and with_errors:
        details.append(
            {
                "@type": VALIDATION_DETAIL_TYPE,
                "extension": EXTENSION_URI,
                "prompt_id": data.get("prompt_id"),
                "validation_errors": exc.validation_errors,
            }
        )
    return details


def error_data_v03(exc: A2AError, *, with_errors: bool = True) -> dict[str, Any] | None:
    """The 0.3 ``error.data`` object (the shape of the spec's example, for hitl errors)."""
    if not isinstance(exc.data, dict) or "extension" not in exc.data:
        return None
    out: dict[str, Any] = {"extension": EXTENSION_URI, "prompt_id": exc.data.get("prompt_id")}
    if isinstance(exc, ResponseInvalid) and with_errors:
        out["validation_errors"] = exc.validation_errors
    return out


def jsonrpc_error(exc: A2AError, version: str, *, with_errors: bool = True) -> dict[str, Any]:
    """The JSON-RPC ``error`` object of ``exc`` in ``version``'s shape (1.0 or 0.3)."""
    err: dict[str, Any] = {"code": exc.code, "message": exc.message}
    data: dict[str, Any] | list[dict[str, Any]] | None
    if version == "0.3":
        data = error_data_v03(exc, with_errors=with_errors)
    else:
        data = error_details(exc, with_errors=with_errors)
    if data is not None:
        err["data"] = data
    return err


def rest_error_body(exc: A2AError, *, with_errors: bool = True) -> dict[str, Any]:
    """A ``google.rpc.Status`` body for ``exc``."""
    status = "FAILED_PRECONDITION" if exc.reason in _PRECONDITION else None
    return {
        "error": {
            "code": exc.http_status,
            "status": status or _GRPC_STATUS.get(exc.http_status, "UNKNOWN"),
            "message": exc.message,
            "details": error_details(exc, with_errors=with_errors),
        }
    }


#: The numbers of the gRPC status codes used here (grpc's ``StatusCode``, code.proto).
_GRPC_NUMBERS = {
    "UNKNOWN": 2,
    "INVALID_ARGUMENT": 3,
    "NOT_FOUND": 5,
    "FAILED_PRECONDITION": 9,
    "ABORTED": 10,
    "INTERNAL": 13,
}


def grpc_code(exc: A2AError) -> str:
    """The name of the gRPC status code ``exc`` ends a call with."""
    if exc.reason in _PRECONDITION or exc.reason == "EXTENSION_SUPPORT_REQUIRED":
        return "FAILED_PRECONDITION"
    return _GRPC_STATUS.get(exc.http_status, "UNKNOWN")


def grpc_status(exc: A2AError, *, with_errors: bool = True) -> tuple[str, str, bytes]:
    """``(code name, message, google.rpc.Status bytes)`` for ending a gRPC call with
    ``exc``; the bytes go in the ``grpc-status-details-bin`` trailing metadata."""
    from google.protobuf import any_pb2, struct_pb2
    from google.rpc import error_details_pb2, status_pb2

    code = grpc_code(exc)
    status = status_pb2.Status(code=_GRPC_NUMBERS[code], message=exc.message)
    for detail in error_details(exc, with_errors=with_errors):
        packed = any_pb2.Any()
        if detail["@type"] == ERROR_INFO_TYPE:
            info = error_details_pb2.ErrorInfo(
                reason=detail["reason"], domain=detail["domain"], metadata=detail["metadata"]
            )
            packed.Pack(info)
        else:
            struct = struct_pb2.Struct()
            struct.update({k: v for k, v in detail.items() if k != "@type"})
            packed.Pack(struct)
        status.details.append(packed)
    return code, exc.message, status.SerializeToString()
