"""The A2A wire: a version-neutral model and one codec per wire version.

The dataclasses (:class:`Task`, :class:`Message`, :class:`AgentCard`, ...) are the
model; server-sent events are read by :class:`SSEParser` (bounded) and written by
:func:`encode_event`; a :class:`Codec` turns the model into one wire version's JSON and back:
``codec_for("1.0")`` (``CODEC_V1``) or ``codec_for("0.3")`` (``CODEC_V03``); push
configurations (:class:`PushConfig`) have their own pair of functions. The gRPC binding
turns the 1.0 JSON into a2a-sdk's protobuf messages and back (:func:`to_proto`,
:func:`from_proto`; ``hitl-nb[grpc]``, see :func:`grpc_missing`). The
names of bindings and versions (:data:`BindingName`, :data:`A2AVersion`) are the one
vocabulary the whole package uses.
"""

from __future__ import annotations

from hitl_nb.a2a._card_cache import CARD_MAX_AGE, CardStamps, not_modified
from hitl_nb.a2a._codec import Codec
from hitl_nb.a2a._codec_v03 import CODEC as CODEC_V03
from hitl_nb.a2a._codec_v1 import CODEC as CODEC_V1
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
)
from hitl_nb.a2a._protojson import GRPC_SERVICE, from_proto, grpc_missing, to_proto
from hitl_nb.a2a._push import (
    PushConfig,
    decode_push_config,
    decode_send_push_config,
    encode_push_config,
)
from hitl_nb.a2a._sse import (
    DEFAULT_MAX_EVENT_SIZE,
    ServerSentEvent,
    SSEParser,
    aiter_events,
    encode_comment,
    encode_event,
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
from hitl_nb.errors import WireDecodeError

__all__ = [
    "BINDINGS",
    "CARD_MAX_AGE",
    "CODEC_V03",
    "CODEC_V1",
    "DEFAULT_MAX_EVENT_SIZE",
    "GRPC_SERVICE",
    "VERSIONS",
    "A2AVersion",
    "AgentCapabilities",
    "AgentCard",
    "AgentExtension",
    "AgentInterface",
    "AgentSkill",
    "Artifact",
    "BindingChoice",
    "CardStamps",
    "BindingName",
    "Codec",
    "Message",
    "Part",
    "PushConfig",
    "Role",
    "SSEParser",
    "SendResult",
    "ServerSentEvent",
    "StreamEvent",
    "Task",
    "TaskArtifactUpdateEvent",
    "TaskState",
    "TaskStatus",
    "TaskStatusUpdateEvent",
    "VersionChoice",
    "WireDecodeError",
    "aiter_events",
    "binding_choice",
    "codec_for",
    "decode_push_config",
    "decode_send_push_config",
    "encode_comment",
    "encode_event",
    "encode_push_config",
    "from_proto",
    "grpc_missing",
    "major_minor",
    "not_modified",
    "spoken_version",
    "to_proto",
    "version_choice",
]


def codec_for(version: str) -> Codec:
    """The codec of a wire version: ``"1.0"`` -> ``CODEC_V1``, ``"0.3"`` -> ``CODEC_V03``.

    Patch versions are accepted (``"0.3.0"``); anything else raises ``ValueError``.
    """
    spoken = spoken_version(version)
    if spoken is None:
        raise ValueError(f"unsupported A2A version {version!r} (this codec set speaks 1.0 and 0.3)")
    return CODEC_V1 if spoken == "1.0" else CODEC_V03
