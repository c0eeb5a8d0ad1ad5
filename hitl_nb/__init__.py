"""hitl-nb: answer A2A ``hitl-prompt/v1`` prompts inline in Jupyter.

The names here are the public API; everything else is private and may change. They are
listed once, in the table below (the ``if typing.TYPE_CHECKING:`` block, one row per
name and the module it comes from): type checkers and editors read the rows as imports,
and at run time ``__all__`` and the names' loading both come from the same rows
(:mod:`hitl_nb._lazy`). A new public name is one row there.

Each name loads its module on first use (PEP 562), so ``import hitl_nb`` costs almost
nothing and ``hitl_nb.Conversation`` costs only the notebook layer: not jsonschema
(loaded by the first schema compiled), not tornado (loaded by ``MockAgent``). What the
agent's side or a test needs below these (``ResponderGate``, ``FORMAT_CHECKER``, the
checks' ``Finding``) is in its subpackage or module (:mod:`hitl_nb.policy`,
:mod:`hitl_nb.validation`, :mod:`hitl_nb.spec`).
"""

import typing

# First: the slow format libraries of any later ``import jsonschema`` wait (see _deferred).
from . import _deferred  # noqa: F401  # isort: skip
from . import _display, _lazy

if typing.TYPE_CHECKING:  # the public table (see the module docstring)
    from .client import AnswerOutcomeUnknown as AnswerOutcomeUnknown
    from .client import AnswerReceipt as AnswerReceipt
    from .client import ArtifactEvent as ArtifactEvent
    from .client import ExtensionNotDeclared as ExtensionNotDeclared
    from .client import HitlClient as HitlClient
    from .client import HttpLimits as HttpLimits
    from .client import MalformedPromptEvent as MalformedPromptEvent
    from .client import MessageEvent as MessageEvent
    from .client import NoUsableInterface as NoUsableInterface
    from .client import PromptEvent as PromptEvent
    from .client import Reconnect as Reconnect
    from .client import StatusEvent as StatusEvent
    from .client import SyncHitlClient as SyncHitlClient
    from .client import TaskEvent as TaskEvent
    from .errors import A2AError as A2AError
    from .errors import AgentTimeout as AgentTimeout
    from .errors import AgentUnreachable as AgentUnreachable
    from .errors import AnswerNotAccepted as AnswerNotAccepted
    from .errors import BadJSON as BadJSON
    from .errors import ClickNeeded as ClickNeeded
    from .errors import ContentTypeNotSupported as ContentTypeNotSupported
    from .errors import ExtendedAgentCardNotConfigured as ExtendedAgentCardNotConfigured
    from .errors import ExtensionSupportRequired as ExtensionSupportRequired
    from .errors import GatewayRefused as GatewayRefused
    from .errors import GatewayUnavailable as GatewayUnavailable
    from .errors import HitlError as HitlError
    from .errors import InternalError as InternalError
    from .errors import InvalidAgentResponse as InvalidAgentResponse
    from .errors import InvalidParams as InvalidParams
    from .errors import InvalidRequest as InvalidRequest
    from .errors import JSONParseError as JSONParseError
    from .errors import MalformedPrompt as MalformedPrompt
    from .errors import MalformedResponse as MalformedResponse
    from .errors import MethodNotFound as MethodNotFound
    from .errors import PromptConflict as PromptConflict
    from .errors import ProtocolViolation as ProtocolViolation
    from .errors import PushNotificationNotSupported as PushNotificationNotSupported
    from .errors import ResponseInvalid as ResponseInvalid
    from .errors import SchemaRejected as SchemaRejected
    from .errors import TaskNotCancelable as TaskNotCancelable
    from .errors import TaskNotFound as TaskNotFound
    from .errors import TransportError as TransportError
    from .errors import UnsupportedOperation as UnsupportedOperation
    from .errors import VersionNotSupported as VersionNotSupported
    from .errors import WaitTimedOut as WaitTimedOut
    from .forms import Form as Form
    from .forms import FormClosed as FormClosed
    from .forms import FormInvalid as FormInvalid
    from .forms import FormValueError as FormValueError
    from .mock_agent import MockAgent as MockAgent
    from .mock_agent import Scenario as Scenario
    from .mock_agent import Step as Step
    from .notebook import Conversation as Conversation
    from .notebook import Inbox as Inbox
    from .notebook import InboxItem as InboxItem
    from .notebook import Outcome as Outcome
    from .notebook import PromptCard as PromptCard
    from .spec import EXTENSION_URI as EXTENSION_URI
    from .spec import RESPONSE_KEY as RESPONSE_KEY
    from .spec import AnyResponder as AnyResponder
    from .spec import ConsensusResponder as ConsensusResponder
    from .spec import PromptEnvelope as PromptEnvelope
    from .spec import ResponseEnvelope as ResponseEnvelope
    from .spec import SpecificResponder as SpecificResponder
    from .spec import UnknownResponder as UnknownResponder
    from .spec import agent_card_extension as agent_card_extension
    from .spec import check_prompt as check_prompt
    from .spec import check_response as check_response
    from .spec import parse_responders as parse_responders
    from .validation import CompiledSchema as CompiledSchema
    from .validation import ValidationIssue as ValidationIssue
    from .validation import compile_schema as compile_schema
    from .validation import validate_payload as validate_payload

__version__ = "0.1.0"

#: Submodules reachable as attributes after a bare ``import hitl_nb`` (as they were when
#: the package imported them all).
_SUBMODULES = (
    "a2a cli client conformance errors forms mock_agent notebook policy responders server "
    "spec testing tutorials validation".split()
)

__getattr__, __dir__, _names = _lazy.attach_table(__name__, __file__, _SUBMODULES)
__all__ = [*_names, "__version__"]


def _draw_trace(trace: typing.Any) -> dict[str, typing.Any]:
    # A client's wire trace (hitl_nb.client, a lower layer) is drawn by the notebook
    # layer's TraceView. The root wires the two together, so the notebook layer loads
    # only when a trace is first displayed, and ``from hitl_nb.client import ...`` alone
    # still shows the timeline.
    from .notebook import TraceView

    return dict(TraceView(trace).widget._repr_mimebundle_() or {})


_display.register_renderer("trace", _draw_trace)
