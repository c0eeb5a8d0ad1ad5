"""The a2a-sdk events the extension emits: a prompt on INPUT_REQUIRED, WORKING on an
accepted answer, and the Task an executor must enqueue before its first status."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timezone

from a2a.types import (
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.protobuf.struct_pb2 import Struct

from hitl_nb.spec import EXTENSION_URI

from ._prompts import TAG_KEY, Asked

__all__ = ["first_task", "prompt_update", "status_update"]


def status_update(
    task_id: str, context_id: str, state: TaskState, message: Message | None = None
) -> TaskStatusUpdateEvent:
    """A status update stamped now."""
    status = TaskStatus(state=state)
    if message is not None:
        status.message.CopyFrom(message)
    status.timestamp.FromDatetime(datetime.now(timezone.utc))
    return TaskStatusUpdateEvent(task_id=task_id, context_id=context_id, status=status)


def agent_message(task_id: str, context_id: str, parts: list[Part]) -> Message:
    """A new message from the agent on this task."""
    return Message(
        role=Role.ROLE_AGENT,
        message_id=str(uuid.uuid4()),
        task_id=task_id,
        context_id=context_id,
        parts=parts,
    )


def prompt_update(
    asked: Asked, context_id: str, extra: Sequence[Part] = ()
) -> TaskStatusUpdateEvent:
    """INPUT_REQUIRED, the question as text and the envelope in the message's metadata
    (§Prompt Envelope); the executor's tag beside it. Every view of the task carries the
    envelope; the middleware takes it out for clients that did not activate it."""
    message = agent_message(asked.task_id, context_id, [Part(text=asked.envelope.prompt), *extra])
    metadata = Struct()
    metadata.update({EXTENSION_URI: asked.envelope.to_json()})
    if asked.tag is not None:
        metadata.update({TAG_KEY: asked.tag})
    message.metadata.CopyFrom(metadata)
    return status_update(asked.task_id, context_id, TaskState.TASK_STATE_INPUT_REQUIRED, message)


def first_task(task_id: str, context_id: str, message: Message | None) -> Task:
    """The Task an executor enqueues before its first status (the SDK requires one)."""
    task = Task(
        id=task_id, context_id=context_id, status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
    )
    if message is not None:
        task.history.append(message)
    return task
