"""What a :class:`~hitl_nb.client.HitlClient` stream hands out: neutral, typed events.

Every event carries ``wire_json``, the JSON it was decoded from (the stream response;
for JSON-RPC its ``result``), or None when it was rebuilt from a GetTask snapshot after
a lost stream. Every A2A stream event becomes one of :class:`TaskEvent`, :class:`MessageEvent`,
:class:`StatusEvent` or :class:`ArtifactEvent`, whatever the wire version. When a task
snapshot or a status update carries a hitl-prompt/v1 envelope on ``INPUT_REQUIRED``, a
:class:`PromptEvent` follows it; an envelope that fails the orchestrator-mode check
(§Prompt Envelope, including a response_schema over 64 KiB, S-2) gives a
:class:`MalformedPromptEvent` carrying the reason instead. Neither ever raises: a bad
envelope must not end the stream.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from hitl_nb.a2a import (
    Artifact,
    Message,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from hitl_nb.errors import HitlError, MalformedPrompt
from hitl_nb.spec import EXTENSION_URI, Finding, PromptEnvelope, find_envelope

__all__ = [
    "ArtifactEvent",
    "ClientEvent",
    "MalformedPromptEvent",
    "MessageEvent",
    "PromptEvent",
    "StatusEvent",
    "TaskEvent",
    "ends_stream",
    "neutral_events",
    "prompt_in_status",
]


@dataclass(frozen=True)
class TaskEvent:
    """A whole-task snapshot (the first event of a subscription, or a send's result)."""

    task: Task
    event_id: str | None = None
    wire_json: Any = field(default=None, repr=False, compare=False)

    @property
    def task_id(self) -> str:
        """The id of the task in the snapshot (``task.id``)."""
        return self.task.id

    @property
    def state(self) -> TaskState:
        """The task's state in this snapshot."""
        return self.task.status.state


@dataclass(frozen=True)
class MessageEvent:
    """A message from the agent that is not part of a task."""

    message: Message
    event_id: str | None = None
    wire_json: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class StatusEvent:
    """A task changed state; ``message`` is the status message, if any.

    ``metadata`` is the status update's own metadata (not the message's): where agents
    put signals such as the mock agent's deadline timeout (``hitlTimeout``, spec S-4).
    """

    task_id: str
    context_id: str
    status: TaskStatus
    event_id: str | None = None
    metadata: dict[str, Any] | None = None
    wire_json: Any = field(default=None, repr=False, compare=False)

    @property
    def state(self) -> TaskState:
        """The state the task moved to (``status.state``)."""
        return self.status.state

    @property
    def message(self) -> Message | None:
        """The message that came with the status (None when there is none)."""
        return self.status.message


@dataclass(frozen=True)
class ArtifactEvent:
    """A task produced an artifact (or a chunk of one, when ``append`` is true)."""

    task_id: str
    context_id: str
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False
    event_id: str | None = None
    wire_json: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class PromptEvent:
    """The agent asks a person for input: a checked hitl-prompt/v1 envelope.

    Answer it with ``client.respond(event.task_id, event.prompt_id, payload)``. The
    prompt text is data, never markup (S-1): render it escaped.
    """

    task_id: str
    context_id: str
    envelope: PromptEnvelope
    event_id: str | None = None
    wire_json: Any = field(default=None, repr=False, compare=False)

    @property
    def prompt_id(self) -> str:
        """The prompt's correlation id."""
        return self.envelope.prompt_id

    @property
    def prompt(self) -> str:
        """The question, as plain text."""
        return self.envelope.prompt

    @property
    def response_schema(self) -> dict[str, Any]:
        """The JSON Schema an answer must satisfy."""
        return self.envelope.response_schema

    def __str__(self) -> str:
        return f"[task {self.task_id}] {self.envelope}"


@dataclass(frozen=True)
class MalformedPromptEvent:
    """The agent attached an envelope that fails the check; it cannot be answered safely.

    ``reason`` says what was wrong, ``findings`` holds every finding (JSON Pointer,
    rule, spec section), ``raw`` the envelope as received.
    """

    task_id: str
    context_id: str
    reason: str
    findings: tuple[Finding, ...] = field(default=())
    raw: Any = field(default=None, repr=False)
    event_id: str | None = None
    wire_json: Any = field(default=None, repr=False, compare=False)

    @property
    def prompt_id(self) -> str | None:
        """The envelope's prompt_id when it has a string one (it may be the bad member)."""
        pid = self.raw.get("prompt_id") if isinstance(self.raw, dict) else None
        return pid if isinstance(pid, str) else None

    def __str__(self) -> str:
        return f"[task {self.task_id}] malformed prompt: {self.reason}"


#: Any event a client stream yields.
ClientEvent: TypeAlias = (
    TaskEvent | MessageEvent | StatusEvent | ArtifactEvent | PromptEvent | MalformedPromptEvent
)


def prompt_in_status(
    task_id: str, context_id: str, status: TaskStatus, event_id: str | None = None
) -> PromptEvent | MalformedPromptEvent | None:
    """The prompt carried by a status, checked in orchestrator mode; None when there is none.

    Only an ``INPUT_REQUIRED`` status can carry an open prompt (§Prompt Envelope); an
    envelope on any other state is not a prompt and is ignored.
    """
    if status.state is not TaskState.INPUT_REQUIRED or status.message is None:
        return None
    metadata = status.message.metadata
    if not isinstance(metadata, dict) or EXTENSION_URI not in metadata:
        return None
    raw = find_envelope(metadata)
    if not isinstance(raw, dict):  # from_json would read a string as JSON text
        reason = f"malformed prompt envelope: expected a JSON object, got {type(raw).__name__}"
        return MalformedPromptEvent(task_id, context_id, reason, (), raw, event_id)
    try:
        envelope = PromptEnvelope.from_json(raw, mode="orchestrator")
    except MalformedPrompt as exc:
        findings = tuple(f for f in exc.findings if isinstance(f, Finding))
        return MalformedPromptEvent(task_id, context_id, str(exc), findings, raw, event_id)
    except HitlError as exc:  # e.g. a schema the validator cannot compile
        return MalformedPromptEvent(task_id, context_id, str(exc), (), raw, event_id)
    return PromptEvent(task_id, context_id, envelope, event_id)


def neutral_events(
    event: StreamEvent, event_id: str | None = None, wire_json: Any = None
) -> list[ClientEvent]:
    """The neutral events for one decoded A2A stream event (a prompt follows its status).

    ``wire_json`` is the JSON the event was decoded from (for JSON-RPC, the response's
    ``result``); every event made from it carries it as ``wire_json``.
    """
    out: list[ClientEvent] = []
    prompt: PromptEvent | MalformedPromptEvent | None = None
    if isinstance(event, Task):
        out.append(TaskEvent(event, event_id, wire_json))
        prompt = prompt_in_status(event.id, event.context_id, event.status, event_id)
    elif isinstance(event, TaskStatusUpdateEvent):
        out.append(
            StatusEvent(
                event.task_id, event.context_id, event.status, event_id, event.metadata, wire_json
            )
        )
        prompt = prompt_in_status(event.task_id, event.context_id, event.status, event_id)
    elif isinstance(event, TaskArtifactUpdateEvent):
        out.append(
            ArtifactEvent(
                event.task_id,
                event.context_id,
                event.artifact,
                event.append,
                event.last_chunk,
                event_id,
                wire_json,
            )
        )
    else:
        out.append(MessageEvent(event, event_id, wire_json))
    if prompt is not None:
        out.append(dataclasses.replace(prompt, wire_json=wire_json))
    return out


def ends_stream(event: StreamEvent) -> bool:
    """True when a stream stops after this event (A2A §11.7: a message, or a terminal or
    interrupted state; A2A 0.3 also says so with ``final``)."""
    if isinstance(event, Message):
        return True
    if isinstance(event, Task):
        return event.status.state.is_terminal or event.status.state.is_interrupted
    if isinstance(event, TaskStatusUpdateEvent):
        state = event.status.state
        return bool(event.final_hint) or state.is_terminal or state.is_interrupted
    return False
