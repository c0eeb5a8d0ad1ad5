"""A2A 0.3 JSON for the neutral model: ``kind`` fields, ``"input-required"``, ``"user"``.

The same functions as :mod:`hitl_nb.a2a._codec_v1`. Differences from 1.0: every object
carries ``kind`` (``message``, ``task``, ``status-update``, ``artifact-update``; parts
``text``, ``data``, ``file``), states and roles are lower-case words, a status update
carries ``final``, stream events and send results are the bare objects (told apart by
``kind``), and the agent card has ``url`` + ``preferredTransport`` +
``additionalInterfaces`` instead of ``supportedInterfaces``. The shared logic is
:class:`hitl_nb.a2a._codec.Codec`; this module holds what 0.3 spells its own way.
"""

from __future__ import annotations

from typing import Any

from hitl_nb.a2a import _codec
from hitl_nb.a2a import _wire as w
from hitl_nb.a2a._cards import decode_card_v03, encode_card_v03
from hitl_nb.a2a._model import Part, Role, TaskState, WireDecodeError

__all__ = [
    "ROLE_FROM_WIRE",
    "STATE_FROM_WIRE",
    "STATE_TO_WIRE",
    "VERSION",
    "decode_agent_card",
    "decode_part",
    "encode_agent_card",
    "encode_part",
    *_codec.CODEC_FUNCTIONS,
]

#: The wire version this codec speaks.
VERSION = "0.3"

STATE_TO_WIRE: dict[TaskState, str] = {
    TaskState.SUBMITTED: "submitted",
    TaskState.WORKING: "working",
    TaskState.INPUT_REQUIRED: "input-required",
    TaskState.COMPLETED: "completed",
    TaskState.FAILED: "failed",
    TaskState.CANCELED: "canceled",
    TaskState.REJECTED: "rejected",
    TaskState.AUTH_REQUIRED: "auth-required",
    TaskState.UNKNOWN: "unknown",
}
# 0.3 has no unspecified role: encoding Role.UNSPECIFIED raises ValueError.
_ROLE_TO_WIRE: dict[Role, str] = {Role.USER: "user", Role.AGENT: "agent"}

# The ``kind`` of each object, first the one written. The hitl-prompt/v1 reference
# example spells the status update "task-status-update" (and so the artifact update).
_KINDS: dict[str, tuple[str, ...]] = {
    _codec.MESSAGE: ("message",),
    _codec.TASK: ("task",),
    _codec.STATUS_UPDATE: ("status-update", "task-status-update"),
    _codec.ARTIFACT_UPDATE: ("artifact-update", "task-artifact-update"),
}
_EVENT_OF_KIND = {kind: name for name, kinds in _KINDS.items() for kind in kinds}


def encode_part(part: Part) -> dict[str, Any]:
    """A Part as 0.3 JSON; raw and url parts become ``kind: "file"``."""
    kind = part.kind
    out: dict[str, Any]
    if kind == "text":
        out = {"kind": "text", "text": part.text}
    elif kind == "data":
        if not isinstance(part.data, dict):
            raise ValueError("A2A 0.3 data parts carry a JSON object only")
        out = {"kind": "data", "data": part.data}
    else:
        file: dict[str, Any] = {}
        if part.raw is not None:
            file["bytes"] = w.b64encode(part.raw)
        else:
            file["uri"] = part.url
        w.put(file, "name", part.filename)
        w.put(file, "mimeType", part.media_type)
        out = {"kind": "file", "file": file}
    w.put(out, "metadata", part.metadata)
    return out


def decode_part(value: Any, pointer: str = "") -> Part:
    """A Part from 0.3 JSON (``kind`` text, data or file)."""
    o = w.obj(value, pointer)
    kind = o.get("kind")
    if kind is None:  # tolerate a missing kind when the content says which
        kind = next((k for k in ("text", "data", "file") if k in o), None)
    metadata = w.opt_obj(o, "metadata", pointer)
    if kind == "text":
        return Part(text=w.req_str(o, "text", pointer), metadata=metadata)
    if kind == "data":
        data = w.obj(w.req(o, "data", pointer), w.child(pointer, "data"))
        return Part(data=data, has_data=True, metadata=metadata)
    if kind == "file":
        fptr = w.child(pointer, "file")
        f = w.obj(w.req(o, "file", pointer), fptr)
        name = w.opt_str(f, "name", fptr)
        mime = w.opt_str(f, "mimeType", fptr)
        if ("bytes" in f) == ("uri" in f):
            raise WireDecodeError(fptr, "a file holds exactly one of bytes, uri")
        if "bytes" in f:
            raw = w.b64decode(f["bytes"], w.child(fptr, "bytes"))
            return Part(raw=raw, filename=name, media_type=mime, metadata=metadata)
        url = w.string(f["uri"], w.child(fptr, "uri"))
        return Part(url=url, filename=name, media_type=mime, metadata=metadata)
    raise WireDecodeError(
        w.child(pointer, "kind"), f"expected part kind text, data or file, got {kind!r}"
    )


def _wrap(name: str, body: dict[str, Any]) -> dict[str, Any]:
    return body  # 0.3 sends the bare object; its kind tells the events apart


def _unwrap(o: dict[str, Any], pointer: str) -> tuple[str, Any, str]:
    kind = o.get("kind")
    if not isinstance(kind, str) or kind not in _EVENT_OF_KIND:
        raise WireDecodeError(
            w.child(pointer, "kind"),
            f"expected kind task, message, status-update or artifact-update, got {kind!r}",
        )
    return _EVENT_OF_KIND[kind], o, pointer


_CODEC = _codec.Codec(
    _codec.Dialect(
        version=VERSION,
        states=STATE_TO_WIRE,
        roles=_ROLE_TO_WIRE,
        encode_part=encode_part,
        decode_part=decode_part,
        wrap=_wrap,
        unwrap=_unwrap,
        send_result_problem="a message/send result is a task or a message",
        kinds=_KINDS,
        final_flag=True,
    )
)

STATE_FROM_WIRE: dict[str, TaskState] = _CODEC.states_from_wire
ROLE_FROM_WIRE: dict[str, Role] = _CODEC.roles_from_wire

state_to_wire = _CODEC.state_to_wire
state_from_wire = _CODEC.state_from_wire
encode_message = _CODEC.encode_message
decode_message = _CODEC.decode_message
encode_status = _CODEC.encode_status
decode_status = _CODEC.decode_status
encode_artifact = _CODEC.encode_artifact
decode_artifact = _CODEC.decode_artifact
encode_task = _CODEC.encode_task
decode_task = _CODEC.decode_task
#: A status update; ``final`` is ``final_hint`` or derived from the state.
encode_status_update = _CODEC.encode_status_update
#: A status update (``final`` kept as ``final_hint``).
decode_status_update = _CODEC.decode_status_update
encode_artifact_update = _CODEC.encode_artifact_update
decode_artifact_update = _CODEC.decode_artifact_update
#: A stream event as 0.3 sends it: the bare object with its ``kind``.
encode_stream_response = _CODEC.encode_stream_response
#: A 0.3 stream event, told apart by ``kind``.
decode_stream_response = _CODEC.decode_stream_response
#: A ``message/send`` result: the bare Task or Message.
encode_send_result = _CODEC.encode_send_result
#: A ``message/send`` result (a Task or a Message).
decode_send_result = _CODEC.decode_send_result

#: An AgentCard as 0.3 JSON: the first interface is ``url`` + ``preferredTransport``.
encode_agent_card = encode_card_v03
#: An AgentCard from 0.3 JSON (interfaces gathered from url and additionalInterfaces).
decode_agent_card = decode_card_v03
