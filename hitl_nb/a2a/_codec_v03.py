"""A2A 0.3 JSON for the neutral model: ``kind`` fields, ``"input-required"``, ``"user"``.

Builds ``CODEC``, the 0.3 :class:`~hitl_nb.a2a._codec.Codec`. Differences from 1.0:
every object carries ``kind`` (``message``, ``task``, ``status-update``,
``artifact-update``; parts ``text``, ``data``, ``file``), states and roles are lower-case
words, a status update carries ``final``, stream events and send results are the bare
objects (told apart by ``kind``), and the agent card has ``url`` + ``preferredTransport`` +
``additionalInterfaces`` instead of ``supportedInterfaces``. The shared logic is in
:mod:`hitl_nb.a2a._codec`; this module holds what 0.3 spells its own way.
"""

from __future__ import annotations

from typing import Any

from hitl_nb.a2a import _codec
from hitl_nb.a2a import _wire as w
from hitl_nb.a2a._cards import decode_card_v03, encode_card_v03
from hitl_nb.a2a._model import Part, Role, TaskState
from hitl_nb.errors import WireDecodeError

__all__ = ["CODEC", "STATE_TO_WIRE", "decode_part", "encode_part"]

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


#: The A2A 0.3 codec.
CODEC = _codec.Codec(
    _codec.Dialect(
        version="0.3",
        states=STATE_TO_WIRE,
        roles=_ROLE_TO_WIRE,
        encode_part=encode_part,
        decode_part=decode_part,
        wrap=_wrap,
        unwrap=_unwrap,
        send_result_problem="a message/send result is a task or a message",
        encode_card=encode_card_v03,
        decode_card=decode_card_v03,
        kinds=_KINDS,
        final_flag=True,
    )
)
