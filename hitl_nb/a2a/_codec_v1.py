"""A2A 1.0 JSON for the neutral model: camelCase members, ``TASK_STATE_*``, ``ROLE_*``.

``encode_*`` build plain JSON-ready dicts; ``decode_*`` read untrusted JSON and raise
:class:`~hitl_nb.errors.WireDecodeError` naming the member that was wrong. Unknown
members are ignored (forward compatibility). Stream events travel in a
``StreamResponse`` wrapper holding exactly one of ``task``, ``message``,
``statusUpdate``, ``artifactUpdate`` (A2A §3.2.3). Objects carry no ``kind`` and a
status update no ``final``. The shared logic is :class:`hitl_nb.a2a._codec.Codec`;
this module holds what 1.0 spells its own way and builds ``CODEC`` from it.
"""

from __future__ import annotations

from typing import Any

from hitl_nb.a2a import _codec
from hitl_nb.a2a import _wire as w
from hitl_nb.a2a._cards import decode_card_v1, encode_card_v1
from hitl_nb.a2a._model import Part, Role, TaskState

__all__ = ["CODEC", "ROLE_TO_WIRE", "STATE_TO_WIRE", "decode_part", "encode_part"]

STATE_TO_WIRE: dict[TaskState, str] = {
    TaskState.SUBMITTED: "TASK_STATE_SUBMITTED",
    TaskState.WORKING: "TASK_STATE_WORKING",
    TaskState.INPUT_REQUIRED: "TASK_STATE_INPUT_REQUIRED",
    TaskState.COMPLETED: "TASK_STATE_COMPLETED",
    TaskState.FAILED: "TASK_STATE_FAILED",
    TaskState.CANCELED: "TASK_STATE_CANCELED",
    TaskState.REJECTED: "TASK_STATE_REJECTED",
    TaskState.AUTH_REQUIRED: "TASK_STATE_AUTH_REQUIRED",
    TaskState.UNKNOWN: "TASK_STATE_UNSPECIFIED",
}
ROLE_TO_WIRE: dict[Role, str] = {
    Role.USER: "ROLE_USER",
    Role.AGENT: "ROLE_AGENT",
    Role.UNSPECIFIED: "ROLE_UNSPECIFIED",
}

# The StreamResponse member of each event (A2A §3.2.3).
_STREAM_KEYS = {
    _codec.TASK: "task",
    _codec.MESSAGE: "message",
    _codec.STATUS_UPDATE: "statusUpdate",
    _codec.ARTIFACT_UPDATE: "artifactUpdate",
}
_EVENT_OF_KEY = {key: name for name, key in _STREAM_KEYS.items()}
_STREAM_MEMBERS = tuple(_EVENT_OF_KEY)
_PART_KEYS = ("text", "data", "raw", "url")


def encode_part(part: Part) -> dict[str, Any]:
    """A Part as 1.0 JSON (``{"text": ...}``, ``{"data": ...}``, ``{"raw": ...}``, ...)."""
    out: dict[str, Any] = {}
    kind = part.kind
    if kind == "text":
        out["text"] = part.text
    elif kind == "data":
        out["data"] = part.data
    elif kind == "raw":
        assert part.raw is not None
        out["raw"] = w.b64encode(part.raw)
    else:
        out["url"] = part.url
    w.put(out, "metadata", part.metadata)
    w.put(out, "filename", part.filename)
    w.put(out, "mediaType", part.media_type)
    return out


def decode_part(value: Any, pointer: str = "") -> Part:
    """A Part from 1.0 JSON; exactly one of text, data, raw, url must be present."""
    o = w.obj(value, pointer)
    key = w.exactly_one(o, _PART_KEYS, pointer, "a part")
    common: dict[str, Any] = {
        "metadata": w.opt_obj(o, "metadata", pointer),
        "filename": w.opt_str(o, "filename", pointer),
        "media_type": w.opt_str(o, "mediaType", pointer),
    }
    if key == "text":
        return Part(text=w.string(o["text"], w.child(pointer, "text")), **common)
    if key == "data":
        return Part(data=o["data"], has_data=True, **common)
    if key == "raw":
        return Part(raw=w.b64decode(o["raw"], w.child(pointer, "raw")), **common)
    return Part(url=w.string(o["url"], w.child(pointer, "url")), **common)


def _wrap(name: str, body: dict[str, Any]) -> dict[str, Any]:
    return {_STREAM_KEYS[name]: body}


def _unwrap(o: dict[str, Any], pointer: str) -> tuple[str, Any, str]:
    key = w.exactly_one(o, _STREAM_MEMBERS, pointer, "a StreamResponse")
    return _EVENT_OF_KEY[key], o[key], w.child(pointer, key)


#: The A2A 1.0 codec.
CODEC = _codec.Codec(
    _codec.Dialect(
        version="1.0",
        states=STATE_TO_WIRE,
        roles=ROLE_TO_WIRE,
        encode_part=encode_part,
        decode_part=decode_part,
        wrap=_wrap,
        unwrap=_unwrap,
        send_result_problem="a SendMessage result holds a task or a message",
        encode_card=encode_card_v1,
        decode_card=decode_card_v1,
    )
)
