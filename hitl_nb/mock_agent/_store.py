"""Where the mock agent keeps its tasks: in memory, or in a SQLite file that survives crashes.

The agent's core holds everything in memory and writes each change through
:meth:`TaskStore.commit` in one transaction: the task (with its open prompt and answers),
the new outbox events, and the prompt ids it issued or closed. :class:`MemoryTaskStore`
keeps nothing beyond the process; :class:`SQLiteTaskStore` keeps it in a SQLite database
in WAL mode, so after ``kill -9`` and a restart on the same file an open prompt is
replayed identically, can be answered, and an answered prompt id is still refused (409),
and no prompt id is ever issued twice (spec S-5). :func:`open_task_store` picks one.

Not the responder gateway's store (:class:`hitl_nb.gateway.GatewayStore`, whose SQLite
and PostgreSQL stores a gateway opens with :func:`hitl_nb.gateway.open_store`): that one
is the orchestrator's side (registrations, prompts, ballots, forwards, the audit trail),
asynchronous, shared by replicas on one database and migrated across schema versions.
This one is an agent's own: whole task records as JSON and each task's event log (its
outbox, for replay), written synchronously from the agent's one loop thread, one agent
per file (an exclusive lock), a store to test against rather than to run a team on.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MemoryTaskStore", "SQLiteTaskStore", "TaskStore", "StoredState", "open_task_store"]

_SCHEMA_VERSION = "1"


@dataclass
class StoredState:
    """What a store held at start: task records in creation order, their events, prompts."""

    tasks: list[dict[str, Any]] = field(default_factory=list)
    events: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    prompts: dict[str, tuple[str, str]] = field(default_factory=dict)


class TaskStore(ABC):
    """The interface: ``load`` once at start, ``commit`` after every change, ``close``.

    An abstract base: every store implements all three.
    """

    #: True when state survives the process.
    durable: bool = False

    @abstractmethod
    def load(self) -> StoredState:
        """Everything stored so far."""

    @abstractmethod
    def commit(
        self,
        task: dict[str, Any],
        events: Sequence[tuple[int, dict[str, Any]]],
        prompts: Sequence[tuple[str, str, str]],
    ) -> None:
        """Write one change atomically.

        ``task`` is the task's whole record (with ``"id"``), ``events`` the outbox
        entries added since the last commit as ``(id, StreamResponse JSON)``, and
        ``prompts`` ``(prompt_id, task_id, status)`` rows to insert or update, status
        being ``"open"``, ``"answered"`` or ``"closed"``.
        """

    @abstractmethod
    def close(self) -> None:
        """Release the store's resources."""


class MemoryTaskStore(TaskStore):
    """Keeps nothing beyond the agent's own memory: state ends with the process."""

    def load(self) -> StoredState:
        """An empty state."""
        return StoredState()

    def commit(
        self,
        task: dict[str, Any],
        events: Sequence[tuple[int, dict[str, Any]]],
        prompts: Sequence[tuple[str, str, str]],
    ) -> None:
        """Nothing to write: the core's memory is the store."""

    def close(self) -> None:
        """Nothing to release."""


class SQLiteTaskStore(TaskStore):
    """State in a SQLite database (stdlib ``sqlite3``, WAL journal), chosen by a path.

    One agent at a time: the file stays locked (SQLite's exclusive locking mode) until
    :meth:`close`, and a second store on it is refused with a ValueError; two agents on
    one file would otherwise issue conflicting event ids and overwrite each other.
    """

    durable = True

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        # The agent's loop thread is the only user after construction; the lock guards
        # the hand-over and close().
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            self._db.execute("PRAGMA busy_timeout=2000")
            # Before WAL: exclusive mode keeps the WAL index in memory, no -shm file.
            self._db.execute("PRAGMA locking_mode=EXCLUSIVE")
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode loses nothing when the process dies (the WAL is written
            # before commit returns); only an OS crash could lose the last commits.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("BEGIN EXCLUSIVE")  # take the lock now, not at the first write
            self._db.execute("COMMIT")
            self._db.executescript(
                """
                CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, record TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS events (
                    task_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL,
                    PRIMARY KEY (task_id, seq));
                CREATE TABLE IF NOT EXISTS prompts (
                    prompt_id TEXT PRIMARY KEY, task_id TEXT NOT NULL, status TEXT NOT NULL);
                """
            )
            row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (_SCHEMA_VERSION,))
            elif row[0] != _SCHEMA_VERSION:
                raise ValueError(
                    f"{self.path}: store schema {row[0]!r}, this version reads {_SCHEMA_VERSION!r}"
                )
        except sqlite3.OperationalError as exc:
            self._db.close()
            if "locked" in str(exc):
                raise ValueError(
                    f"{self.path} is in use by another mock agent (one agent per store file)"
                ) from None
            raise ValueError(f"{self.path} is not a usable mock-agent store: {exc}") from None
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise ValueError(f"{self.path} is not a usable mock-agent store: {exc}") from None
        except BaseException:
            self._db.close()
            raise

    def load(self) -> StoredState:
        """Every task (in creation order), its events and every prompt id ever issued."""
        state = StoredState()
        with self._lock:
            for (record,) in self._db.execute("SELECT record FROM tasks ORDER BY rowid"):
                state.tasks.append(json.loads(record))
            for task_id, seq, body in self._db.execute(
                "SELECT task_id, seq, body FROM events ORDER BY task_id, seq"
            ):
                state.events.setdefault(task_id, []).append((seq, json.loads(body)))
            for pid, task_id, status in self._db.execute("SELECT * FROM prompts"):
                state.prompts[pid] = (task_id, status)
        return state

    def commit(
        self,
        task: dict[str, Any],
        events: Sequence[tuple[int, dict[str, Any]]],
        prompts: Sequence[tuple[str, str, str]],
    ) -> None:
        """Write the change in one transaction."""
        record = json.dumps(task, separators=(",", ":"))
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "INSERT INTO tasks (id, record) VALUES (?, ?) "
                    "ON CONFLICT(id) DO UPDATE SET record=excluded.record",
                    (task["id"], record),
                )
                db.executemany(
                    "INSERT INTO events (task_id, seq, body) VALUES (?, ?, ?)",
                    [
                        (task["id"], seq, json.dumps(body, separators=(",", ":")))
                        for seq, body in events
                    ],
                )
                db.executemany(
                    "INSERT INTO prompts (prompt_id, task_id, status) VALUES (?, ?, ?) "
                    "ON CONFLICT(prompt_id) DO UPDATE SET status=excluded.status",
                    prompts,
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        """Close the database (checkpointing the WAL)."""
        with self._lock:
            self._db.close()


def open_task_store(path: str | os.PathLike[str] | None) -> TaskStore:
    """A :class:`SQLiteTaskStore` on ``path``, or a :class:`MemoryTaskStore` when it is None."""
    return MemoryTaskStore() if path is None else SQLiteTaskStore(path)
