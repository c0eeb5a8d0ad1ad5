"""The A2A TCK's system-under-test contract, as a scenario of the mock agent.

The official A2A TCK (a2aproject/a2a-tck, branch 1.0-dev) drives its system under test
in band: the ``messageId`` of a message says what the agent does with it (its
``docs/SUT_REQUIREMENTS.md`` and ``scenarios/*.feature``). A message whose id starts
with ``tck-`` or ``test-resubscribe-message-id`` starts (or continues) a task of the
``tck`` scenario; every other message keeps the mock agent's own scenarios.

======================================  =============================================
messageId prefix                        what the task does
======================================  =============================================
``tck-complete-task``                   completes with the message "Hello from TCK"
``tck-artifact-text|file|file-url|data`` completes with one artifact of that kind
``tck-message-response``                no task: a direct Message reply
``tck-input-required``                  INPUT_REQUIRED (plain text, no envelope)
``tck-reject-task``                     REJECTED with the message "rejected"
``tck-stream-001|003|ordering-001``,    WORKING, a text artifact, COMPLETED
``tck-stream-artifact-text``
``tck-stream-002``                      COMPLETED
``tck-stream-artifact-file``            WORKING, a file artifact, COMPLETED
``tck-stream-artifact-chunked``         WORKING, "chunk-1 " then "chunk-2" (last chunk)
                                        of one artifact, COMPLETED
``test-resubscribe-message-id``         WORKING, then COMPLETED after 2 x
                                        ``TCK_STREAMING_TIMEOUT`` (env, default 2 s)
any other ``tck-`` prefix               completes (the contract's "normal processing")
======================================  =============================================

A later message on a waiting ``tck`` task acts by its own prefix in the same way (the
TCK completes a multi-turn task with ``tck-complete-task``); one without a TCK prefix is
kept in the history and changes nothing.
"""

from __future__ import annotations

import asyncio
import copy
import os
import uuid
from abc import ABC, abstractmethod
from typing import Any

from hitl_nb.a2a import (
    A2AVersion,
    Artifact,
    Message,
    Part,
    PushConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
)
from hitl_nb.mock_agent._records import TaskRecord
from hitl_nb.mock_agent._script import now_iso

__all__ = ["TCK_PREFIXES", "TCK_SCENARIO", "TckSteps", "is_tck", "streaming_timeout"]

#: The scenario name of tasks started by a TCK message.
TCK_SCENARIO = "tck"
#: messageId prefixes of the TCK's contract.
TCK_PREFIXES = ("tck-", "test-resubscribe-message-id")
_RESUBSCRIBE = "test-resubscribe-message-id"
_TEXT_ARTIFACT = {
    "tck-stream-001": "Stream hello from TCK",
    "tck-stream-003": "Stream task lifecycle",
    "tck-stream-ordering-001": "Ordered output",
    "tck-stream-artifact-text": "Streamed text content",
}


def is_tck(message: Message) -> bool:
    """Does this message's id follow the TCK's contract?"""
    return message.message_id.startswith(TCK_PREFIXES)


def streaming_timeout() -> float:
    """``TCK_STREAMING_TIMEOUT`` (seconds; the TCK's default 2.0), bounded to [0.1, 60]."""
    try:
        value = float(os.environ.get("TCK_STREAMING_TIMEOUT", "2.0"))
    except ValueError:
        value = 2.0
    return min(max(value, 0.1), 60.0) if value == value else 2.0  # NaN -> default


def _file_part() -> Part:
    return Part(raw=b"TCK file content\n", filename="output.txt", media_type="text/plain")


class TckSteps(ABC):
    """The TCK scenario side of the agent core (a mixin, like ``ScriptSteps``)."""

    tasks: dict[str, TaskRecord]
    _loop: asyncio.AbstractEventLoop | None

    @abstractmethod
    def _commit(self, rec: TaskRecord) -> None:
        """Persist ``rec``'s change."""

    @abstractmethod
    def _emit_status(
        self,
        rec: TaskRecord,
        state: TaskState,
        message: Message | str | None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Move the task to ``state`` (an outbox event)."""

    @abstractmethod
    def _wake(self, rec: TaskRecord) -> None:
        """Release blocking sends when nothing is pending."""

    @abstractmethod
    def _add_push(
        self, rec: TaskRecord, config: PushConfig, version: A2AVersion, activated: bool
    ) -> object:
        """Give the task a push-notification webhook (checked; raises when refused)."""

    def _tck_start(
        self, message: Message, push: tuple[PushConfig, A2AVersion, bool] | None = None
    ) -> tuple[TaskRecord | Message, int]:
        """A new task (or, for ``tck-message-response``, a direct reply) for ``message``;
        ``push``: a webhook from the request's configuration (the TCK sends one)."""
        context_id = message.context_id or str(uuid.uuid4())
        if message.message_id.startswith("tck-message-response"):
            reply = Message(
                str(uuid.uuid4()), Role.AGENT, [Part(text="Direct message response")],
                context_id=context_id,
            )  # fmt: skip
            return reply, 0
        task_id = str(uuid.uuid4())
        first = copy.copy(message)
        first.task_id, first.context_id = task_id, context_id
        task = Task(
            task_id,
            context_id,
            TaskStatus(TaskState.SUBMITTED, timestamp=now_iso()),
            history=[first],
            metadata={"scenario": TCK_SCENARIO},
        )
        rec = TaskRecord(task, TCK_SCENARIO, {}, [])
        if push is not None:
            self._add_push(rec, *push)  # checked before the task exists: nothing to undo
        self.tasks[task_id] = rec
        rec.outbox.append(copy.deepcopy(task))
        self._tck_act(rec, message.message_id)
        self._commit(rec)
        return rec, 0

    def _tck_follow_up(self, rec: TaskRecord, message: Message) -> tuple[TaskRecord, int]:
        """A later message on a waiting ``tck`` task: kept, then acted on by its prefix."""
        start = rec.outbox.last_id
        stored = copy.copy(message)
        stored.context_id = rec.task.context_id
        rec.task.history.append(stored)
        if is_tck(message) and not message.message_id.startswith("tck-message-response"):
            self._tck_act(rec, message.message_id)
        self._commit(rec)
        return rec, start

    def _tck_act(self, rec: TaskRecord, message_id: str) -> None:
        """Emit the events the contract gives ``message_id``'s prefix."""
        if message_id.startswith(_RESUBSCRIBE):
            self._emit_status(rec, TaskState.WORKING, None)
            if self._loop is not None:
                rec.pending += 1
                self._loop.call_later(2 * streaming_timeout(), self._tck_finish_late, rec)
            return
        if message_id.startswith("tck-input-required"):
            self._emit_status(rec, TaskState.INPUT_REQUIRED, "Input required by the TCK.")
            return
        if message_id.startswith("tck-reject-task"):
            self._emit_status(rec, TaskState.REJECTED, "rejected")
            return
        if message_id.startswith("tck-stream-002"):
            self._emit_status(rec, TaskState.COMPLETED, None)
            return
        for prefix, text in _TEXT_ARTIFACT.items():
            if message_id.startswith(prefix):
                self._emit_status(rec, TaskState.WORKING, None)
                self._artifact(rec, [Part(text=text)])
                self._emit_status(rec, TaskState.COMPLETED, None)
                return
        if message_id.startswith("tck-stream-artifact-chunked"):
            self._emit_status(rec, TaskState.WORKING, None)
            artifact_id = str(uuid.uuid4())
            self._artifact(rec, [Part(text="chunk-1 ")], artifact_id=artifact_id)
            self._artifact(rec, [Part(text="chunk-2")], artifact_id=artifact_id, append=True)
            self._emit_status(rec, TaskState.COMPLETED, None)
            return
        if message_id.startswith("tck-stream-artifact-file"):
            self._emit_status(rec, TaskState.WORKING, None)
            self._artifact(rec, [_file_part()])
            self._emit_status(rec, TaskState.COMPLETED, None)
            return
        part = self._artifact_part(message_id)
        if part is not None:
            self._artifact(rec, [part])
            self._emit_status(rec, TaskState.COMPLETED, None)
            return
        text = "Hello from TCK" if message_id.startswith("tck-complete-task") else "Done."
        self._emit_status(rec, TaskState.COMPLETED, text)

    @staticmethod
    def _artifact_part(message_id: str) -> Part | None:
        if message_id.startswith("tck-artifact-text"):
            return Part(text="Generated text content")
        if message_id.startswith("tck-artifact-file-url"):
            return Part(
                url="https://example.com/output.txt", filename="output.txt",
                media_type="text/plain",
            )  # fmt: skip
        if message_id.startswith("tck-artifact-file"):
            return _file_part()
        if message_id.startswith("tck-artifact-data"):
            return Part(data={"key": "value", "count": 42})
        return None

    def _artifact(
        self,
        rec: TaskRecord,
        parts: list[Part],
        *,
        artifact_id: str | None = None,
        append: bool = False,
    ) -> None:
        """Add an artifact (or, with ``append``, a last chunk of one) and its event."""
        artifact = Artifact(artifact_id or str(uuid.uuid4()), parts, name="output")
        stored = next(
            (a for a in rec.task.artifacts if a.artifact_id == artifact.artifact_id), None
        )
        if stored is None:
            rec.task.artifacts.append(copy.deepcopy(artifact))
        else:
            stored.parts.extend(copy.deepcopy(parts))
        chunked = artifact_id is not None
        rec.outbox.append(
            TaskArtifactUpdateEvent(
                rec.id, rec.task.context_id, artifact, append=append,
                last_chunk=append or not chunked,
            )
        )  # fmt: skip

    def _tck_finish_late(self, rec: TaskRecord) -> None:
        rec.pending -= 1
        try:
            if not rec.task.status.state.is_terminal:
                self._emit_status(rec, TaskState.COMPLETED, None)
                self._commit(rec)
        finally:
            self._wake(rec)
