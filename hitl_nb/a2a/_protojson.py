"""The gRPC codec: A2A 1.0 JSON to and from the protobuf messages of ``a2a-sdk``.

A2A 1.0's JSON is the ProtoJSON form of its normative ``a2a.proto`` (camelCase members,
enum names such as ``TASK_STATE_INPUT_REQUIRED``, ``google.protobuf.Struct`` for
metadata and data parts). So the gRPC binding needs no codec of its own for the model:
the 1.0 JSON codec (:data:`~hitl_nb.a2a.CODEC_V1`) makes and reads the JSON, and this
module turns it into the generated messages of ``a2a.types.a2a_pb2`` (``a2a-sdk[grpc]``)
and back, through protobuf's own ``json_format``. No message is written by hand.

Two things protobuf itself decides: numbers inside a ``Struct`` are doubles (``2``
arrives as ``2.0``; the client settles a response_schema's integral numbers on the way in,
and JSON Schema counts ``2.0`` as an integer), and ``int64`` members are strings in
ProtoJSON.

``a2a-sdk`` is imported on first use: :func:`grpc_missing` says what to install when it
(or ``grpcio``) is not there.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from hitl_nb.errors import WireDecodeError

__all__ = [
    "GRPC_SERVICE",
    "from_proto",
    "grpc_missing",
    "proto_class",
    "to_proto",
]

#: The fully qualified name of A2A 1.0's gRPC service (``a2a.proto``'s package and service).
GRPC_SERVICE = "lf.a2a.v1.A2AService"
_INSTALL = "the gRPC binding needs grpcio and a2a-sdk's protobuf types: pip install 'hitl-nb[grpc]'"


@cache
def grpc_missing() -> str | None:
    """None when the gRPC binding can be used here, else what to install (one sentence)."""
    try:
        import grpc  # noqa: F401
        from a2a.types import a2a_pb2, a2a_pb2_grpc  # noqa: F401
        from google.rpc import error_details_pb2, status_pb2  # noqa: F401
    except ImportError as exc:
        return f"{_INSTALL} ({exc})"
    return None


def _pb2() -> Any:
    problem = grpc_missing()
    if problem is not None:
        raise ImportError(problem)
    from a2a.types import a2a_pb2

    return a2a_pb2


def proto_class(name: str) -> Any:
    """The generated message class ``name`` of ``a2a.proto`` (``"SendMessageRequest"``)."""
    return getattr(_pb2(), name)


def to_proto(name: str, doc: Any, pointer: str = "") -> Any:
    """The message ``name`` parsed from its ProtoJSON ``doc``.

    Raises :class:`~hitl_nb.errors.WireDecodeError` when ``doc`` is not that message's
    JSON (an unknown member, a wrong type, an enum name the proto does not have).
    """
    from google.protobuf import json_format

    cls = proto_class(name)
    if not isinstance(doc, dict):
        raise WireDecodeError(pointer, f"expected a JSON object for {name}")
    try:
        return json_format.ParseDict(doc, cls())
    except (json_format.ParseError, ValueError, TypeError, RecursionError) as exc:
        raise WireDecodeError(pointer, f"not a {name}: {exc}") from None


def from_proto(message: Any) -> dict[str, Any]:
    """A message's ProtoJSON (camelCase members, enum names, defaults left out)."""
    from google.protobuf import json_format

    try:
        doc: dict[str, Any] = json_format.MessageToDict(message)
    except (ValueError, TypeError, RecursionError) as exc:
        # A Struct holding NaN or infinity, or nested past protobuf's recursion limit.
        raise WireDecodeError("", f"a {type(message).__name__} with no JSON form: {exc}") from None
    return doc
