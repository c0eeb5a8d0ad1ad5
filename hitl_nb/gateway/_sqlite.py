"""The gateway's state in one SQLite file: registered tasks, prompts, ballots, forwards,
push secrets and the audit trail.

Every change is one committed transaction (``synchronous=FULL``, WAL), so a restart
loses nothing that was acknowledged. The ``forwards`` row of a prompt is the at-most-once
guard: written (state ``forwarding``, with the ``messageId`` that will be sent) *before*
the answer goes to the agent, and its primary key admits one per prompt, whichever
process or task asks first. After a crash a ``forwarding`` row is settled by asking the
agent before the same message is sent again (:mod:`hitl_nb.gateway._forward`).

The schema is versioned (``PRAGMA user_version``) and brought up to date when the file is
opened, one step per version, each in one transaction:

- 1: registrations, prompts, ballots, forwards, push (the first layout, unversioned);
- 2: ``registrations.registrant`` (the user name that registered a task, for who may
  read its audit trail) and the ``audit`` table.

The calls are quick local writes, made on the event loop's thread (one connection).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hitl_nb.gateway._store import AuditEntry, Ballot, Forward, PromptRow, Registration

__all__ = ["SCHEMA_VERSION", "SQLiteStore"]

_V1 = """
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
CREATE TABLE IF NOT EXISTS push (
    reg_id TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    configured REAL,
    received INTEGER NOT NULL DEFAULT 0
);
"""

_V2 = """
ALTER TABLE registrations ADD COLUMN registrant TEXT;
CREATE TABLE IF NOT EXISTS push (
    reg_id TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    configured REAL,
    received INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    reg_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    agent_url TEXT NOT NULL,
    prompt_id TEXT NOT NULL,
    responder TEXT,
    display TEXT,
    action TEXT NOT NULL,
    status INTEGER NOT NULL,
    reason TEXT,
    payload_sha256 TEXT,
    schema_sha256 TEXT,
    responders TEXT NOT NULL,
    agent_reply TEXT
);
CREATE INDEX audit_by_registration ON audit (reg_id, id);
"""

#: Each version's step from the one before (index 0: from nothing to version 1).
_STEPS = (_V1, _V2)
#: The schema version this code writes.
SCHEMA_VERSION = len(_STEPS)

_REG = "id, agent_url, task_id, registered_by, created, registrant"
_PROMPT = "reg_id, prompt_id, context_id, envelope, deadline, first_seen, closed"
_FORWARD = "reg_id, prompt_id, message_id, payload, responders, state, detail, at"
_AUDIT = (
    "id, at, reg_id, task_id, agent_url, prompt_id, responder, display, action, status, "
    "reason, payload_sha256, schema_sha256, responders, agent_reply"
)


def _version(db: sqlite3.Connection) -> int:
    found = int(db.execute("PRAGMA user_version").fetchone()[0])
    if (
        found == 0
        and db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'registrations'"
        ).fetchone()
    ):
        return 1  # the first layout did not number itself
    return found


def migrate(db: sqlite3.Connection) -> int:
    """Bring the file's schema up to :data:`SCHEMA_VERSION`; the version it had."""
    had = _version(db)
    if had > SCHEMA_VERSION:
        raise RuntimeError(
            f"the gateway's database {db} has schema version {had}, newer than this "
            f"hitl-nb ({SCHEMA_VERSION}): upgrade hitl-nb"
        )
    for version in range(had + 1, SCHEMA_VERSION + 1):
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in _STEPS[version - 1].split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {version}")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    return had


class SQLiteStore:
    """The gateway's SQLite file (see the module docstring). One connection, used from
    the event loop's thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        # Another process on the same file (a second replica) waits for the lock.
        self._db.execute("PRAGMA busy_timeout=10000")
        #: The schema version the file had when opened (0: a new file).
        self.found_version = migrate(self._db)

    async def close(self) -> None:
        """Close the file."""
        self._db.close()

    def _run(self, sql: str, args: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        return self._db.execute(sql, args)

    def _atomic(self, work: Callable[[], Any]) -> Any:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            result = work()
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        return result

    # -- registrations ---------------------------------------------------------------

    async def add_registration(self, reg: Registration) -> Registration:
        """Store ``reg``; an existing registration of the same task wins (returned)."""
        self._run(
            f"INSERT OR IGNORE INTO registrations ({_REG}) VALUES (?, ?, ?, ?, ?, ?)",
            (reg.id, reg.agent_url, reg.task_id, reg.registered_by, reg.created, reg.registrant),
        )
        found = await self.find_registration(reg.agent_url, reg.task_id)
        assert found is not None
        return found

    async def find_registration(self, agent_url: str, task_id: str) -> Registration | None:
        """The registration of this task, if any."""
        row = self._run(
            f"SELECT {_REG} FROM registrations WHERE agent_url = ? AND task_id = ?",
            (agent_url, task_id),
        ).fetchone()
        return Registration(*row) if row else None

    async def registration(self, reg_id: str) -> Registration | None:
        """The registration with this id, if any."""
        row = self._run(f"SELECT {_REG} FROM registrations WHERE id = ?", (reg_id,)).fetchone()
        return Registration(*row) if row else None

    async def registrations(self) -> list[Registration]:
        """Every registration, oldest first."""
        rows = self._run(f"SELECT {_REG} FROM registrations ORDER BY created, id").fetchall()
        return [Registration(*r) for r in rows]

    async def count_registrations(self) -> int:
        """How many tasks are registered."""
        return int(self._run("SELECT COUNT(*) FROM registrations").fetchone()[0])

    # -- prompts ---------------------------------------------------------------------

    async def see_prompt(
        self,
        reg_id: str,
        prompt_id: str,
        context_id: str | None,
        envelope: dict[str, Any],
        deadline: float | None,
    ) -> PromptRow:
        """Record a prompt the agent shows (first sighting wins); returns the row."""
        self._run(
            f"INSERT OR IGNORE INTO prompts ({_PROMPT}) VALUES (?, ?, ?, ?, ?, ?, NULL)",
            (reg_id, prompt_id, context_id, json.dumps(envelope), deadline, time.time()),
        )
        row = await self.prompt(reg_id, prompt_id)
        assert row is not None
        return row

    async def prompt(self, reg_id: str, prompt_id: str) -> PromptRow | None:
        """The prompt row, if the gateway has seen it."""
        row = self._run(
            f"SELECT {_PROMPT} FROM prompts WHERE reg_id = ? AND prompt_id = ?",
            (reg_id, prompt_id),
        ).fetchone()
        return _prompt(row) if row else None

    async def prompts(self, reg_id: str) -> list[PromptRow]:
        """The registration's prompts, first seen first."""
        rows = self._run(
            f"SELECT {_PROMPT} FROM prompts WHERE reg_id = ? ORDER BY first_seen, prompt_id",
            (reg_id,),
        ).fetchall()
        return [_prompt(r) for r in rows]

    async def open_prompts(self) -> list[PromptRow]:
        """Every prompt still open here."""
        rows = self._run(f"SELECT {_PROMPT} FROM prompts WHERE closed IS NULL").fetchall()
        return [_prompt(r) for r in rows]

    async def close_prompt(self, reg_id: str, prompt_id: str, why: str) -> bool:
        """Mark an open prompt closed (``why``); False if it was closed already."""
        cur = self._run(
            "UPDATE prompts SET closed = ? WHERE reg_id = ? AND prompt_id = ? AND closed IS NULL",
            (why, reg_id, prompt_id),
        )
        return cur.rowcount == 1

    # -- ballots ---------------------------------------------------------------------

    async def cast_ballot(
        self, reg_id: str, prompt_id: str, responder: str, payload: str
    ) -> list[Ballot]:
        """Record (or replace) a responder's answer; the ballots after it (one
        transaction)."""

        def work() -> list[Ballot]:
            self._run(
                "INSERT OR REPLACE INTO ballots VALUES (?, ?, ?, ?, ?)",
                (reg_id, prompt_id, responder, payload, time.time()),
            )
            return self._ballots(reg_id, prompt_id)

        result: list[Ballot] = self._atomic(work)
        return result

    def _ballots(self, reg_id: str, prompt_id: str) -> list[Ballot]:
        rows = self._run(
            "SELECT responder, payload, at FROM ballots WHERE reg_id = ? AND prompt_id = ? "
            "ORDER BY at, responder",
            (reg_id, prompt_id),
        ).fetchall()
        return [Ballot(*r) for r in rows]

    async def ballots(self, reg_id: str, prompt_id: str) -> list[Ballot]:
        """The answers collected for a prompt, oldest first."""
        return self._ballots(reg_id, prompt_id)

    async def all_ballots(self) -> dict[tuple[str, str], list[Ballot]]:
        """Every collected answer, by (registration, prompt): one query for a listing."""
        out: dict[tuple[str, str], list[Ballot]] = {}
        rows = self._run(
            "SELECT reg_id, prompt_id, responder, payload, at FROM ballots ORDER BY at, responder"
        ).fetchall()
        for reg_id, prompt_id, responder, payload, at in rows:
            out.setdefault((reg_id, prompt_id), []).append(Ballot(responder, payload, at))
        return out

    # -- forwards --------------------------------------------------------------------

    async def begin_forward(
        self, reg_id: str, prompt_id: str, message_id: str, payload: str, responders: list[str]
    ) -> bool:
        """Write-ahead: claim the prompt's one forward. False if it was claimed before."""
        cur = self._run(
            f"INSERT OR IGNORE INTO forwards ({_FORWARD}) "
            "VALUES (?, ?, ?, ?, ?, 'forwarding', NULL, ?)",
            (reg_id, prompt_id, message_id, payload, json.dumps(responders), time.time()),
        )
        return cur.rowcount == 1

    async def finish_forward(self, reg_id: str, prompt_id: str, state: str, detail: str) -> None:
        """Record how a forward ended (``forwarded`` or ``failed``)."""
        self._run(
            "UPDATE forwards SET state = ?, detail = ?, at = ? WHERE reg_id = ? AND prompt_id = ?",
            (state, detail, time.time(), reg_id, prompt_id),
        )

    async def drop_forward(self, reg_id: str, prompt_id: str) -> None:
        """Forget a forward the agent refused (422): the prompt may be answered again."""
        self._run("DELETE FROM forwards WHERE reg_id = ? AND prompt_id = ?", (reg_id, prompt_id))

    async def forward(self, reg_id: str, prompt_id: str) -> Forward | None:
        """The prompt's forward, if one was claimed."""
        row = self._run(
            f"SELECT {_FORWARD} FROM forwards WHERE reg_id = ? AND prompt_id = ?",
            (reg_id, prompt_id),
        ).fetchone()
        return _forward(row) if row else None

    async def all_forwards(self) -> dict[tuple[str, str], Forward]:
        """Every forward, by (registration, prompt): one query for a listing."""
        rows = self._run(f"SELECT {_FORWARD} FROM forwards").fetchall()
        return {(r[0], r[1]): _forward(r) for r in rows}

    async def unsettled_forwards(self) -> list[Forward]:
        """Forwards whose fate is unknown (a crash or a lost connection mid-forward)."""
        rows = self._run(f"SELECT {_FORWARD} FROM forwards WHERE state = 'forwarding'").fetchall()
        return [_forward(r) for r in rows]

    # -- push secrets ----------------------------------------------------------------

    async def push_secret(self, reg_id: str) -> str | None:
        """The registration's push secret, if one was made."""
        row = self._run("SELECT secret FROM push WHERE reg_id = ?", (reg_id,)).fetchone()
        return str(row[0]) if row else None

    async def ensure_push_secret(self, reg_id: str, candidate: str) -> str:
        """The registration's push secret: ``candidate`` unless one exists already."""
        self._run("INSERT OR IGNORE INTO push (reg_id, secret) VALUES (?, ?)", (reg_id, candidate))
        secret = await self.push_secret(reg_id)
        assert secret is not None
        return secret

    async def mark_push_configured(self, reg_id: str, at: float) -> None:
        """An agent accepted the push configuration of this registration."""
        self._run("UPDATE push SET configured = ? WHERE reg_id = ?", (at, reg_id))

    async def push_configured(self, reg_id: str) -> bool:
        """Has an agent accepted a push configuration for this registration?"""
        row = self._run("SELECT configured FROM push WHERE reg_id = ?", (reg_id,)).fetchone()
        return bool(row and row[0] is not None)

    async def count_push(self, reg_id: str) -> None:
        """One more notification was accepted for this registration."""
        self._run("UPDATE push SET received = received + 1 WHERE reg_id = ?", (reg_id,))

    # -- the audit trail -------------------------------------------------------------

    async def add_audit(self, entry: AuditEntry) -> None:
        """Append one entry."""
        self._run(
            f"INSERT INTO audit ({_AUDIT}) VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                entry.at,
                entry.reg_id,
                entry.task_id,
                entry.agent_url,
                entry.prompt_id,
                entry.responder,
                entry.display,
                entry.action,
                entry.status,
                entry.reason,
                entry.payload_sha256,
                entry.schema_sha256,
                json.dumps(entry.responders),
                None if entry.agent_reply is None else json.dumps(entry.agent_reply),
            ),
        )

    async def audit(
        self, reg_ids: list[str] | None = None, *, after: int = 0, limit: int = 1000
    ) -> list[AuditEntry]:
        """Entries with an id above ``after``, oldest first, at most ``limit``."""
        if reg_ids is None:
            rows = self._run(
                f"SELECT {_AUDIT} FROM audit WHERE id > ? ORDER BY id LIMIT ?", (after, limit)
            ).fetchall()
        elif not reg_ids:
            return []
        else:
            marks = ", ".join("?" * len(reg_ids))
            rows = self._run(
                f"SELECT {_AUDIT} FROM audit WHERE reg_id IN ({marks}) AND id > ? "
                "ORDER BY id LIMIT ?",
                (*reg_ids, after, limit),
            ).fetchall()
        return [_audit(r) for r in rows]


def _prompt(row: tuple[Any, ...]) -> PromptRow:
    reg_id, prompt_id, context_id, envelope, deadline, first_seen, closed = row
    return PromptRow(
        reg_id, prompt_id, context_id, json.loads(envelope), deadline, first_seen, closed
    )


def _forward(row: tuple[Any, ...]) -> Forward:
    reg_id, prompt_id, message_id, payload, responders, state, detail, at = row
    return Forward(
        reg_id, prompt_id, message_id, payload, json.loads(responders), state, detail, at
    )


def _audit(row: tuple[Any, ...]) -> AuditEntry:
    (
        id_,
        at,
        reg_id,
        task_id,
        agent_url,
        prompt_id,
        responder,
        display,
        action,
        status,
        reason,
        payload_sha,
        schema_sha,
        responders,
        reply,
    ) = row
    return AuditEntry(
        at,
        reg_id,
        task_id,
        agent_url,
        prompt_id,
        responder,
        display,
        action,
        status,
        reason,
        payload_sha,
        schema_sha,
        json.loads(responders),
        None if reply is None else json.loads(reply),
        id_,
    )
