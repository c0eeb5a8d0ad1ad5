"""Answering a prompt exactly once (§Response Envelope, §Acceptance and rejection).

The one delivery engine: the client's :meth:`~hitl_nb.client.HitlClient.respond` and
the responder gateway's forward both build the answer here (:func:`answer_message`),
send it (:func:`send_answer`) and, when its fate is unknown (a timeout, a dropped
connection), read the task back before sending the *same* message (same
``messageId``) again (:func:`settle_answer`). What the task says of our answer is
:func:`fate`, the one rule of both sides; a 409 to a resend is checked against it, so
an accepted answer never turns into a spurious :class:`~hitl_nb.errors.PromptConflict`.
A 409 to a first send is never ours: the agent refused this very message.

An answer is checked locally against the prompt's response_schema (the bounded
validator, S-2) before anything is sent (:func:`check_locally`). Every delivery of
:meth:`HitlClient.respond` ends with an :class:`AnswerReceipt`: accepted, whether that
was learnt from the task rather than from the answer to the send, and how long the task
took to leave INPUT_REQUIRED when that could be seen; over the 1 s of §Acceptance and
rejection (AC-4) it is reported (``slow``) and logged.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from hitl_nb.a2a import Message, Part, Role, SendResult, Task, TaskState
from hitl_nb.errors import (
    AgentTimeout,
    AgentUnreachable,
    AnswerOutcomeUnknown,
    PromptConflict,
    ProtocolViolation,
    ResponseInvalid,
)
from hitl_nb.spec import RESPONSE_KEY, PromptEnvelope, ResponseEnvelope

from ._bindings import Binding
from ._events import prompt_in_status
from ._follow import Reconnect

__all__ = [
    "IN_FLIGHT",
    "RESUME_BUDGET",
    "AnswerReceipt",
    "Answering",
    "Fate",
    "How",
    "answer_message",
    "answered_prompt",
    "check_locally",
    "deliver",
    "fate",
    "landed",
    "send_answer",
    "settle_answer",
    "still_on",
]

log = logging.getLogger("hitl_nb.client")

#: Failures after which an answer may or may not have been accepted (and a task read
#: that may simply be tried again).
IN_FLIGHT = (AgentUnreachable, AgentTimeout, ProtocolViolation)
#: §Acceptance and rejection (AC-4): an accepted answer moves the task out of
#: INPUT_REQUIRED within 1 second.
RESUME_BUDGET = 1.0
# How long to watch for that move after an accepted answer whose task still shows the
# prompt (enough to tell whether the agent kept the 1 s), and after a 409 on a resend.
_TRANSITION_WAIT = 1.5


@dataclass(frozen=True)
class AnswerReceipt:
    """How an accepted answer went (:meth:`HitlClient.receipt`).

    ``recovered``: the send's own answer was lost (or was a 409 to our resend) and the
    task showed that the answer had landed. ``resume_seconds``: from sending until the
    task was seen out of INPUT_REQUIRED, when that was seen (None: not observed, e.g. a
    blocking send whose time includes the agent's work). ``waited_seconds``: how long
    the client watched when the task was still on the prompt at the end.
    """

    task_id: str
    prompt_id: str
    message_id: str
    recovered: bool = False
    resume_seconds: float | None = None
    waited_seconds: float | None = None

    @property
    def slow(self) -> bool:
        """Did the agent break the 1 s of §Acceptance and rejection (AC-4)?"""
        if self.resume_seconds is not None:
            return self.resume_seconds > RESUME_BUDGET
        return self.waited_seconds is not None and self.waited_seconds > RESUME_BUDGET

    def describe(self) -> str:
        """One sentence for a person: accepted, and how long the agent took if slow."""
        text = "the agent accepted the answer"
        if self.recovered:
            text += " (seen on the task: the reply to the send was lost or late)"
        if self.resume_seconds is not None and self.slow:
            text += (
                f"; it took {self.resume_seconds:.1f} s to resume (the extension asks for "
                f"at most {RESUME_BUDGET:g} s)"
            )
        elif self.resume_seconds is None and self.slow:
            text += (
                f"; {self.waited_seconds:.1f} s later the task was still waiting on this "
                f"prompt (the extension asks it to resume within {RESUME_BUDGET:g} s)"
            )
        return text


_ENDED_WITHOUT_ANSWER = (TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED)


class Fate(enum.Enum):
    """What a task read back says of an answer we sent (see :func:`fate`)."""

    #: Ours was accepted.
    LANDED = "landed"
    #: The task still asks the prompt: ours has not landed (or not yet, AC-4).
    OPEN = "open"
    #: The prompt closed without ours: another answer, or the task ended without it.
    CLOSED = "closed"


def answered_prompt(message: Message) -> str | None:
    """The prompt_id a message answers (``metadata.hitl_response_for``), if any."""
    raw = (message.metadata or {}).get(RESPONSE_KEY)
    pid = raw.get("prompt_id") if isinstance(raw, Mapping) else None
    return pid if isinstance(pid, str) else None


def still_on(task: Task, prompt_id: str) -> bool:
    """Is the task INPUT_REQUIRED with ``prompt_id`` as its open prompt?"""
    if task.status.state is not TaskState.INPUT_REQUIRED:
        return False
    shown = prompt_in_status(task.id, task.context_id, task.status)
    return shown is not None and shown.prompt_id == prompt_id


def fate(task: Task, prompt_id: str, message_id: str | None = None) -> Fate:
    """What became of our answer (``message_id``) to ``prompt_id``, read on ``task``.

    The rule of exactly-once answers, for the client and the gateway alike. An agent
    accepts one answer per prompt and refuses every later one with 409 (§Acceptance and
    rejection); A2A lets it keep no history, or return only its latest messages
    (``historyLength``): the history proves what it holds, its silence proves nothing.

    1. Our message in the history: LANDED, whatever the task shows now (an agent
       slow to resume still shows the prompt).
    2. The task still asks this prompt: OPEN.
    3. Another answer to this prompt in the history: CLOSED (the agent took that one).
    4. The task failed, was canceled or rejected, and its history is there without
       ours: CLOSED (a deadline with policy fail, a CancelTask, ended it).
    5. Otherwise the prompt closed after our answer was sent and nothing shows that
       anything else closed it: LANDED. An agent that keeps no history cannot show
       ours; counting it as not landed would turn every answer whose reply was lost
       into a spurious conflict, and the caller would answer twice.
    """
    history = task.history
    if message_id is not None and any(m.message_id == message_id for m in history):
        return Fate.LANDED
    if still_on(task, prompt_id):
        return Fate.OPEN
    if any(answered_prompt(m) == prompt_id for m in history):
        return Fate.CLOSED
    if history and task.status.state in _ENDED_WITHOUT_ANSWER:
        return Fate.CLOSED
    return Fate.LANDED


def landed(task: Task, prompt_id: str, message_id: str | None = None) -> bool:
    """Did the answer land (accepted), whatever state the task is in now? (:func:`fate`)"""
    return fate(task, prompt_id, message_id) is Fate.LANDED


def check_locally(envelope: PromptEnvelope, payload: Any) -> None:
    """Raise ResponseInvalid (with ``validation_errors``) when the payload does not fit."""
    issues = envelope.validate(payload)
    if issues:
        raise ResponseInvalid(
            "payload does not match the prompt's response_schema "
            "(checked locally; nothing was sent)",
            validation_errors=[i.to_json() for i in issues],
        )


def answer_message(
    task_id: str,
    context_id: str | None,
    prompt_id: str,
    payload: Any,
    text: str | None = None,
    *,
    validate: bool = True,
    message_id: str | None = None,
) -> Message:
    """The Message carrying ``metadata.hitl_response_for`` (raises MalformedResponse).

    ``validate=False`` puts ``payload`` in the envelope as it is, whatever it is (to
    test how an agent refuses a malformed answer); it must still be JSON.
    ``message_id``: the one it was written ahead with (a new one when None).
    """
    if validate:
        metadata = ResponseEnvelope.from_json(
            {"prompt_id": prompt_id, "payload": payload}, mode="orchestrator"
        ).to_metadata()
    else:
        metadata = {RESPONSE_KEY: {"prompt_id": prompt_id, "payload": payload}}
    return Message(
        message_id=message_id or str(uuid.uuid4()),
        role=Role.USER,
        parts=[Part(text=text or f"Response to prompt {prompt_id}")],
        task_id=task_id,
        context_id=context_id,
        metadata=metadata,
    )


class Answering(Protocol):
    """What delivering an answer needs of a connection to the agent (a binding, or a
    :class:`~hitl_nb.client.HitlClient`)."""

    async def send(self, message: Message, /, *, return_immediately: bool = ...) -> SendResult:
        """SendMessage."""
        ...

    async def get_task(self, task_id: str, /) -> Task:
        """GetTask."""
        ...


class How(enum.Enum):
    """How an accepted answer was learnt of."""

    #: The agent's reply to our send.
    SENT = "sent"
    #: Read on the task before sending again: the first send had landed.
    FOUND = "found"
    #: The agent's 409 to our resend, and the task showing ours: the first had landed.
    CONFIRMED = "confirmed"


async def send_answer(
    agent: Answering,
    message: Message,
    prompt_id: str,
    *,
    wait: bool = False,
    resent: bool = False,
) -> tuple[SendResult, How]:
    """Send the answer once: the agent's result and how it was learnt.

    The agent's refusal is raised as it is (PromptConflict, ResponseInvalid...), and a
    lost reply as one of :data:`IN_FLIGHT`. A 409 to a first send is never ours. A 409
    to a resend (``resent``: the first send's fate was unknown) may be our first send,
    accepted meanwhile: the task decides (:func:`fate`), watched for the 1 s of AC-4
    while it still shows the prompt.
    """
    try:
        return await agent.send(message, return_immediately=not wait), How.SENT
    except PromptConflict:
        if resent:
            moved = await _await_transition(agent, message, prompt_id)
            if moved is not None:
                return moved, How.CONFIRMED
        raise


async def settle_answer(
    agent: Answering,
    message: Message,
    prompt_id: str,
    pauses: Iterable[float],
    *,
    wait: bool = False,
    first: Exception | None = None,
) -> tuple[SendResult, How]:
    """The answer's fate is unknown (``first``: the failure that lost its reply).

    After each of ``pauses`` the task is read: our answer landed, the task is returned;
    else the same message (same ``messageId``) is sent again and the agent's reply
    decides (:func:`send_answer`, ``resent``). Raises the agent's refusal, or
    :class:`~hitl_nb.errors.AnswerOutcomeUnknown` when it could not be asked.
    """
    task_id = message.task_id or ""
    last = first
    for pause in pauses:
        await asyncio.sleep(pause)
        try:
            task = await agent.get_task(task_id)
        except IN_FLIGHT as exc:
            last = exc
            continue
        if fate(task, prompt_id, message.message_id) is Fate.LANDED:
            log.info("answer to prompt %s landed before its reply was lost", prompt_id)
            return task, How.FOUND
        try:
            return await send_answer(agent, message, prompt_id, wait=wait, resent=True)
        except IN_FLIGHT as exc:
            last = exc
    raise AnswerOutcomeUnknown(
        f"the answer to prompt {prompt_id} (task {task_id}) may or may not have been "
        f"accepted: the agent could not be asked ({last}); check get_task() before "
        "answering again"
    ) from last


async def deliver(
    binding: Binding, message: Message, prompt_id: str, policy: Reconnect, wait: bool
) -> tuple[SendResult, AnswerReceipt]:
    """:meth:`HitlClient.respond`'s delivery: send the answer; if its fate is unknown,
    find out before sending it again (after ``policy``'s delays).

    Returns the agent's result (or the task read back) and the receipt of the accepted
    answer; raises the agent's rejection, or :class:`AnswerOutcomeUnknown`.
    """
    t0 = time.monotonic()
    try:
        result, _ = await send_answer(binding, message, prompt_id, wait=wait)
    except IN_FLIGHT as exc:
        pauses = (policy.delay(attempt) for attempt in range(1, policy.max_reconnects + 1))
        result, _ = await settle_answer(binding, message, prompt_id, pauses, wait=wait, first=exc)
        return await _watch(binding, message, prompt_id, result, t0, exact=False, recovered=True)
    return await _watch(binding, message, prompt_id, result, t0, exact=not wait, recovered=False)


async def _watch(
    binding: Binding,
    message: Message,
    prompt_id: str,
    result: SendResult,
    t0: float,
    *,
    exact: bool,
    recovered: bool,
) -> tuple[SendResult, AnswerReceipt]:
    """The receipt; while the task still shows the prompt, watch it leave (bounded).

    ``exact``: the result is the agent's reply to a non-blocking send, so the time it
    took bounds the resume. A blocking send's time includes the agent's work, and a
    recovered answer's the failed connection: there only a short time proves anything.
    """
    task_id = message.task_id or ""

    def receipt(resumed: float | None = None, waited: float | None = None) -> AnswerReceipt:
        return AnswerReceipt(task_id, prompt_id, message.message_id, recovered, resumed, waited)

    if not isinstance(result, Task) or not still_on(result, prompt_id):
        # Out of INPUT_REQUIRED when the reply came: within the time the reply took. A
        # recovered answer's move was seen by GetTask, at some point before now.
        elapsed = time.monotonic() - t0
        known = isinstance(result, Task) and (exact or elapsed <= RESUME_BUDGET)
        return result, receipt(elapsed if known else None)
    # Accepted, yet the task still shows the prompt: see whether the agent keeps AC-4.
    deadline = time.monotonic() + _TRANSITION_WAIT
    latest: Task = result
    while time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        try:
            latest = await binding.get_task(task_id)
        except (AgentUnreachable, AgentTimeout, ProtocolViolation):
            continue
        if not still_on(latest, prompt_id):
            made = receipt(time.monotonic() - t0)
            _log_slow(made)
            return latest, made
    made = receipt(None, time.monotonic() - t0)
    _log_slow(made)
    return latest, made


def _log_slow(receipt: AnswerReceipt) -> None:
    if receipt.slow:
        log.warning(
            "task %s, prompt %s: %s", receipt.task_id, receipt.prompt_id, receipt.describe()
        )


async def _await_transition(agent: Answering, message: Message, prompt_id: str) -> Task | None:
    """The task once it shows our answer landed (AC-4: within about 1 s); None when it
    shows the prompt closed without ours, or still open when the wait is over."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _TRANSITION_WAIT
    while True:
        try:
            task: Task | None = await agent.get_task(message.task_id or "")
        except IN_FLIGHT:
            task = None
        if task is not None:
            seen = fate(task, prompt_id, message.message_id)
            if seen is Fate.LANDED:
                return task
            if seen is Fate.CLOSED:
                return None
        if loop.time() >= deadline:
            return None
        await asyncio.sleep(0.1)
