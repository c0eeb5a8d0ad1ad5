"""The A2A objects hitl-nb works with, independent of the wire version.

Plain dataclasses: the codecs (:mod:`hitl_nb.a2a._codec_v1` for A2A 1.0,
:mod:`hitl_nb.a2a._codec_v03` for A2A 0.3) turn them into JSON and back, so nothing
above the codecs needs to know which version is on the wire.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, TypeAlias

__all__ = [
    "AgentCapabilities",
    "AgentCard",
    "AgentExtension",
    "AgentInterface",
    "AgentSkill",
    "Artifact",
    "Message",
    "Part",
    "Role",
    "SendResult",
    "StreamEvent",
    "Task",
    "TaskArtifactUpdateEvent",
    "TaskState",
    "TaskStatus",
    "TaskStatusUpdateEvent",
]


class _Named(str, enum.Enum):
    """A string enum that reads ``TaskState.COMPLETED`` in ``str()`` and f-strings on
    every Python: before 3.11 a format of a ``str`` enum gave its value instead
    (``completed``), so what a person saw depended on the interpreter."""

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


class TaskState(_Named):
    """The lifecycle state of a task (A2A §4.1.3), named neutrally."""

    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"
    REJECTED = "rejected"
    AUTH_REQUIRED = "auth_required"
    UNKNOWN = "unknown"

    @property
    def is_terminal(self) -> bool:
        """True for states a task never leaves (completed, failed, canceled, rejected)."""
        return self in _TERMINAL

    @property
    def is_interrupted(self) -> bool:
        """True when the task waits for the client (input or auth required)."""
        return self in (TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED)


_TERMINAL = frozenset(
    {TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED}
)


class Role(_Named):
    """Who sent a message."""

    USER = "user"
    AGENT = "agent"
    UNSPECIFIED = "unspecified"


@dataclass
class Part:
    """One piece of message or artifact content: exactly one of text, data, raw, url.

    ``data`` is any JSON value (A2A 0.3 only carries objects), ``raw`` is bytes
    (base64 on the wire), ``url`` a reference to a file. A data part whose value is
    JSON ``null`` is ``Part(data=None, has_data=True)``.
    """

    text: str | None = None
    data: Any = None
    raw: bytes | None = None
    url: str | None = None
    metadata: dict[str, Any] | None = None
    filename: str | None = None
    media_type: str | None = None
    has_data: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        if self.data is not None:
            self.has_data = True
        present = [
            name
            for name, here in (
                ("text", self.text is not None),
                ("data", self.has_data),
                ("raw", self.raw is not None),
                ("url", self.url is not None),
            )
            if here
        ]
        if len(present) != 1:
            raise ValueError(
                "a Part holds exactly one of text, data, raw, url; got "
                + (", ".join(present) or "none")
            )

    @property
    def kind(self) -> str:
        """Which content the part holds: ``"text"``, ``"data"``, ``"raw"`` or ``"url"``."""
        if self.text is not None:
            return "text"
        if self.has_data:
            return "data"
        if self.raw is not None:
            return "raw"
        return "url"


@dataclass
class Message:
    """One message between client and agent (A2A §4.1.4)."""

    message_id: str
    role: Role
    parts: list[Part]
    task_id: str | None = None
    context_id: str | None = None
    metadata: dict[str, Any] | None = None
    extensions: list[str] = field(default_factory=list)
    reference_task_ids: list[str] = field(default_factory=list)

    def text(self) -> str:
        """The text parts joined by newlines (empty when there are none)."""
        return "\n".join(p.text for p in self.parts if p.text is not None)


@dataclass
class TaskStatus:
    """A task's state, the message that came with it, and when (ISO 8601 UTC)."""

    state: TaskState
    message: Message | None = None
    timestamp: str | None = None


@dataclass
class Artifact:
    """An output of a task."""

    artifact_id: str
    parts: list[Part]
    name: str | None = None
    description: str | None = None
    metadata: dict[str, Any] | None = None
    extensions: list[str] = field(default_factory=list)


@dataclass
class Task:
    """A unit of work on the agent (A2A §4.1.1)."""

    id: str
    context_id: str
    status: TaskStatus
    artifacts: list[Artifact] = field(default_factory=list)
    history: list[Message] = field(default_factory=list)
    metadata: dict[str, Any] | None = None


@dataclass
class TaskStatusUpdateEvent:
    """A streamed change of a task's status.

    ``final_hint`` is A2A 0.3's ``final`` flag (None when decoded from 1.0, which
    dropped it; the 0.3 encoder derives it from the state when it is None).
    """

    task_id: str
    context_id: str
    status: TaskStatus
    metadata: dict[str, Any] | None = None
    final_hint: bool | None = None


@dataclass
class TaskArtifactUpdateEvent:
    """A streamed artifact (or a chunk of one)."""

    task_id: str
    context_id: str
    artifact: Artifact
    append: bool = False
    last_chunk: bool = False
    metadata: dict[str, Any] | None = None


@dataclass
class AgentInterface:
    """One way to reach the agent: URL, binding (JSONRPC, HTTP+JSON, GRPC), version."""

    url: str
    protocol_binding: str
    protocol_version: str = "1.0"
    tenant: str | None = None


@dataclass
class AgentExtension:
    """An extension the agent declares in its card."""

    uri: str
    description: str | None = None
    required: bool = False
    params: dict[str, Any] | None = None


@dataclass
class AgentCapabilities:
    """What the agent can do beyond plain requests."""

    streaming: bool = False
    push_notifications: bool = False
    extensions: list[AgentExtension] = field(default_factory=list)
    extended_agent_card: bool = False


@dataclass
class AgentSkill:
    """One thing the agent offers to do."""

    id: str
    name: str
    description: str
    tags: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    input_modes: list[str] = field(default_factory=list)
    output_modes: list[str] = field(default_factory=list)


@dataclass
class AgentCard:
    """The agent's self-description (A2A §8); ``raw`` keeps the JSON as received."""

    name: str
    description: str
    version: str
    supported_interfaces: list[AgentInterface] = field(default_factory=list)
    capabilities: AgentCapabilities = field(default_factory=AgentCapabilities)
    skills: list[AgentSkill] = field(default_factory=list)
    default_input_modes: list[str] = field(default_factory=lambda: ["text/plain"])
    default_output_modes: list[str] = field(default_factory=lambda: ["text/plain"])
    documentation_url: str | None = None
    provider: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def extension(self, uri: str) -> AgentExtension | None:
        """The declared extension with this URI, or None."""
        for ext in self.capabilities.extensions:
            if ext.uri == uri:
                return ext
        return None

    def interface(self, binding: str) -> AgentInterface | None:
        """The first interface with this protocol binding (case-insensitive), or None."""
        for iface in self.supported_interfaces:
            if iface.protocol_binding.upper() == binding.upper():
                return iface
        return None


#: What a send answers with.
SendResult: TypeAlias = Task | Message
#: One event of a stream.
StreamEvent: TypeAlias = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
