"""The JSON codec both A2A wire versions share, told what differs by a :class:`Dialect`.

Messages, statuses, artifacts, tasks and the two update events have the same camelCase
members in A2A 1.0 and 0.3. What differs is data or a small hook: the spelling of task
states and roles, 0.3's ``kind`` member, the part shapes, the status update's ``final``
flag (0.3 only), and how a stream event is wrapped (1.0's StreamResponse member vs
0.3's bare object told apart by ``kind``). :mod:`hitl_nb.a2a._codec_v1` and
:mod:`hitl_nb.a2a._codec_v03` each build one :class:`Codec`, ``CODEC``; callers get it
from :func:`hitl_nb.a2a.codec_for` (or as ``CODEC_V1`` / ``CODEC_V03``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hitl_nb.a2a import _wire as w
from hitl_nb.a2a._model import (
    AgentCard,
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
)
from hitl_nb.a2a._transports import A2AVersion
from hitl_nb.errors import WireDecodeError

__all__ = [
    "ARTIFACT_UPDATE",
    "MESSAGE",
    "STATUS_UPDATE",
    "TASK",
    "Codec",
    "Dialect",
]

# Neutral names of the four stream events, passed to a dialect's wrap/unwrap hooks.
TASK = "task"
MESSAGE = "message"
STATUS_UPDATE = "status-update"
ARTIFACT_UPDATE = "artifact-update"


@dataclass(frozen=True)
class Dialect:
    """What one A2A wire version spells its own way; everything else is shared.

    ``states`` and ``roles`` map the neutral enums to wire words (a role missing from
    ``roles`` cannot be sent). ``kinds`` maps the neutral names of objects that carry a
    ``kind`` member (``"message"``, ``"task"``, ``"status-update"``,
    ``"artifact-update"``) to the spellings accepted, the first one written; empty
    when the version has no ``kind``. ``final_flag`` says a status update carries
    ``final``. ``wrap(name, body)`` puts an encoded stream event in its wrapper;
    ``unwrap(obj, pointer)`` finds the event in a checked object and returns
    ``(name, value, pointer of value)``. ``send_result_problem`` is the decode error
    for a send result that is neither a task nor a message. ``encode_card`` and
    ``decode_card`` are the version's agent card shape.
    """

    version: A2AVersion
    states: Mapping[TaskState, str]
    roles: Mapping[Role, str]
    encode_part: Callable[[Part], dict[str, Any]]
    decode_part: Callable[[Any, str], Part]
    encode_card: Callable[[AgentCard], dict[str, Any]]
    decode_card: Callable[[Any, str], AgentCard]
    wrap: Callable[[str, dict[str, Any]], dict[str, Any]]
    unwrap: Callable[[dict[str, Any], str], tuple[str, Any, str]]
    send_result_problem: str
    kinds: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    final_flag: bool = False


class Codec:
    """Encode the neutral model to one wire version's JSON and decode it back.

    ``encode_*`` build plain JSON-ready dicts; ``decode_*`` read untrusted JSON and
    raise :class:`~hitl_nb.a2a.WireDecodeError` naming the member that was wrong.
    Unknown members are ignored (forward compatibility). One instance per wire version:
    ``codec_for("1.0")`` and ``codec_for("0.3")``.
    """

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        #: The wire version spoken (the ``A2A-Version`` header value).
        self.version: A2AVersion = dialect.version
        #: Wire word -> neutral state, the inverse of ``dialect.states``.
        self.states_from_wire: dict[str, TaskState] = {v: k for k, v in dialect.states.items()}
        #: Wire word -> neutral role, the inverse of ``dialect.roles``.
        self.roles_from_wire: dict[str, Role] = {v: k for k, v in dialect.roles.items()}
        self._decoders: dict[str, Callable[[Any, str], StreamEvent]] = {
            TASK: self.decode_task,
            MESSAGE: self.decode_message,
            STATUS_UPDATE: self.decode_status_update,
            ARTIFACT_UPDATE: self.decode_artifact_update,
        }

    def __repr__(self) -> str:
        return f"<Codec A2A {self.version}>"

    # -- the dialect's enum tables and kind ------------------------------------------------

    def state_to_wire(self, state: TaskState) -> str:
        """A neutral task state as this wire version spells it."""
        return self.dialect.states[state]

    def state_from_wire(self, value: Any, pointer: str = "") -> TaskState:
        """A wire task state as the neutral :class:`~hitl_nb.a2a._model.TaskState`."""
        return w.enum_member(value, pointer, self.states_from_wire, "task state")

    def _role_to_wire(self, role: Role) -> str:
        try:
            return self.dialect.roles[role]
        except KeyError:
            raise ValueError(
                f"A2A {self.dialect.version} has no {role.value} role: use Role.USER or Role.AGENT"
            ) from None

    def _kind(self, name: str) -> dict[str, Any]:
        """``{"kind": ...}`` to open an object with, or ``{}`` when the version has none."""
        spellings = self.dialect.kinds.get(name)
        return {"kind": spellings[0]} if spellings else {}

    def _check_kind(self, o: dict[str, Any], pointer: str, name: str) -> None:
        """An absent ``kind`` is fine; a present one must be a spelling of ``name``."""
        expected = self.dialect.kinds.get(name)
        kind = o.get("kind")
        if expected and kind is not None and kind not in expected:
            raise WireDecodeError(
                w.child(pointer, "kind"), f"expected kind {expected[0]!r}, got {kind!r}"
            )

    # -- parts and cards --------------------------------------------------------------------

    def encode_part(self, part: Part) -> dict[str, Any]:
        """A Part as JSON (``ValueError`` for a part the version cannot carry)."""
        return self.dialect.encode_part(part)

    def decode_part(self, value: Any, pointer: str = "") -> Part:
        """A Part from JSON."""
        return self.dialect.decode_part(value, pointer)

    def encode_agent_card(self, card: AgentCard) -> dict[str, Any]:
        """An AgentCard in the version's shape (1.0: ``supportedInterfaces``; 0.3: the
        first interface as ``url`` + ``preferredTransport``)."""
        return self.dialect.encode_card(card)

    def decode_agent_card(self, value: Any, pointer: str = "") -> AgentCard:
        """An AgentCard from the version's shape; ``raw`` keeps the object as received."""
        return self.dialect.decode_card(value, pointer)

    # -- messages -------------------------------------------------------------------------

    def encode_message(self, message: Message) -> dict[str, Any]:
        """A Message as JSON (``ValueError`` for a role the version cannot send)."""
        out: dict[str, Any] = {
            **self._kind(MESSAGE),
            "messageId": message.message_id,
            "role": self._role_to_wire(message.role),
            "parts": [self.dialect.encode_part(p) for p in message.parts],
        }
        w.put(out, "taskId", message.task_id)
        w.put(out, "contextId", message.context_id)
        w.put(out, "metadata", message.metadata)
        w.put(out, "extensions", list(message.extensions))
        w.put(out, "referenceTaskIds", list(message.reference_task_ids))
        return out

    def decode_message(self, value: Any, pointer: str = "") -> Message:
        """A Message from JSON (``messageId``, ``role`` and ``parts`` required)."""
        o = w.obj(value, pointer)
        self._check_kind(o, pointer, MESSAGE)
        return Message(
            message_id=w.req_str(o, "messageId", pointer),
            role=w.enum_member(
                w.req(o, "role", pointer), w.child(pointer, "role"), self.roles_from_wire, "role"
            ),
            parts=w.req_list(o, "parts", pointer, self.dialect.decode_part),
            task_id=w.opt_str(o, "taskId", pointer),
            context_id=w.opt_str(o, "contextId", pointer),
            metadata=w.opt_obj(o, "metadata", pointer),
            extensions=w.opt_list(o, "extensions", pointer, w.string),
            reference_task_ids=w.opt_list(o, "referenceTaskIds", pointer, w.string),
        )

    # -- tasks -----------------------------------------------------------------------------

    def encode_status(self, status: TaskStatus) -> dict[str, Any]:
        """A TaskStatus as JSON."""
        out: dict[str, Any] = {"state": self.state_to_wire(status.state)}
        if status.message is not None:
            out["message"] = self.encode_message(status.message)
        w.put(out, "timestamp", status.timestamp)
        return out

    def decode_status(self, value: Any, pointer: str = "") -> TaskStatus:
        """A TaskStatus from JSON (``state`` required)."""
        o = w.obj(value, pointer)
        message = o.get("message")
        return TaskStatus(
            state=self.state_from_wire(w.req(o, "state", pointer), w.child(pointer, "state")),
            message=(
                None
                if message is None
                else self.decode_message(message, w.child(pointer, "message"))
            ),
            timestamp=w.opt_str(o, "timestamp", pointer),
        )

    def encode_artifact(self, artifact: Artifact) -> dict[str, Any]:
        """An Artifact as JSON."""
        out: dict[str, Any] = {
            "artifactId": artifact.artifact_id,
            "parts": [self.dialect.encode_part(p) for p in artifact.parts],
        }
        w.put(out, "name", artifact.name)
        w.put(out, "description", artifact.description)
        w.put(out, "metadata", artifact.metadata)
        w.put(out, "extensions", list(artifact.extensions))
        return out

    def decode_artifact(self, value: Any, pointer: str = "") -> Artifact:
        """An Artifact from JSON (``artifactId`` and ``parts`` required)."""
        o = w.obj(value, pointer)
        return Artifact(
            artifact_id=w.req_str(o, "artifactId", pointer),
            parts=w.req_list(o, "parts", pointer, self.dialect.decode_part),
            name=w.opt_str(o, "name", pointer),
            description=w.opt_str(o, "description", pointer),
            metadata=w.opt_obj(o, "metadata", pointer),
            extensions=w.opt_list(o, "extensions", pointer, w.string),
        )

    def encode_task(self, task: Task) -> dict[str, Any]:
        """A Task as JSON."""
        out: dict[str, Any] = {
            **self._kind(TASK),
            "id": task.id,
            "contextId": task.context_id,
            "status": self.encode_status(task.status),
        }
        w.put(out, "artifacts", [self.encode_artifact(a) for a in task.artifacts])
        w.put(out, "history", [self.encode_message(m) for m in task.history])
        w.put(out, "metadata", task.metadata)
        return out

    def decode_task(self, value: Any, pointer: str = "") -> Task:
        """A Task from JSON (``id`` and ``status`` required)."""
        o = w.obj(value, pointer)
        self._check_kind(o, pointer, TASK)
        return Task(
            id=w.req_str(o, "id", pointer),
            context_id=w.opt_str(o, "contextId", pointer) or "",
            status=self.decode_status(w.req(o, "status", pointer), w.child(pointer, "status")),
            artifacts=w.opt_list(o, "artifacts", pointer, self.decode_artifact),
            history=w.opt_list(o, "history", pointer, self.decode_message),
            metadata=w.opt_obj(o, "metadata", pointer),
        )

    def encode_status_update(self, event: TaskStatusUpdateEvent) -> dict[str, Any]:
        """A status update as JSON.

        Where the version carries ``final``, it is ``final_hint``, or when that is None
        derived from the state (terminal or interrupted ends the stream).
        """
        out: dict[str, Any] = {
            **self._kind(STATUS_UPDATE),
            "taskId": event.task_id,
            "contextId": event.context_id,
            "status": self.encode_status(event.status),
        }
        if self.dialect.final_flag:
            final = event.final_hint
            if final is None:
                final = event.status.state.is_terminal or event.status.state.is_interrupted
            out["final"] = final
        w.put(out, "metadata", event.metadata)
        return out

    def decode_status_update(self, value: Any, pointer: str = "") -> TaskStatusUpdateEvent:
        """A status update from JSON (``final``, where the version has it, as ``final_hint``)."""
        o = w.obj(value, pointer)
        self._check_kind(o, pointer, STATUS_UPDATE)
        return TaskStatusUpdateEvent(
            task_id=w.req_str(o, "taskId", pointer),
            context_id=w.opt_str(o, "contextId", pointer) or "",
            status=self.decode_status(w.req(o, "status", pointer), w.child(pointer, "status")),
            metadata=w.opt_obj(o, "metadata", pointer),
            final_hint=(
                w.opt_bool(o, "final", pointer)
                if self.dialect.final_flag and "final" in o
                else None
            ),
        )

    def encode_artifact_update(self, event: TaskArtifactUpdateEvent) -> dict[str, Any]:
        """An artifact update as JSON (``append`` and ``lastChunk`` only when true)."""
        out: dict[str, Any] = {
            **self._kind(ARTIFACT_UPDATE),
            "taskId": event.task_id,
            "contextId": event.context_id,
            "artifact": self.encode_artifact(event.artifact),
        }
        if event.append:
            out["append"] = True
        if event.last_chunk:
            out["lastChunk"] = True
        w.put(out, "metadata", event.metadata)
        return out

    def decode_artifact_update(self, value: Any, pointer: str = "") -> TaskArtifactUpdateEvent:
        """An artifact update from JSON (``taskId`` and ``artifact`` required)."""
        o = w.obj(value, pointer)
        self._check_kind(o, pointer, ARTIFACT_UPDATE)
        return TaskArtifactUpdateEvent(
            task_id=w.req_str(o, "taskId", pointer),
            context_id=w.opt_str(o, "contextId", pointer) or "",
            artifact=self.decode_artifact(
                w.req(o, "artifact", pointer), w.child(pointer, "artifact")
            ),
            append=w.opt_bool(o, "append", pointer),
            last_chunk=w.opt_bool(o, "lastChunk", pointer),
            metadata=w.opt_obj(o, "metadata", pointer),
        )

    # -- stream events and send results ----------------------------------------------------

    def encode_stream_response(self, event: StreamEvent) -> dict[str, Any]:
        """A stream event as the version sends it.

        1.0 puts it in its StreamResponse member; 0.3 sends the bare object with its ``kind``.
        """
        if isinstance(event, Task):
            return self.dialect.wrap(TASK, self.encode_task(event))
        if isinstance(event, Message):
            return self.dialect.wrap(MESSAGE, self.encode_message(event))
        if isinstance(event, TaskStatusUpdateEvent):
            return self.dialect.wrap(STATUS_UPDATE, self.encode_status_update(event))
        return self.dialect.wrap(ARTIFACT_UPDATE, self.encode_artifact_update(event))

    def decode_stream_response(self, value: Any, pointer: str = "") -> StreamEvent:
        """A stream event, found the way the version wraps it."""
        name, inner, here = self.dialect.unwrap(w.obj(value, pointer), pointer)
        return self._decoders[name](inner, here)

    def encode_send_result(self, result: SendResult) -> dict[str, Any]:
        """A send result (a Task or a Message), wrapped like a stream event."""
        return self.encode_stream_response(result)

    def decode_send_result(self, value: Any, pointer: str = "") -> SendResult:
        """A send result: a Task or a Message, anything else is an error."""
        event = self.decode_stream_response(value, pointer)
        if not isinstance(event, (Task, Message)):
            raise WireDecodeError(pointer, self.dialect.send_result_problem)
        return event
