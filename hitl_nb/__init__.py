"""hitl-nb: answer A2A ``hitl-prompt/v1`` prompts inline in Jupyter.

The names here are the public API; everything else is private and may change.

Each name loads its module on first use (PEP 562), so ``import hitl_nb`` costs almost
nothing and ``hitl_nb.Conversation`` costs only the notebook layer: not jsonschema
(loaded by the first schema compiled), not tornado (loaded by ``MockAgent``).
"""

import typing

# First: the slow format libraries of any later ``import jsonschema`` wait (see _deferred).
from . import _deferred  # noqa: F401  # isort: skip
from . import _display, _lazy

if typing.TYPE_CHECKING:  # what type checkers and IDEs read; at run time, __getattr__ below
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
        ClickNeeded,
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
        WaitTimedOut,
    )
    from .forms import Form, FormClosed, FormInvalid, FormValueError
    from .mock_agent import MockAgent, Scenario, Step
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
    "ClickNeeded",
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
    "WaitTimedOut",
    "__version__",
    "agent_card_extension",
    "check_prompt",
    "check_response",
    "compile_schema",
    "parse_responders",
    "validate_payload",
]

#: Public name -> the submodule that defines it, imported on first use.
_LAZY = {
    # client
    "AnswerOutcomeUnknown": "client",
    "AnswerReceipt": "client",
    "ArtifactEvent": "client",
    "ExtensionNotDeclared": "client",
    "HitlClient": "client",
    "HttpLimits": "client",
    "MalformedPromptEvent": "client",
    "MessageEvent": "client",
    "NoUsableInterface": "client",
    "PromptEvent": "client",
    "Reconnect": "client",
    "StatusEvent": "client",
    "SyncHitlClient": "client",
    "TaskEvent": "client",
    # errors
    "A2AError": "errors",
    "AgentTimeout": "errors",
    "AgentUnreachable": "errors",
    "AnswerNotAccepted": "errors",
    "BadJSON": "errors",
    "ClickNeeded": "errors",
    "ContentTypeNotSupported": "errors",
    "ExtendedAgentCardNotConfigured": "errors",
    "ExtensionSupportRequired": "errors",
    "HitlError": "errors",
    "InternalError": "errors",
    "InvalidAgentResponse": "errors",
    "InvalidParams": "errors",
    "InvalidRequest": "errors",
    "JSONParseError": "errors",
    "MalformedPrompt": "errors",
    "MalformedResponse": "errors",
    "MethodNotFound": "errors",
    "PromptConflict": "errors",
    "ProtocolViolation": "errors",
    "PushNotificationNotSupported": "errors",
    "ResponseInvalid": "errors",
    "SchemaRejected": "errors",
    "TaskNotCancelable": "errors",
    "TaskNotFound": "errors",
    "TransportError": "errors",
    "UnsupportedOperation": "errors",
    "VersionNotSupported": "errors",
    "WaitTimedOut": "errors",
    # forms
    "Form": "forms",
    "FormClosed": "forms",
    "FormInvalid": "forms",
    "FormValueError": "forms",
    # notebook
    "Conversation": "notebook",
    "Inbox": "notebook",
    "PromptCard": "notebook",
    # policy
    "ResponderGate": "policy",
    # spec
    "AnyResponder": "spec",
    "ConsensusResponder": "spec",
    "EXTENSION_URI": "spec",
    "Finding": "spec",
    "PromptEnvelope": "spec",
    "RESPONSE_KEY": "spec",
    "ResponseEnvelope": "spec",
    "SpecificResponder": "spec",
    "UnknownResponder": "spec",
    "agent_card_extension": "spec",
    "check_prompt": "spec",
    "check_response": "spec",
    "parse_responders": "spec",
    # validation
    "CompiledSchema": "validation",
    "FORMAT_CHECKER": "validation",
    "ValidationIssue": "validation",
    "compile_schema": "validation",
    "validate_payload": "validation",
    # mock_agent
    "MockAgent": "mock_agent",
    "Scenario": "mock_agent",
    "Step": "mock_agent",
}


#: Submodules reachable as attributes after a bare ``import hitl_nb`` (as they were when
#: the package imported them all).
_SUBMODULES = (
    "a2a cli client conformance errors forms mock_agent notebook policy responders server "
    "spec testing tutorials validation".split()
)

__getattr__, __dir__ = _lazy.attach(__name__, _LAZY, _SUBMODULES)


def _draw_trace(trace: typing.Any) -> dict[str, typing.Any]:
    # A client's wire trace (hitl_nb.client, a lower layer) is drawn by the notebook
    # layer's TraceView. The root wires the two together, so the notebook layer loads
    # only when a trace is first displayed, and ``from hitl_nb.client import ...`` alone
    # still shows the timeline.
    from .notebook import TraceView

    return dict(TraceView(trace).widget._repr_mimebundle_() or {})


_display.register_renderer("trace", _draw_trace)
