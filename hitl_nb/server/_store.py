"""The gateway's state in SQLite: registered tasks, open prompts, ballots, forwards.

One file in the extension's state directory; every change is one committed transaction
(``synchronous=FULL``), so a server restart loses nothing that was acknowledged.

The ``forwards`` row of a prompt is the at-most-once guard: it is written (state
``forwarding``, with the ``messageId`` that will be sent) *before* the answer goes to the
agent, and its primary key admits one per prompt. After a crash a ``forwarding`` row is
settled by asking the agent (GetTask: is our ``messageId`` in the history?) before the
same message is sent again (see :mod:`hitl_nb.server._forward`).
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Ballot", "Forward", "GatewayStore", "PromptRow", "Registration"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS registrations (
    id TEXT PRIMARY KEY,
    agent_url TEXT NOT NULL,
    task_id TEXT NOT NULL,
    registered_by TEXT NOT NULL,
    created REAL NOT NULL,
    UNIQUE (agent_url, task_id)
);
CREATE TABLE IF NOT EXISTS prompts (
    reg_id TEXT NOT NULL REFERENCES registrations(id),
    prompt_id TEXT NOT NULL,
    context_id TEXT,
    envelope TEXT NOT NULL,
    deadline REAL,
    first_seen REAL NOT NULL,
    closed TEXT,
    PRIMARY KEY (reg_id, prompt_id)
);
CREATE TABLE IF NOT EXISTS ballots (
    reg_id TEXT NOT NULL,
    prompt_id TEXT NOT NULL,
    responder TEXT NOT NULL,
    payload TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (reg_id, prompt_id, responder)
);
CREATE TABLE IF NOT EXISTS forwards (
    reg_id TEXT NOT NULL,
    prompt_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    responders TEXT NOT NULL,
    state TEXT NOT NULL,
    detail TEXT,
    at REAL NOT NULL,
    PRIMARY KEY (reg_id, prompt_id)
);
"""


@dataclass(frozen=True)
class Registration:
    """A task someone asked the gateway to watch."""

    id: str
    agent_url: str
    task_id: str
    registered_by: str
    created: float

    def to_json(self) -> dict[str, Any]:
        """The registration as the REST API shows it."""
        return {
            "id": self.id,
            "agent_url": self.agent_url,
            "task_id": self.task_id,
            "registered_by": self.registered_by,
            "created": self.created,
        }


@dataclass(frozen=True)
class PromptRow:
    """A prompt the gateway has seen; ``closed`` is None while it is open here."""

    reg_id: str
    prompt_id: str
    context_id: str | None
    envelope: dict[str, Any]
    deadline: float | None
    first_seen: float
    closed: str | None


@dataclass(frozen=True)
class Ballot:
    """One responder's answer to a prompt (canonical JSON text)."""

    responder: str
    payload: str
    at: float


@dataclass(frozen=True)
class Forward:
    """The answer the gateway sends (or sent) to the agent for one prompt."""

    reg_id: str
    prompt_id: str
    message_id: str
    payload: str
    responders: list[str]
    state: str  # "forwarding" | "forwarded" | "failed"
    detail: str | None
    at: float


class GatewayStore:
    """The gateway's SQLite file. Use it from one thread (the server's loop)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        """Close the file."""
        self._db.close()

    @property
    def connection(self) -> sqlite3.Connection:
        """The SQLite connection (for tables kept by other modules: push secrets)."""
        return self._db

    def _tx(self, sql: str, args: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        return self._db.execute(sql, args)

    # -- registrations ---------------------------------------------------------------

    def add_registration(self, reg: Registration) -> Registration:
        """Store ``reg``; an existing registration of the same task wins (returned)."""
        self._tx(
            "INSERT OR IGNORE INTO registrations VALUES (?, ?, ?, ?, ?)",
            (reg.id, reg.agent_url, reg.task_id, reg.registered_by, reg.created),
        )
        found = self.find_registration(reg.agent_url, reg.task_id)
        assert found is not None
        return found

    def find_registration(self, agent_url: str, task_id: str) -> Registration | None:
        """The registration of this task, if any."""
        row = self._tx(
            "SELECT * FROM registrations WHERE agent_url = ? AND task_id = ?", (agent_url, task_id)
        ).fetchone()
        return Registration(*row) if row else None

    def registration(self, reg_id: str) -> Registration | None:
        """The registration with this id, if any."""
        row = self._tx("SELECT * FROM registrations WHERE id = ?", (reg_id,)).fetchone()
        return Registration(*row) if row else None

    def registrations(self) -> list[Registration]:
        """Every registration, oldest first."""
        rows = self._tx("SELECT * FROM registrations ORDER BY created, id").fetchall()
        return [Registration(*r) for r in rows]

    def count_registrations(self) -> int:
        """How many tasks are registered."""
        return int(self._tx("SELECT COUNT(*) FROM registrations").fetchone()[0])

    # -- prompts ---------------------------------------------------------------------

    def see_prompt(
        self,
        reg_id: str,
        prompt_id: str,
        context_id: str | None,
        envelope: dict[str, Any],
        deadline: float | None,
    ) -> PromptRow:
        """Record a prompt the agent shows (first sighting wins); returns the row."""
        self._tx(
            "INSERT OR IGNORE INTO prompts VALUES (?, ?, ?, ?, ?, ?, NULL)",
            (reg_id, prompt_id, context_id, json.dumps(envelope), deadline, time.time()),
        )
        row = self.prompt(reg_id, prompt_id)
        assert row is not None
        return row

    def prompt(self, reg_id: str, prompt_id: str) -> PromptRow | None:
        """The prompt row, if the gateway has seen it."""
        row = self._tx(
            "SELECT * FROM prompts WHERE reg_id = ? AND prompt_id = ?", (reg_id, prompt_id)
        ).fetchone()
        return _prompt(row) if row else None

    def prompts(self, reg_id: str) -> list[PromptRow]:
        """The registration's prompts, first seen first."""
        rows = self._tx(
            "SELECT * FROM prompts WHERE reg_id = ? ORDER BY first_seen, prompt_id", (reg_id,)
        ).fetchall()
        return [_prompt(r) for r in rows]

    def open_prompts(self) -> list[PromptRow]:
        """Every prompt still open here (deadline timers are set for these at start)."""
        rows = self._tx("SELECT * FROM prompts WHERE closed IS NULL").fetchall()
        return [_prompt(r) for r in rows]

    def close_prompt(self, reg_id: str, prompt_id: str, why: str) -> bool:
        """Mark an open prompt closed (``why``); False if it was closed already."""
        cur = self._tx(
            "UPDATE prompts SET closed = ? WHERE reg_id = ? AND prompt_id = ? AND closed IS NULL",
            (why, reg_id, prompt_id),
        )
        return cur.rowcount == 1

    # -- ballots ---------------------------------------------------------------------

    def put_ballot(self, reg_id: str, prompt_id: str, responder: str, payload: str) -> None:
        """Record (or replace) a responder's answer."""
        self._tx(
            "INSERT OR REPLACE INTO ballots VALUES (?, ?, ?, ?, ?)",
            (reg_id, prompt_id, responder, payload, time.time()),
        )

    def ballots(self, reg_id: str, prompt_id: str) -> list[Ballot]:
        """The answers collected for a prompt, oldest first."""
        rows = self._tx(
            "SELECT responder, payload, at FROM ballots WHERE reg_id = ? AND prompt_id = ? "
            "ORDER BY at, responder",
            (reg_id, prompt_id),
        ).fetchall()
        return [Ballot(*r) for r in rows]

    def all_ballots(self) -> dict[tuple[str, str], list[Ballot]]:
        """Every collected answer, by (registration, prompt): one query for a listing."""
        out: dict[tuple[str, str], list[Ballot]] = {}
        rows = self._tx(
            "SELECT reg_id, prompt_id, responder, payload, at FROM ballots ORDER BY at, responder"
        ).fetchall()
        for reg_id, prompt_id, responder, payload, at in rows:
            out.setdefault((reg_id, prompt_id), []).append(Ballot(responder, payload, at))
        return out

    # -- forwards --------------------------------------------------------------------

    def all_forwards(self) -> dict[tuple[str, str], Forward]:
        """Every forward, by (registration, prompt): one query for a listing."""
        rows = self._tx("SELECT * FROM forwards").fetchall()
        return {(r[0], r[1]): _forward(r) for r in rows}

    def begin_forward(
        self, reg_id: str, prompt_id: str, message_id: str, payload: str, responders: list[str]
    ) -> bool:
        """Write-ahead: claim the prompt's one forward. False if it was claimed before."""
        cur = self._tx(
            "INSERT OR IGNORE INTO forwards VALUES (?, ?, ?, ?, ?, 'forwarding', NULL, ?)",
            (reg_id, prompt_id, message_id, payload, json.dumps(responders), time.time()),
        )
        return cur.rowcount == 1

    def finish_forward(self, reg_id: str, prompt_id: str, state: str, detail: str) -> None:
        """Record how a forward ended (``forwarded`` or ``failed``)."""
        self._tx(
            "UPDATE forwards SET state = ?, detail = ?, at = ? WHERE reg_id = ? AND prompt_id = ?",
            (state, detail, time.time(), reg_id, prompt_id),
        )

    def drop_forward(self, reg_id: str, prompt_id: str) -> None:
        """Forget a forward the agent refused (422): the prompt may be answered again."""
        self._tx("DELETE FROM forwards WHERE reg_id = ? AND prompt_id = ?", (reg_id, prompt_id))

    def forward(self, reg_id: str, prompt_id: str) -> Forward | None:
        """The prompt's forward, if one was claimed."""
        row = self._tx(
            "SELECT * FROM forwards WHERE reg_id = ? AND prompt_id = ?", (reg_id, prompt_id)
        ).fetchone()
        return _forward(row) if row else None

    def unsettled_forwards(self) -> list[Forward]:
        """Forwards whose fate is unknown (a crash or a lost connection mid-forward)."""
        rows = self._tx("SELECT * FROM forwards WHERE state = 'forwarding'").fetchall()
        return [_forward(r) for r in rows]


def _prompt(row: tuple[Any, ...]) -> PromptRow:
    reg_id, prompt_id, context_id, envelope, deadline, first_seen, closed = row
    return PromptRow(reg_id, prompt_id, context_id, json.loads(envelope), deadline, first_seen,
                     closed)  # fmt: skip


def _forward(row: tuple[Any, ...]) -> Forward:
    reg_id, prompt_id, message_id, payload, responders, state, detail, at = row
    return Forward(reg_id, prompt_id, message_id, payload, json.loads(responders), state, detail,
                   at)  # fmt: skip
