"""The task book (hitl_nb.mock_agent._task_book): the one place a task is created, each
change stored before anyone hears of it, later steps that blocking sends wait for."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from hitl_nb.a2a import (
    Artifact,
    Message,
    Part,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
)
from hitl_nb.errors import TaskNotFound
from hitl_nb.mock_agent import MemoryTaskStore, SQLiteTaskStore
from hitl_nb.mock_agent._records import Plan, TaskRecord
from hitl_nb.mock_agent._task_book import TaskBook

PLAN = Plan("approval", {"n": 1}, [])


def hello(context_id: str | None = None) -> Message:
    return Message(str(uuid.uuid4()), Role.USER, [Part(text="hi")], context_id=context_id)


def reload(path: Path) -> list[TaskRecord]:
    store = SQLiteTaskStore(path)
    book = TaskBook(store)
    book.load(lambda name, options: [])
    store.close()
    return list(book)


def test_open_makes_a_submitted_task_and_stores_it_when_the_block_ends(tmp_path: Path) -> None:
    book = TaskBook(SQLiteTaskStore(tmp_path / "b.db"))
    heard: list[list[tuple[int, StreamEvent]]] = []
    book.watch(lambda rec, events: heard.append(events))
    first = hello("ctx-1")
    with book.open(first, PLAN) as rec:
        assert heard == []  # nothing stored, nobody told, until the block ends
        assert rec.task.status.state is TaskState.SUBMITTED
        assert rec.task.context_id == "ctx-1" and rec.task.metadata == {"scenario": "approval"}
        assert rec.task.history[0].message_id == first.message_id
        assert rec.task.history[0].task_id == rec.id and first.task_id is None  # a copy
        book.emit_status(rec, TaskState.WORKING, "Thinking.")
    assert [type(e).__name__ for _, e in heard[0]] == ["Task", "TaskStatusUpdateEvent"]
    assert book.get(rec.id) is rec
    book.close()
    (stored,) = reload(tmp_path / "b.db")
    assert stored.id == rec.id and stored.options == {"n": 1}
    assert stored.task.status.state is TaskState.WORKING
    assert stored.task.status.message is not None
    assert stored.task.status.message.text() == "Thinking."
    assert stored.outbox.last_id == 2


def test_a_task_whose_start_raises_is_forgotten(tmp_path: Path) -> None:
    book = TaskBook(SQLiteTaskStore(tmp_path / "b.db"))
    heard: list[object] = []
    book.watch(lambda rec, events: heard.append(events))
    with pytest.raises(RuntimeError, match="refused"):
        with book.open(hello(), PLAN) as rec:
            book.emit_status(rec, TaskState.WORKING, None)
            raise RuntimeError("refused")
    assert book.tasks == {} and heard == []
    with pytest.raises(TaskNotFound):
        book.get(rec.id)
    book.close()
    assert reload(tmp_path / "b.db") == []


def test_a_context_is_made_when_the_message_has_none() -> None:
    book = TaskBook(MemoryTaskStore())
    with book.open(hello(), PLAN) as a, book.open(hello(), PLAN) as b:
        pass
    assert a.task.context_id and b.task.context_id and a.task.context_id != b.task.context_id


def test_watchers_hear_each_event_once() -> None:
    book = TaskBook(MemoryTaskStore())
    heard: list[int] = []
    book.watch(lambda rec, events: heard.extend(seq for seq, _ in events))
    with book.open(hello(), PLAN) as rec:
        pass
    book.emit_status(rec, TaskState.WORKING, None)
    book.emit_status(rec, TaskState.INPUT_REQUIRED, "Question?")
    book.commit(rec)
    book.commit(rec)  # nothing new: nothing to hear
    assert heard == [1, 2, 3]


def test_keep_puts_the_message_in_the_tasks_context() -> None:
    book = TaskBook(MemoryTaskStore())
    with book.open(hello("ctx"), PLAN) as rec:
        pass
    note = hello()
    book.keep(rec, note)
    assert rec.task.history[-1].message_id == note.message_id
    assert rec.task.history[-1].context_id == "ctx" and note.context_id is None
    assert rec.outbox.last_id == 1  # history only: no event


def test_a_later_chunk_extends_the_artifact_it_belongs_to() -> None:
    book = TaskBook(MemoryTaskStore())
    with book.open(hello(), PLAN) as rec:
        pass
    book.add_artifact(rec, Artifact("a1", [Part(text="one ")]), last_chunk=False)
    book.add_artifact(rec, Artifact("a1", [Part(text="two")]), append=True)
    book.add_artifact(rec, Artifact("a2", [Part(data={"k": 1})]))
    assert [a.artifact_id for a in rec.task.artifacts] == ["a1", "a2"]
    assert [p.text for p in rec.task.artifacts[0].parts] == ["one ", "two"]
    events = [e for _, e in rec.outbox.after(1) if isinstance(e, TaskArtifactUpdateEvent)]
    chunks = [(e.append, e.last_chunk) for e in events]
    assert chunks == [(False, False), (True, True), (False, True)]


def test_settled_waits_for_later_steps_and_the_steps_they_schedule() -> None:
    async def run() -> list[str]:
        book = TaskBook(MemoryTaskStore())
        assert book.attach(asyncio.get_running_loop())
        assert not book.attach(asyncio.get_running_loop())  # already bound
        with book.open(hello(), PLAN) as rec:
            pass
        done: list[str] = []

        def second(rec: TaskRecord) -> None:
            done.append("second")
            book.emit_status(rec, TaskState.COMPLETED, None)

        def first(rec: TaskRecord) -> None:
            done.append("first")
            book.later(rec, second)  # the next loop turn

        book.later(rec, first, 0.05)
        assert rec.pending == 1
        await book.settled(rec)
        assert rec.pending == 0 and rec.committed == rec.outbox.last_id == 2
        assert rec.task.status.state is TaskState.COMPLETED
        return done

    assert asyncio.run(run()) == ["first", "second"]


def test_nobody_waits_for_an_alarm() -> None:
    async def run() -> None:
        book = TaskBook(MemoryTaskStore())
        book.attach(asyncio.get_running_loop())
        with book.open(hello(), PLAN) as rec:
            pass
        rang = asyncio.Event()
        handle = book.alarm(60, rang.set)
        await asyncio.wait_for(book.settled(rec), 5)  # returns at once
        handle.cancel()
        book.alarm(-1, rang.set)  # a time already past: at once
        await asyncio.wait_for(rang.wait(), 5)

    asyncio.run(run())


def test_close_ends_streams_and_deadlines() -> None:
    async def run() -> None:
        book = TaskBook(MemoryTaskStore())
        book.attach(asyncio.get_running_loop())
        with book.open(hello(), PLAN) as rec:
            pass
        listener = rec.outbox.listen()
        rec.timer = book.alarm(60, lambda: None)
        book.close()
        assert rec.timer.cancelled()
        assert await listener.get(5) == (0, None)  # CLOSED: the stream ends

    asyncio.run(run())


def test_the_book_needs_its_loop_before_it_schedules() -> None:
    book = TaskBook(MemoryTaskStore())
    with book.open(hello(), PLAN) as rec:
        pass
    with pytest.raises(RuntimeError, match="not attached"):
        book.later(rec, lambda rec: None)


def test_select_is_newest_status_first_and_filters() -> None:
    book = TaskBook(MemoryTaskStore())
    recs = []
    for i, ctx in enumerate(("a", "b", "a")):
        with book.open(hello(ctx), PLAN) as rec:
            pass
        rec.task.status.timestamp = f"2026-01-01T00:00:0{i}.000Z"
        recs.append(rec)
    book.emit_status(recs[0], TaskState.WORKING, None)  # now the newest status
    assert [r.id for r in book.select()] == [recs[0].id, recs[2].id, recs[1].id]
    assert [r.id for r in book.select(context_id="a")] == [recs[0].id, recs[2].id]
    assert [r.id for r in book.select(state=TaskState.SUBMITTED)] == [recs[2].id, recs[1].id]
    assert isinstance(recs[0].outbox.after(0)[0][1], Task)
