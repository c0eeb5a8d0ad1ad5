"""Answering a prompt exactly once (§Response Envelope, §Acceptance and rejection).

An answer is checked locally against the prompt's response_schema (the bounded
validator, S-2) before anything is sent. If the connection fails while it is in flight,
the agent is asked (GetTask) whether the task left INPUT_REQUIRED for that prompt
before the same message (same ``messageId``) is sent again; a 409 on such a resend is
checked the same way, so an accepted answer never turns into a spurious
:class:`~hitl_nb.errors.PromptConflict`. "Landed" is read from the task: our message
(by ``messageId``) in its history, or the task out of INPUT_REQUIRED for that prompt,
whatever state it is in now.

Every delivery ends with an :class:`AnswerReceipt`: accepted, whether that was learnt
from the task rather than from the answer to the send, and how long the task took to
leave INPUT_REQUIRED when that could be seen; over the 1 s of §Acceptance and rejection
(AC-4) it is reported (``slow``) and logged.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

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
    "RESUME_BUDGET",
    "still_on",
    "AnswerReceipt",
    "answer_message",
    "check_locally",
    "deliver",
    "landed",
]

log = logging.getLogger("hitl_nb.client")

#: Failures after which an answer may or may not have been accepted.
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


def _in_history(task: Task, message_id: str | None) -> bool:
    return message_id is not None and any(m.message_id == message_id for m in task.history)


def still_on(task: Task, prompt_id: str) -> bool:
    """Is the task INPUT_REQUIRED with ``prompt_id`` as its open prompt?"""
    if task.status.state is not TaskState.INPUT_REQUIRED:
        return False
    shown = prompt_in_status(task.id, task.context_id, task.status)
    return shown is not None and shown.prompt_id == prompt_id


def landed(task: Task, prompt_id: str, message_id: str | None = None) -> bool:
    """Did the answer land (accepted), whatever state the task is in now?

    Our message (``message_id``) in the task's history says so at once, even while the
    task still shows the prompt (an agent slow to resume). Otherwise: the task left
    INPUT_REQUIRED for this prompt. A task that failed, was canceled or rejected may
    have ended without the answer (a deadline with policy fail, a CancelTask): when its
    history is there and does not hold ``message_id``, the answer did not land.
    """
    if _in_history(task, message_id):
        return True
    if task.status.state is not TaskState.INPUT_REQUIRED:
        if message_id is not None and task.history and task.status.state in _ENDED_WITHOUT_ANSWER:
            return any(m.message_id == message_id for m in task.history)
        return True
    open_prompt = prompt_in_status(task.id, task.context_id, task.status)
    return open_prompt is None or open_prompt.prompt_id != prompt_id


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
) -> Message:
    """The Message carrying ``metadata.hitl_response_for`` (raises MalformedResponse).

    ``validate=False`` puts ``payload`` in the envelope as it is, whatever it is (to
    test how an agent refuses a malformed answer); it must still be JSON.
    """
    if validate:
        metadata = ResponseEnvelope.from_json(
            {"prompt_id": prompt_id, "payload": payload}, mode="orchestrator"
        ).to_metadata()
    else:
        metadata = {RESPONSE_KEY: {"prompt_id": prompt_id, "payload": payload}}
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.USER,
        parts=[Part(text=text or f"Response to prompt {prompt_id}")],
        task_id=task_id,
        context_id=context_id,
        metadata=metadata,
    )


async def deliver(
    binding: Binding, message: Message, prompt_id: str, policy: Reconnect, wait: bool
) -> tuple[SendResult, AnswerReceipt]:
    """Send the answer; if its fate is unknown, find out before sending it again.

    Returns the agent's result (or the task read back) and the receipt of the accepted
    answer; raises the agent's rejection, or :class:`AnswerOutcomeUnknown`.
    """
    t0 = time.monotonic()
    try:
        result = await binding.send(message, return_immediately=not wait)
    except IN_FLIGHT as exc:
        result = await _settle(binding, message, prompt_id, policy, wait, exc)
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


async def _settle(
    binding: Binding,
    message: Message,
    prompt_id: str,
    policy: Reconnect,
    wait: bool,
    first: Exception,
) -> SendResult:
    task_id = message.task_id or ""
    last: Exception = first
    for attempt in range(1, policy.max_reconnects + 1):
        await asyncio.sleep(policy.delay(attempt))
        try:
            task = await binding.get_task(task_id)
        except (AgentUnreachable, AgentTimeout) as exc:
            last = exc
            continue
        if landed(task, prompt_id, message.message_id):
            log.info("answer to prompt %s landed before the connection failed", prompt_id)
            return task
        try:
            return await binding.send(message, return_immediately=not wait)
        except PromptConflict:
            # Our first send may have landed after the GetTask above: ours is never a
            # conflict (the same messageId in the history, or the prompt gone).
            moved = await _await_transition(binding, task_id, prompt_id, message.message_id)
            if moved is not None:
                return moved
            raise
        except IN_FLIGHT as exc:
            last = exc
    raise AnswerOutcomeUnknown(
        f"the answer to prompt {prompt_id} (task {task_id}) may or may not have been "
        f"accepted: the agent could not be asked ({last}); check get_task() before "
        "answering again"
    ) from last


async def _await_transition(
    binding: Binding, task_id: str, prompt_id: str, message_id: str
) -> Task | None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _TRANSITION_WAIT
    while True:
        try:
            task: Task | None = await binding.get_task(task_id)
        except (AgentUnreachable, AgentTimeout):
            task = None
        if task is not None and landed(task, prompt_id, message_id):
            return task
        if loop.time() >= deadline:
            return None
        await asyncio.sleep(0.1)
