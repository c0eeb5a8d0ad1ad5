"""Answering a prompt exactly once (§Response Envelope, §Acceptance and rejection).

An answer is checked locally against the prompt's response_schema (the bounded
validator, S-2) before anything is sent. If the connection fails while it is in flight,
the agent is asked (GetTask) whether the task left INPUT_REQUIRED for that prompt
before the same message (same ``messageId``) is sent again; a 409 on such a resend is
checked the same way, so an accepted answer never turns into a spurious
:class:`~hitl_nb.errors.PromptConflict`.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping
from typing import Any

from hitl_nb.a2a._model import Message, Part, Role, SendResult, Task, TaskState
from hitl_nb.errors import (
    AgentTimeout,
    AgentUnreachable,
    PromptConflict,
    ProtocolViolation,
    ResponseInvalid,
)
from hitl_nb.spec import PromptEnvelope, ResponseEnvelope

from ._bindings import Binding
from ._events import prompt_in_status
from ._follow import Reconnect

__all__ = ["AnswerOutcomeUnknown", "answer_message", "check_locally", "deliver", "landed"]

log = logging.getLogger("hitl_nb.client")

#: Failures after which an answer may or may not have been accepted.
IN_FLIGHT = (AgentUnreachable, AgentTimeout, ProtocolViolation)
# AC-4: an accepted answer moves the task out of INPUT_REQUIRED within 1 s.
_TRANSITION_WAIT = 1.5


class AnswerOutcomeUnknown(AgentUnreachable):
    """An answer was sent, the connection failed, and the agent could not be asked
    whether it landed. Check the task (``get_task``) before answering again."""


_ENDED_WITHOUT_ANSWER = (TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED)


def landed(task: Task, prompt_id: str, message_id: str | None = None) -> bool:
    """Did the task leave INPUT_REQUIRED for this prompt (answer accepted)?

    A task that failed, was canceled or rejected may have ended without the answer (a
    deadline with policy fail, a CancelTask): when its history is there and does not
    hold the answer's ``message_id``, the answer did not land.
    """
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
    payload: Mapping[str, Any],
    text: str | None = None,
) -> Message:
    """The Message carrying ``metadata.hitl_response_for`` (raises MalformedResponse)."""
    response = ResponseEnvelope.from_json(
        {"prompt_id": prompt_id, "payload": payload}, mode="orchestrator"
    )
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.USER,
        parts=[Part(text=text or f"Response to prompt {prompt_id}")],
        task_id=task_id,
        context_id=context_id,
        metadata=response.to_metadata(),
    )


async def deliver(
    binding: Binding, message: Message, prompt_id: str, policy: Reconnect, wait: bool
) -> SendResult:
    """Send the answer; if its fate is unknown, find out before sending it again."""
    try:
        return await binding.send(message, return_immediately=not wait)
    except IN_FLIGHT as exc:
        return await _settle(binding, message, prompt_id, policy, wait, exc)


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
