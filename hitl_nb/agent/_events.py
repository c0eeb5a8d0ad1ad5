"""The a2a-sdk events the extension emits: a prompt on INPUT_REQUIRED, WORKING on an
accepted answer, and the Task an executor must enqueue before its first status; and
what the framework bridges' executors do alike: ask a prompt, ask the open one again, complete a
task with what a finished run answers, mark a task CANCELED, say what was lost."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from a2a.server.agent_execution import RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import (
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.protobuf.struct_pb2 import Struct, Value

from hitl_nb.errors import AskError
from hitl_nb.spec import EXTENSION_URI

from ._prompts import TAG_KEY, Asked, PromptBook
from ._stored import stored_task

__all__ = [
    "agent_message",
    "ask",
    "ask_again",
    "canceled",
    "complete_with",
    "first_task",
    "lost",
    "prompt_update",
    "status_update",
    "updater_for",
]


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


def updater_for(context: RequestContext, event_queue: EventQueue) -> TaskUpdater:
    """The updater of the request's task, in the task's own context (the SDK gives a
    message that names a task but no contextId a fresh context id of its own)."""
    current = context.current_task
    context_id = current.context_id if current is not None else context.context_id or ""
    return TaskUpdater(event_queue, context.task_id or "", context_id)


async def ask(
    book: PromptBook, asked: Asked, updater: TaskUpdater, extra: Sequence[Part] = ()
) -> None:
    """Emit ``asked`` (INPUT_REQUIRED, ``extra`` parts after the question), recorded in
    the book first so that its answer is checked against it."""
    book.record(asked)
    await updater.event_queue.enqueue_event(prompt_update(asked, updater.context_id, extra))


async def ask_again(book: PromptBook, current_task: Task | None, updater: TaskUpdater) -> None:
    """A message answers nothing while the task waits: its open prompt (as the store
    shows it) is asked again, kept open."""
    found = stored_task(current_task)
    asked = book.open_prompt(updater.task_id, found) if found is not None else None
    if asked is not None:
        await ask(book, asked, updater)


async def complete_with(updater: TaskUpdater, made: str | Mapping[str, Any] | list[Part]) -> None:
    """Complete the task with what a finished run answers: text, parts, or a JSON object
    (a data artifact named ``result``, then "Done.")."""
    if isinstance(made, str):
        await updater.complete(updater.new_agent_message([Part(text=made)]))
        return
    if isinstance(made, list):
        await updater.complete(updater.new_agent_message(made))
        return
    data = Value()
    data.struct_value.update(dict(made))
    await updater.add_artifact([Part(data=data)], name="result")
    await updater.complete(updater.new_agent_message([Part(text="Done.")]))


def canceled(task_id: str, context_id: str) -> TaskStatusUpdateEvent:
    """CANCELED, saying the client asked for it."""
    message = agent_message(task_id, context_id, [Part(text="Canceled at the client's request.")])
    return status_update(task_id, context_id, TaskState.TASK_STATE_CANCELED, message)


def lost(asked: Asked, call: str, kept: str, keep: str) -> AskError:
    """The error of an answer to ``asked`` when nothing kept of its task waits on the
    ``call`` it stands for: the ``kept`` run (a paused run, a session) was in memory while
    the task store outlived a restart. ``keep``: what to give instead."""
    return AskError(
        f"task {asked.task_id} waits on prompt {asked.prompt_id}, which stands for the "
        f"{call} {asked.tag}, but no {kept} of task {asked.task_id} waits on it: it was "
        "kept in memory, which does not outlive a restart. Keep it beside a database task "
        f"store, e.g. {keep}"
    )
