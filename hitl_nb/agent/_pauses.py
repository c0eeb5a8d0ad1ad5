"""Where a framework's run that waits on people is kept between its requests: the run
as the framework writes it, the calls it waits on, the answers given so far.

The task store keeps the prompt (the A2A side); a :class:`PauseStore` keeps the
framework's side, by task id, so the run resumes after the process restarted (Pydantic
AI's message history, the OpenAI Agents SDK's ``RunState``). :class:`MemoryPauses` lives
as long as the process; :class:`SqlitePauses` (one SQLite file, the standard library's
driver) outlives a crash beside the SDK's ``DatabaseTaskStore``. Anything with the three
coroutines fits (a table of your own database, say).

The run is kept as the framework writes it (text), the answers as JSON (whole numbers of
any size stay exact).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ._tool_calls import Pending

__all__ = ["MemoryPauses", "PauseStore", "Paused", "SqlitePauses"]


@dataclass
class Paused:
    """A run stopped on tool calls: the run as its framework wrote it (Pydantic AI's
    message history, a ``RunState``, as JSON text), the calls it waits on, in the order
    they are asked, and the answers given so far (by call id)."""

    run: str
    pending: list[Pending]
    answers: dict[str, Any] = field(default_factory=dict)

    def next_call(self) -> Pending | None:
        """The first call not answered yet (None: all are)."""
        return next((p for p in self.pending if p.tool_call_id not in self.answers), None)

    def to_json(self) -> str:
        """As stored."""
        return json.dumps(
            {
                "run": self.run,
                "pending": [p.to_json() for p in self.pending],
                "answers": self.answers,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str) -> Paused:
        """As :meth:`to_json` wrote it."""
        raw = json.loads(text)
        return cls(
            raw["run"],
            [Pending.from_json(p) for p in raw["pending"]],
            dict(raw["answers"]),
        )


class PauseStore(Protocol):
    """Keeps each task's :class:`Paused` run."""

    async def get(self, task_id: str) -> Paused | None:
        """The task's paused run, or None."""

    async def put(self, task_id: str, paused: Paused) -> None:
        """Keep (or replace) the task's paused run; done when it is durable."""

    async def delete(self, task_id: str) -> None:
        """The task's run ended: forget it."""


class MemoryPauses:
    """Paused runs in memory: they do not outlive the process."""

    def __init__(self) -> None:
        self._kept: dict[str, str] = {}

    async def get(self, task_id: str) -> Paused | None:
        """The task's paused run, or None."""
        text = self._kept.get(task_id)
        return None if text is None else Paused.from_json(text)

    async def put(self, task_id: str, paused: Paused) -> None:
        """Keep the task's paused run (a copy: later changes to ``paused`` are not)."""
        self._kept[task_id] = paused.to_json()

    async def delete(self, task_id: str) -> None:
        """Forget the task's run."""
        self._kept.pop(task_id, None)


_TABLE = "CREATE TABLE IF NOT EXISTS hitl_pauses (task_id TEXT PRIMARY KEY, paused TEXT NOT NULL)"


class SqlitePauses:
    """Paused runs in a SQLite file: each ``put`` is committed before it returns, so a
    prompt emitted after it outlives a crash (``kill -9``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        db = self._connect()
        try:
            with db:  # a transaction; closing is apart (a connection's with does not close)
                db.execute(_TABLE)
        finally:
            db.close()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def _run(self, sql: str, *params: str) -> list[Any]:
        db = self._connect()
        try:
            with db:
                return db.execute(sql, params).fetchall()
        finally:
            db.close()

    async def get(self, task_id: str) -> Paused | None:
        """The task's paused run, or None."""
        rows = await asyncio.to_thread(
            self._run, "SELECT paused FROM hitl_pauses WHERE task_id = ?", task_id
        )
        return Paused.from_json(rows[0][0]) if rows else None

    async def put(self, task_id: str, paused: Paused) -> None:
        """Keep the task's paused run, committed."""
        await asyncio.to_thread(
            self._run,
            "INSERT OR REPLACE INTO hitl_pauses (task_id, paused) VALUES (?, ?)",
            task_id,
            paused.to_json(),
        )

    async def delete(self, task_id: str) -> None:
        """Forget the task's run."""
        await asyncio.to_thread(self._run, "DELETE FROM hitl_pauses WHERE task_id = ?", task_id)
