"""The task book: every task of one mock agent, and the one way to change them.

The parts of the agent (:mod:`~hitl_nb.mock_agent._script`,
:mod:`~hitl_nb.mock_agent._acceptance`, :mod:`~hitl_nb.mock_agent._push_configs`,
:mod:`~hitl_nb.mock_agent._tck`) never touch the store, the loop or another part's
bookkeeping: each is given this book and sees it through a small ``Book`` protocol of
its own, made of the roles below (:class:`Finds`, :class:`Keeps`, :class:`Emits`,
:class:`Commits`, :class:`Defers`, :class:`Alarms`), as jsonschema's keyword functions
see their validator. The book

- opens a task (:meth:`TaskBook.open`, the one place a task is created) and finds one
  (:meth:`TaskBook.get`, :meth:`TaskBook.select`);
- moves it (:meth:`~TaskBook.emit_status`, :meth:`~TaskBook.signal`,
  :meth:`~TaskBook.add_artifact`: each change an event in the task's outbox) and keeps
  a client's message in its history (:meth:`~TaskBook.keep`);
- runs its delayed transitions: :meth:`~TaskBook.later` (blocking sends wait for them,
  :meth:`~TaskBook.settled`) and :meth:`~TaskBook.alarm` (a deadline, which nobody
  waits for);
- writes each change through the store in one transaction (:meth:`~TaskBook.commit`),
  then hands the new events to its watchers (push delivery): a webhook hears of a
  change once it is stored, never before.

Everything runs on the agent's loop and never awaits between reading and changing
state, so two answers racing for one prompt are decided one after the other
(§Acceptance and rejection).
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any, Protocol

from hitl_nb.a2a import (
    CODEC_V1,
    Artifact,
    Message,
    Part,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from hitl_nb.errors import TaskNotFound
from hitl_nb.mock_agent._outbox import Outbox
from hitl_nb.mock_agent._records import Plan, TaskRecord, record_from_json, record_to_json
from hitl_nb.mock_agent._scenarios import Step
from hitl_nb.mock_agent._store import TaskStore
from hitl_nb.spec import parse_rfc3339

__all__ = [
    "Alarms",
    "CommitWatcher",
    "Commits",
    "Defers",
    "Emits",
    "Finds",
    "Keeps",
    "StepsOf",
    "TaskBook",
    "now_iso",
]

#: Told of every commit: the record and the events the commit stored.
CommitWatcher = Callable[[TaskRecord, list[tuple[int, StreamEvent]]], None]
#: The steps of a stored task, from its scenario's name and options.
StepsOf = Callable[[str, dict[str, Any]], list[Step]]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def now_iso() -> str:
    """The current UTC time as RFC 3339 with milliseconds and ``Z``."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _status_time(rec: TaskRecord) -> datetime:
    stamp = rec.task.status.timestamp
    return (parse_rfc3339(stamp) if stamp else None) or _EPOCH


# -- the roles the book plays for the parts -----------------------------------------------
#
# Each part names the roles it needs (``class Book(Emits, Commits, Protocol)`` in its own
# module); every operation is declared once, here, and implemented once, by TaskBook.


class Finds(Protocol):
    """Finds a task."""

    def get(self, task_id: str) -> TaskRecord:
        """The task record, or raise TaskNotFound."""


class Keeps(Protocol):
    """Keeps a client's messages."""

    def keep(self, rec: TaskRecord, message: Message) -> None:
        """Add ``message`` to the task's history."""


class Emits(Protocol):
    """Moves a task: each change an event in its outbox."""

    def emit_status(
        self,
        rec: TaskRecord,
        state: TaskState,
        message: Message | str | None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Move the task to ``state``."""

    def signal(self, rec: TaskRecord, metadata: dict[str, Any]) -> None:
        """An event with ``metadata`` on the task's unchanged status."""

    def add_artifact(
        self, rec: TaskRecord, artifact: Artifact, *, append: bool = False, last_chunk: bool = True
    ) -> None:
        """Add an artifact (or a later chunk of one) and its event."""


class Commits(Protocol):
    """Stores a task's change."""

    def commit(self, rec: TaskRecord) -> None:
        """Store the change in one transaction, then tell the watchers."""


class Defers(Protocol):
    """Runs a task's next step later; blocking sends wait for it."""

    def later(
        self, rec: TaskRecord, step: Callable[[TaskRecord], None], delay: float = 0.0
    ) -> None:
        """Run ``step(rec)`` ``delay`` seconds from now, then commit."""


class Alarms(Protocol):
    """Calls back at a time nobody waits for (a deadline)."""

    def alarm(self, delay: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
        """Call ``callback`` ``delay`` seconds from now."""


# -- the book --------------------------------------------------------------------------


class TaskBook:
    """The tasks of one mock agent, their store and their loop. Use from that loop only."""

    def __init__(self, store: TaskStore) -> None:
        self.store = store
        self.tasks: dict[str, TaskRecord] = {}
        self._watchers: list[CommitWatcher] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- start-up and shutdown ------------------------------------------------------------

    def load(self, steps_of: StepsOf) -> set[str]:
        """Read every stored task back (``steps_of`` rebuilds its steps); returns every
        prompt id the store has seen issued (spec S-5: never to be issued again)."""
        state = self.store.load()
        for blob in state.tasks:
            events = [
                (seq, CODEC_V1.decode_stream_response(body))
                for seq, body in state.events.get(blob["id"], [])
            ]
            steps = steps_of(blob["scenario"], dict(blob.get("options") or {}))
            rec = record_from_json(blob, Outbox(events), steps)
            self.tasks[rec.id] = rec
        return set(state.prompts)

    def watch(self, watcher: CommitWatcher) -> None:
        """Tell ``watcher`` of every commit from now on."""
        self._watchers.append(watcher)

    def attach(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Bind to the loop that serves requests; True when it was not bound to it yet."""
        if self._loop is loop:
            return False
        self._loop = loop
        return True

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The serving loop (see :meth:`attach`)."""
        if self._loop is None:
            raise RuntimeError("the task book is not attached to a loop yet")
        return self._loop

    def close(self) -> None:
        """End every subscription, deadline and blocking wait, and close the store."""
        for rec in self.tasks.values():
            rec.outbox.close()
            if rec.timer is not None:
                rec.timer.cancel()
            for fut in rec.waiters:
                if not fut.done():
                    fut.set_result(None)
        self.store.close()

    # -- finding tasks --------------------------------------------------------------------

    def __iter__(self) -> Iterator[TaskRecord]:
        return iter(list(self.tasks.values()))

    def get(self, task_id: str) -> TaskRecord:
        """The task record, or raise TaskNotFound (-32001)."""
        rec = self.tasks.get(task_id)
        if rec is None:
            raise TaskNotFound(f"task {task_id!r} not found")
        return rec

    def select(
        self,
        *,
        context_id: str | None = None,
        state: TaskState | None = None,
        updated_after: datetime | None = None,
    ) -> list[TaskRecord]:
        """Tasks by status timestamp, newest first (A2A §3.1.4), filtered."""
        chosen = [
            rec
            for rec in reversed(self.tasks.values())
            if (context_id is None or rec.task.context_id == context_id)
            and (state is None or rec.task.status.state is state)
            and (updated_after is None or _status_time(rec) > updated_after)
        ]
        chosen.sort(key=_status_time, reverse=True)  # stable: ties stay newest first
        return chosen

    # -- changing tasks -------------------------------------------------------------------

    @contextmanager
    def open(self, message: Message, plan: Plan) -> Iterator[TaskRecord]:
        """A new task for the client's first ``message``, for the ``with`` block to start.

        The task is SUBMITTED, the message first in its history, the Task first in its
        outbox. When the block ends the task is committed; when it raises (a refused
        webhook, a scenario that breaks while starting) the task is forgotten: nothing
        half-made is left behind.
        """
        task_id, context_id = str(uuid.uuid4()), message.context_id or str(uuid.uuid4())
        first = copy.copy(message)
        first.task_id, first.context_id = task_id, context_id
        task = Task(
            task_id,
            context_id,
            TaskStatus(TaskState.SUBMITTED, timestamp=now_iso()),
            history=[first],
            metadata={"scenario": plan.scenario},
        )
        rec = TaskRecord(task, plan.scenario, plan.options, plan.steps)
        self.tasks[task_id] = rec
        rec.outbox.append(copy.deepcopy(task))
        try:
            yield rec
        except BaseException:
            del self.tasks[task_id]
            if rec.timer is not None:
                rec.timer.cancel()
            raise
        self.commit(rec)

    def keep(self, rec: TaskRecord, message: Message) -> None:
        """Add a client's ``message`` to the task's history (in the task's context)."""
        stored = copy.copy(message)
        stored.context_id = rec.task.context_id
        rec.task.history.append(stored)

    def emit_status(
        self,
        rec: TaskRecord,
        state: TaskState,
        message: Message | str | None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Move the task to ``state``; a ``message`` (text: an agent message) goes into
        the status and the history; ``metadata`` rides on the status-update event."""
        if isinstance(message, str):
            message = Message(
                str(uuid.uuid4()),
                Role.AGENT,
                [Part(text=message)],
                task_id=rec.id,
                context_id=rec.task.context_id,
            )
        if message is not None:
            rec.task.history.append(message)
        rec.task.status = TaskStatus(state, message, now_iso())
        event = TaskStatusUpdateEvent(
            rec.id, rec.task.context_id, copy.copy(rec.task.status), metadata
        )
        rec.outbox.append(event)

    def signal(self, rec: TaskRecord, metadata: dict[str, Any]) -> None:
        """A status-update event carrying ``metadata`` on the task's unchanged status."""
        status = copy.copy(rec.task.status)
        rec.outbox.append(TaskStatusUpdateEvent(rec.id, rec.task.context_id, status, metadata))

    def add_artifact(
        self, rec: TaskRecord, artifact: Artifact, *, append: bool = False, last_chunk: bool = True
    ) -> None:
        """Add ``artifact`` to the task (its parts to the artifact of the same id, when
        the task has one: a later chunk) and its update event."""
        stored = next(
            (a for a in rec.task.artifacts if a.artifact_id == artifact.artifact_id), None
        )
        if stored is None:
            rec.task.artifacts.append(copy.deepcopy(artifact))
        else:
            stored.parts.extend(copy.deepcopy(artifact.parts))
        rec.outbox.append(
            TaskArtifactUpdateEvent(
                rec.id, rec.task.context_id, artifact, append=append, last_chunk=last_chunk
            )
        )

    def commit(self, rec: TaskRecord) -> None:
        """Store the task's change in one transaction (its record, the new outbox events,
        the prompt-id rows), then tell the watchers."""
        new = rec.outbox.after(rec.committed)
        if self.store.durable:
            events = [(seq, CODEC_V1.encode_stream_response(ev)) for seq, ev in new]
            self.store.commit(record_to_json(rec), events, rec.prompt_rows)
        rec.committed = rec.outbox.last_id
        rec.prompt_rows.clear()
        # Webhooks hear of a change once it is stored, never before.
        for watcher in self._watchers:
            watcher(rec, new)

    # -- later transitions ----------------------------------------------------------------

    def later(
        self, rec: TaskRecord, step: Callable[[TaskRecord], None], delay: float = 0.0
    ) -> None:
        """Run ``step(rec)`` ``delay`` seconds from now (0: on the next loop turn), then
        commit. A blocking send on the task waits for it (:meth:`settled`)."""
        rec.pending += 1
        if delay > 0:
            self.loop.call_later(delay, self._run, rec, step)
        else:
            self.loop.call_soon(self._run, rec, step)

    def _run(self, rec: TaskRecord, step: Callable[[TaskRecord], None]) -> None:
        rec.pending -= 1
        try:
            step(rec)
            self.commit(rec)
        finally:
            self._wake(rec)

    def alarm(self, delay: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
        """Call ``callback`` ``delay`` seconds from now (at once when past); nobody waits
        for it, and cancelling the handle stops it."""
        return self.loop.call_later(max(delay, 0.0), callback)

    async def settled(self, rec: TaskRecord) -> None:
        """Wait until no transition of the task is pending (:meth:`later`)."""
        while rec.pending:
            fut: asyncio.Future[None] = self.loop.create_future()
            rec.waiters.append(fut)
            await fut

    def _wake(self, rec: TaskRecord) -> None:
        if not rec.pending:
            for fut in rec.waiters:
                if not fut.done():
                    fut.set_result(None)
            rec.waiters.clear()
