"""The A2A wire: a version-neutral model and one codec per wire version.

:mod:`hitl_nb.a2a._model` holds the dataclasses; :mod:`hitl_nb.a2a._codec_v1` speaks
A2A 1.0 JSON and :mod:`hitl_nb.a2a._codec_v03` A2A 0.3 JSON. Pick a codec with
:func:`codec_for`.
"""

from __future__ import annotations

from types import ModuleType

from hitl_nb.a2a import _codec_v03, _codec_v1
from hitl_nb.a2a._model import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
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
from hitl_nb.a2a._transports import (
    BINDINGS,
    VERSIONS,
    A2AVersion,
    BindingChoice,
    BindingName,
    VersionChoice,
    binding_choice,
    major_minor,
    spoken_version,
    version_choice,
)

__all__ = [
    "BINDINGS",
    "VERSIONS",
    "A2AVersion",
    "AgentCapabilities",
    "AgentCard",
    "AgentExtension",
    "AgentInterface",
    "AgentSkill",
    "Artifact",
    "BindingChoice",
    "BindingName",
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
    "VersionChoice",
    "WireDecodeError",
    "binding_choice",
    "codec_for",
    "major_minor",
    "spoken_version",
    "version_choice",
]


def codec_for(version: str) -> ModuleType:
    """The codec module for a wire version: ``"1.0"`` -> _codec_v1, ``"0.3"`` -> _codec_v03.

    Patch versions are accepted (``"0.3.0"``); anything else raises ``ValueError``.
    """
    major_minor = ".".join(version.strip().split(".")[:2])
    if major_minor == "1.0":
        return _codec_v1
    if major_minor == "0.3":
        return _codec_v03
    raise ValueError(f"unsupported A2A version {version!r} (this codec set speaks 1.0 and 0.3)")
