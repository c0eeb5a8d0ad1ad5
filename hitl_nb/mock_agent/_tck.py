"""The A2A TCK's system-under-test contract, as a part of the mock agent.

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

:class:`TckContract` plans and starts such tasks, answers their follow-ups and
produces their events; it sees the task book as :class:`Book`.
"""

from __future__ import annotations

import os
import uuid
from typing import Protocol

from hitl_nb.a2a import Artifact, Message, Part, Role, TaskState
from hitl_nb.mock_agent._records import Plan, TaskRecord
from hitl_nb.mock_agent._task_book import Commits, Defers, Emits, Keeps

__all__ = ["TCK_PREFIXES", "TCK_SCENARIO", "Book", "TckContract", "is_tck", "streaming_timeout"]

#: The scenario name of tasks started by a TCK message.
TCK_SCENARIO = "tck"
#: messageId prefixes of the TCK's contract.
TCK_PREFIXES = ("tck-", "test-resubscribe-message-id")
_RESUBSCRIBE = "test-resubscribe-message-id"
_DIRECT_REPLY = "tck-message-response"
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


def _artifact_part(message_id: str) -> Part | None:
    if message_id.startswith("tck-artifact-text"):
        return Part(text="Generated text content")
    if message_id.startswith("tck-artifact-file-url"):
        return Part(
            url="https://example.com/output.txt", filename="output.txt", media_type="text/plain"
        )
    if message_id.startswith("tck-artifact-file"):
        return _file_part()
    if message_id.startswith("tck-artifact-data"):
        return Part(data={"key": "value", "count": 42})
    return None


class Book(Keeps, Emits, Commits, Defers, Protocol):
    """What the TCK contract does with the task book: keep follow-ups, move tasks, store
    their changes, finish one later."""


class TckContract:
    """The tasks the TCK's ``messageId`` prefixes ask for (the table above)."""

    def __init__(self, book: Book) -> None:
        self.book = book

    def direct_reply(self, message: Message) -> Message | None:
        """For ``tck-message-response``: the Message that answers it (no task); else None."""
        if not message.message_id.startswith(_DIRECT_REPLY):
            return None
        context_id = message.context_id or str(uuid.uuid4())
        reply = [Part(text="Direct message response")]
        return Message(str(uuid.uuid4()), Role.AGENT, reply, context_id=context_id)

    def plan(self, message: Message) -> Plan:
        """A ``tck`` task: no options, no prompts."""
        return Plan(TCK_SCENARIO, {}, [])

    def begin(self, rec: TaskRecord, message: Message) -> None:
        """Start the task as the first message's prefix says."""
        self._act(rec, message.message_id)

    def follow_up(self, rec: TaskRecord, message: Message) -> tuple[TaskRecord, int]:
        """A later message on a waiting ``tck`` task: kept, then acted on by its prefix;
        returns the task and the outbox id before the change."""
        start = rec.outbox.last_id
        self.book.keep(rec, message)
        if is_tck(message) and not message.message_id.startswith(_DIRECT_REPLY):
            self._act(rec, message.message_id)
        self.book.commit(rec)
        return rec, start

    def _act(self, rec: TaskRecord, message_id: str) -> None:
        """Emit the events the contract gives ``message_id``'s prefix."""
        emit = self.book.emit_status
        if message_id.startswith(_RESUBSCRIBE):
            emit(rec, TaskState.WORKING, None)
            self.book.later(rec, self._finish_late, 2 * streaming_timeout())
            return
        if message_id.startswith("tck-input-required"):
            emit(rec, TaskState.INPUT_REQUIRED, "Input required by the TCK.")
            return
        if message_id.startswith("tck-reject-task"):
            emit(rec, TaskState.REJECTED, "rejected")
            return
        if message_id.startswith("tck-stream-002"):
            emit(rec, TaskState.COMPLETED, None)
            return
        for prefix, text in _TEXT_ARTIFACT.items():
            if message_id.startswith(prefix):
                emit(rec, TaskState.WORKING, None)
                self._artifact(rec, [Part(text=text)])
                emit(rec, TaskState.COMPLETED, None)
                return
        if message_id.startswith("tck-stream-artifact-chunked"):
            emit(rec, TaskState.WORKING, None)
            artifact_id = str(uuid.uuid4())
            self._artifact(rec, [Part(text="chunk-1 ")], artifact_id=artifact_id)
            self._artifact(rec, [Part(text="chunk-2")], artifact_id=artifact_id, append=True)
            emit(rec, TaskState.COMPLETED, None)
            return
        if message_id.startswith("tck-stream-artifact-file"):
            emit(rec, TaskState.WORKING, None)
            self._artifact(rec, [_file_part()])
            emit(rec, TaskState.COMPLETED, None)
            return
        part = _artifact_part(message_id)
        if part is not None:
            self._artifact(rec, [part])
            emit(rec, TaskState.COMPLETED, None)
            return
        text = "Hello from TCK" if message_id.startswith("tck-complete-task") else "Done."
        emit(rec, TaskState.COMPLETED, text)

    def _artifact(
        self,
        rec: TaskRecord,
        parts: list[Part],
        *,
        artifact_id: str | None = None,
        append: bool = False,
    ) -> None:
        """An ``output`` artifact; with ``artifact_id``, a chunk of one (``append``: the
        last chunk)."""
        artifact = Artifact(artifact_id or str(uuid.uuid4()), parts, name="output")
        chunked = artifact_id is not None
        self.book.add_artifact(rec, artifact, append=append, last_chunk=append or not chunked)

    def _finish_late(self, rec: TaskRecord) -> None:
        if not rec.task.status.state.is_terminal:
            self.book.emit_status(rec, TaskState.COMPLETED, None)
