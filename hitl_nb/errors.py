"""The exceptions of hitl-nb: one tree, and one table between it and the wire.

::

    HitlError
    ├── MalformedPrompt          an envelope failed its check (carries the findings)
    ├── MalformedResponse        a hitl_response_for object failed its check
    ├── SchemaRejected           a response_schema cannot be used (too large, too deep,
    │                            not a valid schema, remote $ref)
    ├── BadJSON                  input is not acceptable JSON (syntax, duplicate keys,
    │                            NaN, a lone surrogate, too deep, too large)
    ├── NoUsableInterface        (client) the card offers no interface we speak
    ├── ExtensionNotDeclared     (client) the card does not declare hitl-prompt/v1
    ├── FormInvalid              (forms) submit() while the form has errors
    ├── FormClosed               (forms) submit() on a submitted or disabled form
    ├── FormValueError           (forms) a value the form's fields cannot hold
    ├── WaitTimedOut             (forms, notebook) wait()/wait_async(): nothing came in
    │                            time (also a TimeoutError)
    ├── ClickNeeded              (forms, notebook) wait() in a cell for a click, which a
    │                            cell that blocks cannot receive (also a RuntimeError)
    ├── AnswerNotAccepted        (notebook) raise_for_status(): the answer was not accepted
    ├── AskError                 (agent) ask() outside a wrapped executor, or a task run
    │                            again after a restart asks something else (also a
    │                            RuntimeError)
    ├── AgentNotAllowed          (server) the gateway may not talk to that agent host
    ├── GatewayRefused           (client) the server gateway refused a request (403
    │                            not yours, 404, 410 past its deadline, 502): every
    │                            status of the gateway's but 409 and 422
    ├── GatewayUnavailable       (notebook) ``gateway=True`` and no responder gateway
    │                            found for this kernel; (client) ``find_gateway(strict=True)``:
    │                            the kernel's server did not answer
    ├── NotifyRefused            (notify) a notification setting or a webhook address
    │                            refused (a host not allowed, credentials in a URL, not an
    │                            email address); also a ValueError
    ├── DeliveryFailed           (notify) a channel could not deliver a message (the SMTP
    │                            server or the webhook receiver); ``permanent``: retrying
    │                            cannot help
    ├── TransportError           the agent could not be reached or talked nonsense
    │   ├── AgentUnreachable     connect failure, connection dropped
    │   │   └── AnswerOutcomeUnknown  (client) an answer may or may not have landed
    │   ├── AgentTimeout         connect/read timeout, a stream that went silent
    │   └── ProtocolViolation    bad JSON, bad SSE, wrong content type
    │       ├── WireDecodeError  (a2a codecs) JSON that is not the A2A shape
    │       └── EventTooLarge    (a2a SSE) an SSE event over the size cap
    └── A2AError                 the agent answered with an error (code, HTTP status)
        ├── JSONParseError                   -32700  400
        ├── InvalidRequest                   -32600  400
        │   └── PayloadTooLarge              (mock agent) over the size cap: 413
        ├── MethodNotFound                   -32601  404
        │   └── MethodNotAllowed             (mock agent) wrong HTTP method: 405
        ├── InvalidParams                    -32602  400
        ├── InternalError                    -32603  500
        ├── TaskNotFound                     -32001  404
        ├── TaskNotCancelable                -32002  400
        ├── PushNotificationNotSupported     -32003  400
        ├── UnsupportedOperation             -32004  400
        ├── ContentTypeNotSupported          -32005  400
        │   └── WrongContentType             (mock agent) not JSON: 415
        ├── InvalidAgentResponse             -32006  500
        ├── ExtendedAgentCardNotConfigured   -32007  400
        ├── ExtensionSupportRequired         -32008  400
        ├── VersionNotSupported              -32009  400
        ├── PromptConflict                   -32010  409  hitl_already_answered_or_unknown
        └── ResponseInvalid                  -32011  422  hitl_response_invalid

The codes and statuses of the A2A errors are those of A2A 1.0 §5.4; the last two are
hitl-prompt/v1's own (§Acceptance and rejection): each class is the one home of its
code, status and message. Every class lives in this module (a test checks that); a
part named in brackets is the one that raises it, and re-exports it from its own
package. :func:`error_for_code` and :func:`error_for_status` are the only places that
turn a wire answer into a class: an agent's, and the Jupyter server's responder gateway's
(``error_for_status(status, gateway=True)``), whose 409 and 422 are the extension's own
rejections as from an agent and whose other refusals are :class:`GatewayRefused`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from http import HTTPStatus
from typing import Any, ClassVar, Literal, overload

#: ErrorInfo domain of A2A's own error reasons.
A2A_ERROR_DOMAIN = "a2a-protocol.org"
#: ErrorInfo domain of hitl-prompt/v1's two rejections: the extension's own (the host of
#: its URI, https://agentic-sandbox.aiwg.io/extensions/hitl-prompt/v1), since A2A keeps
#: ``a2a-protocol.org`` for its own reasons.
HITL_ERROR_DOMAIN = "agentic-sandbox.aiwg.io"

#: Reason phrases Python 3.13 renamed (to RFC 9110's), kept as every earlier Python and
#: the spec name them (§Acceptance and rejection: "422 Unprocessable Entity").
_FIXED_REASONS = {
    413: "Request Entity Too Large",
    414: "Request-URI Too Long",
    416: "Requested Range Not Satisfiable",
    422: "Unprocessable Entity",
}


def reason_phrase(status: int) -> str:
    """The HTTP reason phrase hitl-nb's servers send with ``status`` and its traces
    record: the same on every Python ("Unknown" for a status HTTP does not name)."""
    if status in _FIXED_REASONS:
        return _FIXED_REASONS[status]
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


class HitlError(Exception):
    """Root of every error hitl-nb raises on purpose."""


class MalformedPrompt(HitlError):
    """A prompt envelope failed its check; ``findings`` says which member and why."""

    def __init__(self, message: str, findings: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.findings = list(findings)


class MalformedResponse(HitlError):
    """A ``hitl_response_for`` object failed its check; ``findings`` says why."""

    def __init__(self, message: str, findings: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.findings = list(findings)


class NoUsableInterface(HitlError):
    """The agent's card offers no interface with a binding and version the client speaks."""


class ExtensionNotDeclared(HitlError):
    """The agent's card does not declare hitl-prompt/v1 (§Activation).

    Such an agent never sends prompt envelopes; pass ``require_extension=False`` to talk
    to it anyway (INPUT_REQUIRED then comes with unstructured text only).
    """


class FormInvalid(HitlError):
    """``submit()`` was called while the form has errors; ``errors`` lists them (each
    a :class:`~hitl_nb.validation.ValidationIssue`)."""

    def __init__(self, errors: list[Any], where: Callable[[str], str] | None = None) -> None:
        # ``where`` names a pointer as the person sees it (the form's labels)
        name = where or (lambda path: path or "/")
        lines = "; ".join(f"{name(e.path)}: {e.message}" for e in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        count = f"{len(errors)} problem{'' if len(errors) == 1 else 's'}"
        super().__init__(f"the form has {count}: {lines}{more}")
        self.errors = errors


class FormClosed(HitlError):
    """``submit()`` was called on a form that is disabled or already submitted."""


class FormValueError(HitlError, ValueError):
    """A value given to a form does not fit its schema's shape; names the JSON Pointer."""

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(f"{pointer or '/'}: {message}")
        self.pointer = pointer
        self.message = message


class WaitTimedOut(HitlError, TimeoutError):
    """``wait(timeout)`` / ``wait_async(timeout)`` of a form, card or conversation: what
    it waited for did not come within ``timeout`` seconds (nothing was cancelled)."""


class ClickNeeded(HitlError, RuntimeError):
    """``wait()`` in a notebook cell for something only a click can bring: the kernel
    handles the click after the cell, so blocking would never end. The message says
    what to do instead (``await ....wait_async(timeout)``, or answer from code)."""


class AnswerNotAccepted(HitlError):
    """An answer given in a notebook was not accepted (``Outcome.raise_for_status()``).

    ``outcome`` is the :class:`~hitl_nb.notebook.Outcome` (``status`` ``invalid``,
    ``conflict``, ``refused`` or ``failed``); ``validation_errors`` its issues. The
    error that caused it, if any (``ResponseInvalid``, ``PromptConflict``, ...), is the
    ``__cause__``.
    """

    def __init__(self, message: str, outcome: Any = None) -> None:
        super().__init__(message)
        self.outcome = outcome
        errors = getattr(outcome, "validation_errors", None)
        self.validation_errors: list[dict[str, Any]] = list(errors or [])


class AskError(HitlError, RuntimeError):
    """``hitl_nb.agent.ask`` cannot go on: it was called outside an executor wrapped by
    ``HitlExtension.wrap`` (or not with the event queue that executor was given), or a
    task run again after a restart asks a different question where it asked one before
    (the code before each ``ask`` must ask the same questions in the same order)."""


class SchemaRejected(HitlError):
    """A response_schema cannot be used for validation (spec S-2 bounds, bad schema)."""


class BadJSON(HitlError):
    """Input is not acceptable JSON: bad syntax, duplicate keys, NaN, a lone UTF-16
    surrogate, too deep or large."""


class AgentNotAllowed(HitlError):
    """The Jupyter server's gateway may not talk to this agent (its host is not on the
    administrator's ``HitlServer.allowed_agent_hosts``, or the URL is not http(s))."""


class GatewayRefused(HitlError):
    """The Jupyter server's responder gateway refused a request.

    ``status`` is its HTTP status (403: this user may not answer the prompt; 404: no such
    task or prompt; 409: already answered; 410: past its deadline; 502: the agent
    refused or could not be reached) and ``body`` its JSON answer; the message is the
    gateway's own plain-language reason.
    """

    def __init__(self, status: int, message: str, body: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body: dict[str, Any] = dict(body or {})


class GatewayUnavailable(HitlError):
    """No responder gateway to answer through: a conversation was asked to use the
    Jupyter server's (``gateway=True``) and this kernel has none, or
    ``find_gateway(strict=True)`` found the kernel's server but it did not answer.
    ``info`` is where the gateway would be, when known (a ``GatewayInfo``)."""

    def __init__(self, message: str, info: Any = None) -> None:
        super().__init__(message)
        self.info = info


class NotifyRefused(HitlError, ValueError):
    """A notification setting, or an address to send to, that hitl-nb refuses: a webhook
    whose host the administrator did not allow, credentials or an IP literal in its URL,
    a name that makes no email address. The message names what was wrong (never a
    secret)."""


class DeliveryFailed(HitlError):
    """A channel could not deliver a message: the SMTP server or the webhook receiver
    could not be reached, timed out, or refused it. ``permanent``: the receiver said
    retrying cannot help (an SMTP 5xx, an HTTP 4xx other than 408 and 429, a redirect),
    so the message is given up at once rather than retried. ``retry_after``: the
    receiver asked to be left alone this many seconds (a 429's ``Retry-After``): the
    next try waits at least that long."""

    def __init__(
        self, message: str, *, permanent: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.permanent = permanent
        self.retry_after = retry_after


class TransportError(HitlError):
    """The agent could not be reached, or what came back was not the protocol."""


class AgentUnreachable(TransportError):
    """Connecting failed, or the connection dropped before an answer arrived."""


class AgentTimeout(TransportError):
    """The agent did not answer (or a stream stayed silent) within the time allowed."""


class AnswerOutcomeUnknown(AgentUnreachable):
    """An answer was sent, the connection failed, and the agent could not be asked
    whether it landed. Check the task (``get_task``) before answering again."""


class ProtocolViolation(TransportError):
    """The agent answered with something that is not A2A: bad JSON, SSE, size, type."""


class WireDecodeError(ProtocolViolation):
    """Untrusted A2A JSON did not decode; ``pointer`` (a JSON Pointer) names the member.

    A client sees it as a :class:`ProtocolViolation` (the agent talked nonsense); a
    server turns it into ``InvalidParams`` (the request was wrong).
    """

    def __init__(self, pointer: str, problem: str) -> None:
        self.pointer = pointer
        self.problem = problem
        super().__init__(f"{pointer or '/'}: {problem}")


class EventTooLarge(ProtocolViolation):
    """One server-sent event (or one line of it) went over the configured size cap."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"server-sent event too large: more than {limit} characters "
            f"(read {size} before giving up); raise max_event_size if the agent is trusted"
        )
        self.size = size
        self.limit = limit


class A2AError(HitlError):
    """An error the agent answered with.

    ``code`` is the JSON-RPC code, ``http_status`` the HTTP+JSON status, ``data`` the
    JSON-RPC ``error.data`` (1.0: a list of detail objects; 0.3: an object) or the REST
    ``details`` list, exactly as received. ``deviations`` lists, in words, how the
    agent's error departed from the shape the specs give (read anyway).
    """

    code: ClassVar[int] = -32603
    http_status: ClassVar[int] = 500
    reason: ClassVar[str] = "INTERNAL"
    #: ``google.rpc.ErrorInfo.domain`` of ``reason``: A2A's for its own errors.
    domain: ClassVar[str] = A2A_ERROR_DOMAIN
    default_message: ClassVar[str] = "A2A error"

    def __init__(self, message: str | None = None, *, data: Any = None) -> None:
        self.message = message or self.default_message
        self.data = data
        self.deviations: list[str] = []
        super().__init__(self.message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, code={self.code})"


class JSONParseError(A2AError):
    """The agent could not parse the request as JSON."""

    code, http_status, reason = -32700, 400, "PARSE_ERROR"
    default_message = "Invalid JSON payload"


class InvalidRequest(A2AError):
    """The request was not a valid JSON-RPC request."""

    code, http_status, reason = -32600, 400, "INVALID_REQUEST"
    default_message = "Request payload validation error"


class PayloadTooLarge(InvalidRequest):
    """The request body is over the size cap (HTTP 413 on the HTTP+JSON binding)."""

    http_status = 413


class MethodNotFound(A2AError):
    """The method (or REST route) does not exist."""

    code, http_status, reason = -32601, 404, "METHOD_NOT_FOUND"
    default_message = "Method not found"


class MethodNotAllowed(MethodNotFound):
    """The route exists but not for this HTTP method (HTTP 405 on the HTTP+JSON binding)."""

    http_status = 405


class InvalidParams(A2AError):
    """The method's parameters were wrong."""

    code, http_status, reason = -32602, 400, "INVALID_PARAMS"
    default_message = "Invalid parameters"


class InternalError(A2AError):
    """The agent failed internally."""

    code, http_status, reason = -32603, 500, "INTERNAL"
    default_message = "Internal error"


class TaskNotFound(A2AError):
    """No task with that id (A2A §5.4)."""

    code, http_status, reason = -32001, 404, "TASK_NOT_FOUND"
    default_message = "Task not found"


class TaskNotCancelable(A2AError):
    """The task is terminal and cannot be canceled."""

    code, http_status, reason = -32002, 400, "TASK_NOT_CANCELABLE"
    default_message = "Task cannot be canceled"


class PushNotificationNotSupported(A2AError):
    """The agent does not do push notifications."""

    code, http_status, reason = -32003, 400, "PUSH_NOTIFICATION_NOT_SUPPORTED"
    default_message = "Push notifications are not supported"


class UnsupportedOperation(A2AError):
    """The operation is not supported (e.g. a message to a terminal task)."""

    code, http_status, reason = -32004, 400, "UNSUPPORTED_OPERATION"
    default_message = "This operation is not supported"


class ContentTypeNotSupported(A2AError):
    """A media type in the request is not supported."""

    code, http_status, reason = -32005, 400, "CONTENT_TYPE_NOT_SUPPORTED"
    default_message = "Incompatible content types"


class WrongContentType(ContentTypeNotSupported):
    """The request's Content-Type is not JSON (HTTP 415 on the HTTP+JSON binding)."""

    http_status = 415


class InvalidAgentResponse(A2AError):
    """The agent produced a response that does not conform to A2A."""

    code, http_status, reason = -32006, 500, "INVALID_AGENT_RESPONSE"
    default_message = "Invalid agent response"


class ExtendedAgentCardNotConfigured(A2AError):
    """The agent declared an extended card but has none."""

    code, http_status, reason = -32007, 400, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"
    default_message = "Extended agent card is not configured"


class ExtensionSupportRequired(A2AError):
    """The agent requires an extension the request did not activate."""

    code, http_status, reason = -32008, 400, "EXTENSION_SUPPORT_REQUIRED"
    default_message = "A required extension was not activated"


class VersionNotSupported(A2AError):
    """The agent does not speak the requested A2A version."""

    code, http_status, reason = -32009, 400, "VERSION_NOT_SUPPORTED"
    default_message = "A2A version not supported"


class PromptConflict(A2AError):
    """hitl-prompt/v1: the prompt_id is unknown or already answered (409 / -32010)."""

    code, http_status, reason = -32010, 409, "HITL_ALREADY_ANSWERED_OR_UNKNOWN"
    domain = HITL_ERROR_DOMAIN
    default_message = "hitl_already_answered_or_unknown"


class ResponseInvalid(A2AError):
    """hitl-prompt/v1: the payload does not validate (422 / -32011).

    ``validation_errors`` holds the spec's ``{path, keyword, message}`` entries, whether
    the agent sent them or the local validator found them before anything was sent.
    """

    code, http_status, reason = -32011, 422, "HITL_RESPONSE_INVALID"
    domain = HITL_ERROR_DOMAIN
    default_message = "hitl_response_invalid"

    def __init__(
        self,
        message: str | None = None,
        *,
        data: Any = None,
        validation_errors: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        super().__init__(message, data=data)
        self.validation_errors: list[dict[str, Any]] = [dict(e) for e in validation_errors]

    def __str__(self) -> str:
        if not self.validation_errors:
            return self.message
        lines = [self.message]
        lines += [
            f"  {e.get('path') or '/'}: {e.get('message', '')}" for e in self.validation_errors
        ]
        return "\n".join(lines)


#: Every A2A error class with a code of its own, in the order of the tree above
#: (PayloadTooLarge, MethodNotAllowed and WrongContentType share their parent's code).
A2A_ERRORS: tuple[type[A2AError], ...] = (
    JSONParseError,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    InternalError,
    TaskNotFound,
    TaskNotCancelable,
    PushNotificationNotSupported,
    UnsupportedOperation,
    ContentTypeNotSupported,
    InvalidAgentResponse,
    ExtendedAgentCardNotConfigured,
    ExtensionSupportRequired,
    VersionNotSupported,
    PromptConflict,
    ResponseInvalid,
)

_BY_CODE: dict[int, type[A2AError]] = {cls.code: cls for cls in A2A_ERRORS}
_BY_REASON: dict[str, type[A2AError]] = {cls.reason: cls for cls in A2A_ERRORS}
# Statuses shared by several classes map to the most general one; the ErrorInfo
# reason (REST details) picks the exact class when present. 409 and 422 are
# hitl-prompt/v1's own (§Acceptance and rejection), used by no core A2A error: they
# decide by themselves (an SDK-built agent can only send its core reasons with them).
_BY_STATUS: dict[int, type[A2AError]] = {
    400: InvalidRequest,
    404: TaskNotFound,
    409: PromptConflict,
    422: ResponseInvalid,
    500: InternalError,
}


def error_for_code(code: int) -> type[A2AError]:
    """The class for a JSON-RPC error code; unknown codes give :class:`A2AError`."""
    return _BY_CODE.get(code, A2AError)


def error_for_reason(reason: str) -> type[A2AError] | None:
    """The class for a ``google.rpc.ErrorInfo`` reason such as ``TASK_NOT_FOUND``."""
    return _BY_REASON.get(reason.upper())


_DECIDED_BY_STATUS = (409, 422)


@overload
def error_for_status(
    status: int, reason: str | None = None, *, gateway: Literal[False] = False
) -> type[A2AError]: ...


@overload
def error_for_status(
    status: int, reason: str | None = None, *, gateway: Literal[True]
) -> type[A2AError] | type[GatewayRefused]: ...


def error_for_status(
    status: int, reason: str | None = None, *, gateway: bool = False
) -> type[A2AError] | type[GatewayRefused]:
    """The class for an HTTP+JSON error (``gateway``: of the responder gateway).

    409 and 422 are the extension's rejections whatever the ErrorInfo says, from an
    agent or from the gateway; every other status of the gateway is its own refusal
    (:class:`GatewayRefused`); for an agent's other statuses the ErrorInfo ``reason``
    picks the exact class (400 is shared by many).
    """
    if status in _DECIDED_BY_STATUS:
        return _BY_STATUS[status]
    if gateway:
        return GatewayRefused
    if reason:
        by_reason = error_for_reason(reason)
        if by_reason is not None:
            return by_reason
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return InternalError if status >= 500 else A2AError
