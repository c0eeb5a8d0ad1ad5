"""A2A 1.0 JSON for the neutral model: camelCase members, ``TASK_STATE_*``, ``ROLE_*``.

``encode_*`` build plain JSON-ready dicts; ``decode_*`` read untrusted JSON and raise
:class:`~hitl_nb.a2a.model.WireDecodeError` naming the member that was wrong. Unknown
members are ignored (forward compatibility). Stream events travel in a
``StreamResponse`` wrapper holding exactly one of ``task``, ``message``,
``statusUpdate``, ``artifactUpdate`` (A2A §3.2.3).
"""

from __future__ import annotations

from typing import Any

from hitl_nb.a2a import _wire as w
from hitl_nb.a2a._cards import decode_card_v1, encode_card_v1
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

#: The wire version this codec speaks (the ``A2A-Version`` header value).
VERSION = "1.0"

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
STATE_FROM_WIRE: dict[str, TaskState] = {v: k for k, v in STATE_TO_WIRE.items()}
ROLE_TO_WIRE: dict[Role, str] = {
    Role.USER: "ROLE_USER",
    Role.AGENT: "ROLE_AGENT",
    Role.UNSPECIFIED: "ROLE_UNSPECIFIED",
}
ROLE_FROM_WIRE: dict[str, Role] = {v: k for k, v in ROLE_TO_WIRE.items()}

_STREAM_KEYS = ("task", "message", "statusUpdate", "artifactUpdate")


def state_to_wire(state: TaskState) -> str:
    """``TaskState.INPUT_REQUIRED`` -> ``"TASK_STATE_INPUT_REQUIRED"``."""
    return STATE_TO_WIRE[state]


def state_from_wire(value: Any, pointer: str = "") -> TaskState:
    """``"TASK_STATE_INPUT_REQUIRED"`` -> ``TaskState.INPUT_REQUIRED``."""
    return w.enum_member(value, pointer, STATE_FROM_WIRE, "task state")


# -- parts and messages ---------------------------------------------------------------


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
    present = [k for k in ("text", "data", "raw", "url") if k in o]
    if len(present) != 1:
        raise WireDecodeError(
            pointer,
            "a part holds exactly one of text, data, raw, url; got "
            + (", ".join(present) or "none"),
        )
    common: dict[str, Any] = {
        "metadata": w.opt_obj(o, "metadata", pointer),
        "filename": w.opt_str(o, "filename", pointer),
        "media_type": w.opt_str(o, "mediaType", pointer),
    }
    key = present[0]
    if key == "text":
        return Part(text=w.string(o["text"], w.child(pointer, "text")), **common)
    if key == "data":
        return Part(data=o["data"], has_data=True, **common)
    if key == "raw":
        return Part(raw=w.b64decode(o["raw"], w.child(pointer, "raw")), **common)
    return Part(url=w.string(o["url"], w.child(pointer, "url")), **common)


def encode_message(message: Message) -> dict[str, Any]:
    """A Message as 1.0 JSON."""
    out: dict[str, Any] = {
        "messageId": message.message_id,
        "role": ROLE_TO_WIRE[message.role],
        "parts": [encode_part(p) for p in message.parts],
    }
    w.put(out, "taskId", message.task_id)
    w.put(out, "contextId", message.context_id)
    w.put(out, "metadata", message.metadata)
    w.put(out, "extensions", list(message.extensions))
    w.put(out, "referenceTaskIds", list(message.reference_task_ids))
    return out


def decode_message(value: Any, pointer: str = "") -> Message:
    """A Message from 1.0 JSON (``messageId``, ``role`` and ``parts`` required)."""
    o = w.obj(value, pointer)
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
    """A TaskStatus as 1.0 JSON."""
    out: dict[str, Any] = {"state": state_to_wire(status.state)}
    if status.message is not None:
        out["message"] = encode_message(status.message)
    w.put(out, "timestamp", status.timestamp)
    return out


def decode_status(value: Any, pointer: str = "") -> TaskStatus:
    """A TaskStatus from 1.0 JSON."""
    o = w.obj(value, pointer)
    message = o.get("message")
    return TaskStatus(
        state=state_from_wire(w.req(o, "state", pointer), w.child(pointer, "state")),
        message=None if message is None else decode_message(message, w.child(pointer, "message")),
        timestamp=w.opt_str(o, "timestamp", pointer),
    )


def encode_artifact(artifact: Artifact) -> dict[str, Any]:
    """An Artifact as 1.0 JSON."""
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
    """An Artifact from 1.0 JSON."""
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
    """A Task as 1.0 JSON."""
    out: dict[str, Any] = {
        "id": task.id,
        "contextId": task.context_id,
        "status": encode_status(task.status),
    }
    w.put(out, "artifacts", [encode_artifact(a) for a in task.artifacts])
    w.put(out, "history", [encode_message(m) for m in task.history])
    w.put(out, "metadata", task.metadata)
    return out


def decode_task(value: Any, pointer: str = "") -> Task:
    """A Task from 1.0 JSON (``id`` and ``status`` required)."""
    o = w.obj(value, pointer)
    return Task(
        id=w.req_str(o, "id", pointer),
        context_id=w.opt_str(o, "contextId", pointer) or "",
        status=decode_status(w.req(o, "status", pointer), w.child(pointer, "status")),
        artifacts=w.opt_list(o, "artifacts", pointer, decode_artifact),
        history=w.opt_list(o, "history", pointer, decode_message),
        metadata=w.opt_obj(o, "metadata", pointer),
    )


def encode_status_update(event: TaskStatusUpdateEvent) -> dict[str, Any]:
    """A TaskStatusUpdateEvent as 1.0 JSON (no ``final``: 1.0 dropped it)."""
    out: dict[str, Any] = {
        "taskId": event.task_id,
        "contextId": event.context_id,
        "status": encode_status(event.status),
    }
    w.put(out, "metadata", event.metadata)
    return out


def decode_status_update(value: Any, pointer: str = "") -> TaskStatusUpdateEvent:
    """A TaskStatusUpdateEvent from 1.0 JSON."""
    o = w.obj(value, pointer)
    return TaskStatusUpdateEvent(
        task_id=w.req_str(o, "taskId", pointer),
        context_id=w.opt_str(o, "contextId", pointer) or "",
        status=decode_status(w.req(o, "status", pointer), w.child(pointer, "status")),
        metadata=w.opt_obj(o, "metadata", pointer),
    )


def encode_artifact_update(event: TaskArtifactUpdateEvent) -> dict[str, Any]:
    """A TaskArtifactUpdateEvent as 1.0 JSON."""
    out: dict[str, Any] = {
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
    """A TaskArtifactUpdateEvent from 1.0 JSON."""
    o = w.obj(value, pointer)
    return TaskArtifactUpdateEvent(
        task_id=w.req_str(o, "taskId", pointer),
        context_id=w.opt_str(o, "contextId", pointer) or "",
        artifact=decode_artifact(w.req(o, "artifact", pointer), w.child(pointer, "artifact")),
        append=w.opt_bool(o, "append", pointer),
        last_chunk=w.opt_bool(o, "lastChunk", pointer),
        metadata=w.opt_obj(o, "metadata", pointer),
    )


# -- wrappers -------------------------------------------------------------------------


def encode_stream_response(event: StreamEvent) -> dict[str, Any]:
    """An event in its StreamResponse wrapper, e.g. ``{"statusUpdate": {...}}``."""
    if isinstance(event, Task):
        return {"task": encode_task(event)}
    if isinstance(event, Message):
        return {"message": encode_message(event)}
    if isinstance(event, TaskStatusUpdateEvent):
        return {"statusUpdate": encode_status_update(event)}
    return {"artifactUpdate": encode_artifact_update(event)}


def decode_stream_response(value: Any, pointer: str = "") -> StreamEvent:
    """The event inside a StreamResponse (exactly one of its four members)."""
    o = w.obj(value, pointer)
    present = [k for k in _STREAM_KEYS if k in o]
    if len(present) != 1:
        raise WireDecodeError(
            pointer,
            "a StreamResponse holds exactly one of task, message, statusUpdate, "
            "artifactUpdate; got " + (", ".join(present) or "none"),
        )
    key = present[0]
    here = w.child(pointer, key)
    if key == "task":
        return decode_task(o[key], here)
    if key == "message":
        return decode_message(o[key], here)
    if key == "statusUpdate":
        return decode_status_update(o[key], here)
    return decode_artifact_update(o[key], here)


def encode_send_result(result: SendResult) -> dict[str, Any]:
    """A SendMessage result: ``{"task": ...}`` or ``{"message": ...}``."""
    if isinstance(result, Task):
        return {"task": encode_task(result)}
    return {"message": encode_message(result)}


def decode_send_result(value: Any, pointer: str = "") -> SendResult:
    """A SendMessage result (a Task or a Message)."""
    event = decode_stream_response(value, pointer)
    if not isinstance(event, (Task, Message)):
        raise WireDecodeError(pointer, "a SendMessage result holds a task or a message")
    return event


# -- agent card -----------------------------------------------------------------------

#: An AgentCard as 1.0 JSON; extension entries keep ``required`` and ``params``.
encode_agent_card = encode_card_v1
#: An AgentCard from 1.0 JSON; ``raw`` keeps the object as received.
decode_agent_card = decode_card_v1
