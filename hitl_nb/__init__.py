"""hitl-nb: answer A2A ``hitl-prompt/v1`` prompts inline in Jupyter.

The names here are the public API; everything else is private and may change.
"""

# First: jsonschema is imported with its slow format libraries deferred (see _deferred).
from . import _deferred  # noqa: F401  # isort: skip

from .client import (
    AnswerOutcomeUnknown,
    AnswerReceipt,
    ArtifactEvent,
    ExtensionNotDeclared,
    HitlClient,
    HttpLimits,
    MalformedPromptEvent,
    MessageEvent,
    NoUsableInterface,
    PromptEvent,
    Reconnect,
    StatusEvent,
    SyncHitlClient,
    TaskEvent,
)
from .errors import (
    A2AError,
    AgentTimeout,
    AgentUnreachable,
    AnswerNotAccepted,
    BadJSON,
    ContentTypeNotSupported,
    ExtendedAgentCardNotConfigured,
    ExtensionSupportRequired,
    HitlError,
    InternalError,
    InvalidAgentResponse,
    InvalidParams,
    InvalidRequest,
    JSONParseError,
    MalformedPrompt,
    MalformedResponse,
    MethodNotFound,
    PromptConflict,
    ProtocolViolation,
    PushNotificationNotSupported,
    ResponseInvalid,
    SchemaRejected,
    TaskNotCancelable,
    TaskNotFound,
    TransportError,
    UnsupportedOperation,
    VersionNotSupported,
)
from .forms import Form, FormClosed, FormInvalid, FormValueError
from .notebook import Conversation, Inbox, PromptCard
from .policy import ResponderGate
from .spec import (
    EXTENSION_URI,
    RESPONSE_KEY,
    AnyResponder,
    ConsensusResponder,
    Finding,
    PromptEnvelope,
    ResponseEnvelope,
    SpecificResponder,
    UnknownResponder,
    agent_card_extension,
    check_prompt,
    check_response,
    parse_responders,
)
from .validation import (
    FORMAT_CHECKER,
    CompiledSchema,
    ValidationIssue,
    compile_schema,
    validate_payload,
)

__version__ = "0.1.0"

__all__ = [
    "EXTENSION_URI",
    "FORMAT_CHECKER",
    "RESPONSE_KEY",
    "A2AError",
    "AgentTimeout",
    "AgentUnreachable",
    "AnswerNotAccepted",
    "AnswerOutcomeUnknown",
    "AnswerReceipt",
    "AnyResponder",
    "ArtifactEvent",
    "BadJSON",
    "CompiledSchema",
    "ConsensusResponder",
    "ContentTypeNotSupported",
    "Conversation",
    "ExtendedAgentCardNotConfigured",
    "ExtensionNotDeclared",
    "ExtensionSupportRequired",
    "Finding",
    "Form",
    "FormClosed",
    "FormInvalid",
    "FormValueError",
    "HitlClient",
    "HitlError",
    "HttpLimits",
    "Inbox",
    "InternalError",
    "InvalidAgentResponse",
    "InvalidParams",
    "InvalidRequest",
    "JSONParseError",
    "MalformedPrompt",
    "MalformedPromptEvent",
    "MalformedResponse",
    "MessageEvent",
    "MethodNotFound",
    "MockAgent",
    "NoUsableInterface",
    "PromptCard",
    "PromptConflict",
    "PromptEnvelope",
    "PromptEvent",
    "ProtocolViolation",
    "PushNotificationNotSupported",
    "Reconnect",
    "ResponderGate",
    "ResponseEnvelope",
    "ResponseInvalid",
    "Scenario",
    "SchemaRejected",
    "SpecificResponder",
    "StatusEvent",
    "Step",
    "SyncHitlClient",
    "TaskEvent",
    "TaskNotCancelable",
    "TaskNotFound",
    "TransportError",
    "UnknownResponder",
    "UnsupportedOperation",
    "ValidationIssue",
    "VersionNotSupported",
    "__version__",
    "agent_card_extension",
    "check_prompt",
    "check_response",
    "compile_schema",
    "parse_responders",
    "validate_payload",
]

#: Public names loaded on first use: the mock agent brings tornado (a web server) that
#: a notebook answering someone else's agent never needs.
_LAZY = {"MockAgent": "mock_agent", "Scenario": "mock_agent", "Step": "mock_agent"}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hitl_nb' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
