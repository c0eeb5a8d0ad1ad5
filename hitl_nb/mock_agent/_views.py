"""What one client may see of a task: the envelope only when it activated the extension.

§Activation: an agent that has not had hitl-prompt/v1 activated MUST NOT emit the
envelope. The core keeps it in every status message; these views take it out (from the
status message, the history and streamed events) for a request without activation.
"""

from __future__ import annotations

import copy
from dataclasses import replace

from hitl_nb.a2a import (
    Message,
    StreamEvent,
    Task,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from hitl_nb.mock_agent._faults import Faults
from hitl_nb.spec import EXTENSION_URI

__all__ = ["event_view", "strip_message", "task_view"]


def strip_message(message: Message) -> Message:
    """``message`` without the envelope in its metadata or the URI in its extensions."""
    meta = message.metadata
    if not (meta and EXTENSION_URI in meta) and EXTENSION_URI not in message.extensions:
        return message
    rest = {k: v for k, v in (meta or {}).items() if k != EXTENSION_URI}
    return replace(
        message,
        metadata=rest or None,
        extensions=[e for e in message.extensions if e != EXTENSION_URI],
    )


def _status(status: TaskStatus, strip: bool, drop_message: bool) -> TaskStatus:
    if drop_message:
        return replace(status, message=None)
    if strip and status.message is not None:
        return replace(status, message=strip_message(status.message))
    return status


def task_view(
    task: Task,
    *,
    activated: bool,
    faults: Faults,
    history_length: int | None = None,
    include_artifacts: bool = True,
    snapshot: bool = False,
) -> Task:
    """A copy of ``task`` fit for one client.

    ``history_length`` keeps the newest N history messages (0: none; None: all).
    ``snapshot`` marks the first event of a subscription, which the ``no-replay`` fault
    sends without its status message (so without the envelope).
    """
    strip = not activated and not faults.envelope_without_activation
    history = task.history if history_length is None else task.history[-history_length:]
    if history_length == 0:
        history = []
    if strip:
        history = [strip_message(m) for m in history]
    return Task(
        id=task.id,
        context_id=task.context_id,
        status=_status(task.status, strip, snapshot and faults.no_replay),
        artifacts=list(task.artifacts) if include_artifacts else [],
        history=list(history),
        metadata=copy.copy(task.metadata),
    )


def event_view(event: StreamEvent, *, activated: bool, faults: Faults) -> StreamEvent:
    """A stream event fit for one client."""
    strip = not activated and not faults.envelope_without_activation
    if isinstance(event, Task):
        return task_view(event, activated=activated, faults=faults)
    if isinstance(event, TaskStatusUpdateEvent) and strip:
        return replace(event, status=_status(event.status, True, False))
    if isinstance(event, Message) and strip:
        return strip_message(event)
    return event
