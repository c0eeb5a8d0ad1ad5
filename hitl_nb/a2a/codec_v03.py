"""A2A 0.3 JSON for the neutral model: ``kind`` fields, ``"input-required"``, ``"user"``.

The same functions as :mod:`hitl_nb.a2a.codec_v1`. Differences from 1.0: every object
carries ``kind`` (``message``, ``task``, ``status-update``, ``artifact-update``; parts
``text``, ``data``, ``file``), states and roles are lower-case words, a status update
carries ``final``, stream events and send results are the bare objects (told apart by
``kind``), and the agent card has ``url`` + ``preferredTransport`` +
``additionalInterfaces`` instead of ``supportedInterfaces``.
"""

from __future__ import annotations

from typing import Any

from hitl_nb.a2a import _wire as w
from hitl_nb.a2a._cards import decode_card_v03, encode_card_v03
from hitl_nb.a2a.model import (
    Artifact,
    Message,
    Part,
    Role,
    SendResult,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    WireDecodeError,
)

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
STATE_FROM_WIRE: dict[str, TaskState] = {v: k for k, v in STATE_TO_WIRE.items()}
ROLE_FROM_WIRE: dict[str, Role] = {"user": Role.USER, "agent": Role.AGENT}

# The hitl-prompt/v1 reference example spells the status update "task-status-update".
_STATUS_KINDS = ("status-update", "task-status-update")
_ARTIFACT_KINDS = ("artifact-update", "task-artifact-update")


def state_to_wire(state: TaskState) -> str:
    """``TaskState.INPUT_REQUIRED`` -> ``"input-required"``."""
    return STATE_TO_WIRE[state]


def state_from_wire(value: Any, pointer: str = "") -> TaskState:
    """``"input-required"`` -> ``TaskState.INPUT_REQUIRED``."""
    return w.enum_member(value, pointer, STATE_FROM_WIRE, "task state")


def _role_to_wire(role: Role) -> str:
    if role is Role.UNSPECIFIED:
        raise ValueError("A2A 0.3 has no unspecified role: use Role.USER or Role.AGENT")
    return str(role.value)


def _check_kind(o: dict[str, Any], pointer: str, *expected: str) -> None:
    kind = o.get("kind")
    if kind is not None and kind not in expected:
        raise WireDecodeError(
            w.child(pointer, "kind"), f"expected kind {expected[0]!r}, got {kind!r}"
        )


# -- parts and messages ---------------------------------------------------------------


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


def encode_message(message: Message) -> dict[str, Any]:
    """A Message as 0.3 JSON."""
    out: dict[str, Any] = {
        "kind": "message",
        "messageId": message.message_id,
        "role": _role_to_wire(message.role),
        "parts": [encode_part(p) for p in message.parts],
    }
    w.put(out, "taskId", message.task_id)
    w.put(out, "contextId", message.context_id)
    w.put(out, "metadata", message.metadata)
    w.put(out, "extensions", list(message.extensions))
    w.put(out, "referenceTaskIds", list(message.reference_task_ids))
    return out


def decode_message(value: Any, pointer: str = "") -> Message:
    """A Message from 0.3 JSON."""
    o = w.obj(value, pointer)
    _check_kind(o, pointer, "message")
    return Message(
        message_id=w.req_str(o, "messageId", pointer),
        role=w.enum_member(
            w.req(o, "role", pointer), w.child(pointer, "role"), ROLE_FROM_WIRE, "role"
        ),
        parts=w.req_list(o, "parts", pointer, decode_part),
        task_id=w.opt_str(o, "taskId", pointer),
        context_id=w.opt_str(o, "contextId", pointer),
        metadata=w.opt_obj(o, "metadata", pointer),
        extensions=w.opt_list(o, "extensions", pointer, w.string),
        reference_task_ids=w.opt_list(o, "referenceTaskIds", pointer, w.string),
    )


# -- tasks ----------------------------------------------------------------------------


def encode_status(status: TaskStatus) -> dict[str, Any]:
    """A TaskStatus as 0.3 JSON."""
    out: dict[str, Any] = {"state": state_to_wire(status.state)}
    if status.message is not None:
        out["message"] = encode_message(status.message)
    w.put(out, "timestamp", status.timestamp)
    return out


def decode_status(value: Any, pointer: str = "") -> TaskStatus:
    """A TaskStatus from 0.3 JSON."""
    o = w.obj(value, pointer)
    message = o.get("message")
    return TaskStatus(
        state=state_from_wire(w.req(o, "state", pointer), w.child(pointer, "state")),
        message=None if message is None else decode_message(message, w.child(pointer, "message")),
        timestamp=w.opt_str(o, "timestamp", pointer),
    )


def encode_artifact(artifact: Artifact) -> dict[str, Any]:
    """An Artifact as 0.3 JSON."""
    out: dict[str, Any] = {
        "artifactId": artifact.artifact_id,
        "parts": [encode_part(p) for p in artifact.parts],
    }
    w.put(out, "name", artifact.name)
    w.put(out, "description", artifact.description)
    w.put(out, "metadata", artifact.metadata)
    w.put(out, "extensions", list(artifact.extensions))
    return out


def decode_artifact(value: Any, pointer: str = "") -> Artifact:
    """An Artifact from 0.3 JSON."""
    o = w.obj(value, pointer)
    return Artifact(
        artifact_id=w.req_str(o, "artifactId", pointer),
        parts=w.req_list(o, "parts", pointer, decode_part),
        name=w.opt_str(o, "name", pointer),
        description=w.opt_str(o, "description", pointer),
        metadata=w.opt_obj(o, "metadata", pointer),
        extensions=w.opt_list(o, "extensions", pointer, w.string),
    )


def encode_task(task: Task) -> dict[str, Any]:
    """A Task as 0.3 JSON."""
    out: dict[str, Any] = {
        "kind": "task",
        "id": task.id,
        "contextId": task.context_id,
        "status": encode_status(task.status),
    }
    w.put(out, "artifacts", [encode_artifact(a) for a in task.artifacts])
    w.put(out, "history", [encode_message(m) for m in task.history])
    w.put(out, "metadata", task.metadata)
    return out


def decode_task(value: Any, pointer: str = "") -> Task:
    """A Task from 0.3 JSON."""
    o = w.obj(value, pointer)
    _check_kind(o, pointer, "task")
    return Task(
        id=w.req_str(o, "id", pointer),
        context_id=w.opt_str(o, "contextId", pointer) or "",
        status=decode_status(w.req(o, "status", pointer), w.child(pointer, "status")),
        artifacts=w.opt_list(o, "artifacts", pointer, decode_artifact),
        history=w.opt_list(o, "history", pointer, decode_message),
        metadata=w.opt_obj(o, "metadata", pointer),
    )


def encode_status_update(event: TaskStatusUpdateEvent) -> dict[str, Any]:
    """A status update as 0.3 JSON; ``final`` is ``final_hint`` or derived from the state."""
    final = event.final_hint
    if final is None:
        final = event.status.state.is_terminal or event.status.state.is_interrupted
    out: dict[str, Any] = {
        "kind": "status-update",
        "taskId": event.task_id,
        "contextId": event.context_id,
        "status": encode_status(event.status),
        "final": final,
    }
    w.put(out, "metadata", event.metadata)
    return out


def decode_status_update(value: Any, pointer: str = "") -> TaskStatusUpdateEvent:
    """A status update from 0.3 JSON (``final`` kept as ``final_hint``)."""
    o = w.obj(value, pointer)
    _check_kind(o, pointer, *_STATUS_KINDS)
    return TaskStatusUpdateEvent(
        task_id=w.req_str(o, "taskId", pointer),
        context_id=w.opt_str(o, "contextId", pointer) or "",
        status=decode_status(w.req(o, "status", pointer), w.child(pointer, "status")),
        metadata=w.opt_obj(o, "metadata", pointer),
        final_hint=w.opt_bool(o, "final", pointer) if "final" in o else None,
    )


def encode_artifact_update(event: TaskArtifactUpdateEvent) -> dict[str, Any]:
    """An artifact update as 0.3 JSON."""
    out: dict[str, Any] = {
        "kind": "artifact-update",
        "taskId": event.task_id,
        "contextId": event.context_id,
        "artifact": encode_artifact(event.artifact),
    }
    if event.append:
        out["append"] = True
    if event.last_chunk:
        out["lastChunk"] = True
    w.put(out, "metadata", event.metadata)
    return out


def decode_artifact_update(value: Any, pointer: str = "") -> TaskArtifactUpdateEvent:
    """An artifact update from 0.3 JSON."""
    o = w.obj(value, pointer)
    _check_kind(o, pointer, *_ARTIFACT_KINDS)
    return TaskArtifactUpdateEvent(
        task_id=w.req_str(o, "taskId", pointer),
        context_id=w.opt_str(o, "contextId", pointer) or "",
        artifact=decode_artifact(w.req(o, "artifact", pointer), w.child(pointer, "artifact")),
        append=w.opt_bool(o, "append", pointer),
        last_chunk=w.opt_bool(o, "lastChunk", pointer),
        metadata=w.opt_obj(o, "metadata", pointer),
    )


# -- stream events and send results ---------------------------------------------------


def encode_stream_response(event: StreamEvent) -> dict[str, Any]:
    """A stream event as 0.3 sends it: the bare object with its ``kind``."""
    if isinstance(event, Task):
        return encode_task(event)
    if isinstance(event, Message):
        return encode_message(event)
    if isinstance(event, TaskStatusUpdateEvent):
        return encode_status_update(event)
    return encode_artifact_update(event)


def decode_stream_response(value: Any, pointer: str = "") -> StreamEvent:
    """A 0.3 stream event, told apart by ``kind``."""
    o = w.obj(value, pointer)
    kind = o.get("kind")
    if kind == "task":
        return decode_task(o, pointer)
    if kind == "message":
        return decode_message(o, pointer)
    if kind in _STATUS_KINDS:
        return decode_status_update(o, pointer)
    if kind in _ARTIFACT_KINDS:
        return decode_artifact_update(o, pointer)
    raise WireDecodeError(
        w.child(pointer, "kind"),
        f"expected kind task, message, status-update or artifact-update, got {kind!r}",
    )


def encode_send_result(result: SendResult) -> dict[str, Any]:
    """A ``message/send`` result: the bare Task or Message."""
    if isinstance(result, Task):
        return encode_task(result)
    return encode_message(result)


def decode_send_result(value: Any, pointer: str = "") -> SendResult:
    """A ``message/send`` result (a Task or a Message)."""
    event = decode_stream_response(value, pointer)
    if not isinstance(event, (Task, Message)):
        raise WireDecodeError(pointer, "a message/send result is a task or a message")
    return event


# -- agent card -----------------------------------------------------------------------

#: An AgentCard as 0.3 JSON: the first interface is ``url`` + ``preferredTransport``.
encode_agent_card = encode_card_v03
#: An AgentCard from 0.3 JSON (interfaces gathered from url and additionalInterfaces).
decode_agent_card = decode_card_v03
