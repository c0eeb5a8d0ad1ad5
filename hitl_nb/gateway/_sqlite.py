"""The gateway's state in one SQLite file: registered tasks, prompts, ballots, forwards,
push secrets, the audit trail, and the replicas' heartbeats and leases.

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
  read its audit trail) and the ``audit`` table;
- 3: replicas on one database and listings in SQL: ``replicas`` (heartbeats),
  ``leases`` (which replica watches a task), ``forwards.owner``,
  ``registrations.ended`` (a finished task nobody watches), who may answer each prompt
  (``prompts.needed``, ``prompts.named`` and the ``audience`` table, filled from the
  stored envelopes) and the index of open prompts in listing order.

The same numbering as the PostgreSQL store's (:mod:`hitl_nb.gateway._postgres`). The
calls are quick local writes, made on the event loop's thread (one connection): a
commit waits for the disk (``synchronous=FULL``), which ``benchmarks/bench_scale.py``
measures as the loop's stall.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hitl_nb.gateway._store import (
    AuditEntry,
    Ballot,
    Forward,
    Listed,
    OpenQuery,
    PromptRow,
    Registration,
    StoreUnavailable,
)
from hitl_nb.gateway._views import audience

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

_V3 = """
ALTER TABLE registrations ADD COLUMN ended REAL;
ALTER TABLE prompts ADD COLUMN needed INTEGER NOT NULL DEFAULT 1;
ALTER TABLE prompts ADD COLUMN named INTEGER NOT NULL DEFAULT 0;
CREATE TABLE audience (
    reg_id TEXT NOT NULL,
    prompt_id TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (reg_id, prompt_id, name)
);
ALTER TABLE forwards ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE TABLE replicas (
    id TEXT PRIMARY KEY,
    started REAL NOT NULL,
    expires REAL NOT NULL
);
CREATE TABLE leases (
    reg_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    expires REAL NOT NULL
);
CREATE INDEX leases_by_holder ON leases (holder);
CREATE INDEX prompts_open ON prompts (deadline IS NULL, deadline, first_seen, prompt_id)
    WHERE closed IS NULL;
CREATE INDEX forwards_unsettled ON forwards (owner) WHERE state = 'forwarding'
"""


def _fill_audience(db: sqlite3.Connection) -> None:
    """Version 3's data step: who may answer each stored prompt, from its envelope."""
    rows = db.execute("SELECT reg_id, prompt_id, envelope FROM prompts").fetchall()
    for reg_id, prompt_id, envelope in rows:
        names, needed = audience(json.loads(envelope))
        db.execute(
            "UPDATE prompts SET needed = ?, named = ? WHERE reg_id = ? AND prompt_id = ?",
            (needed, int(bool(names)), reg_id, prompt_id),
        )
        db.executemany(
            "INSERT OR IGNORE INTO audience VALUES (?, ?, ?)",
            [(reg_id, prompt_id, n) for n in names],
        )


Step = tuple[str, Callable[[sqlite3.Connection], None] | None]
#: Each version's step from the one before (index 0: from nothing to version 1): its
#: statements, then (if any) what it does to the rows in Python.
_STEPS: tuple[Step, ...] = ((_V1, None), (_V2, None), (_V3, _fill_audience))
#: The schema version this code writes.
SCHEMA_VERSION = len(_STEPS)

_REG = "id, agent_url, task_id, registered_by, created, registrant"
_PROMPT = "reg_id, prompt_id, context_id, envelope, deadline, first_seen, closed"
_FORWARD = "reg_id, prompt_id, message_id, payload, responders, state, detail, at, owner"
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


def migrate(db: sqlite3.Connection, upto: int = SCHEMA_VERSION) -> int:
    """Bring the file's schema up to ``upto`` (:data:`SCHEMA_VERSION`: the one this code
    writes; lower only to make an older file in tests); the version it had."""
    had = _version(db)
    if had > SCHEMA_VERSION:
        raise RuntimeError(
            f"the gateway's database {db} has schema version {had}, newer than this "
            f"hitl-nb ({SCHEMA_VERSION}): upgrade hitl-nb"
        )
    for version in range(had + 1, upto + 1):
        statements, data_step = _STEPS[version - 1]
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements.split(";"):
                if statement.strip():
                    db.execute(statement)
            if data_step is not None:
                data_step(db)
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
        self.where = f"the gateway's SQLite file {self.path}"
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            # Another process on the same file (a second replica) waits for the lock.
            self._db.execute("PRAGMA busy_timeout=10000")
            #: The schema version the file had when opened (0: a new file).
            self.found_version: int | None = migrate(self._db)
        except BaseException:  # a file refused (newer, a failed step) is not left open
            self._db.close()
            raise

    async def open(self) -> None:
        """Nothing to do: the file was opened and migrated when the store was made."""

    async def close(self) -> None:
        """Close the file."""
        self._db.close()

    def _run(self, sql: str, args: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        try:
            return self._db.execute(sql, args)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "disk I/O" in str(exc):
                raise StoreUnavailable(self.where, str(exc)) from exc
            raise

    def _atomic(self, work: Callable[[], Any]) -> Any:
        self._run("BEGIN IMMEDIATE")  # a file another process keeps locked: unavailable
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
        names, needed = audience(envelope)

        def work() -> None:
            cur = self._run(
                f"INSERT OR IGNORE INTO prompts ({_PROMPT}, needed, named) "
                "VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)",
                (
                    reg_id,
                    prompt_id,
                    context_id,
                    json.dumps(envelope),
                    deadline,
                    time.time(),
                    needed,
                    int(bool(names)),
                ),
            )
            if cur.rowcount == 1:
                self._db.executemany(
                    "INSERT OR IGNORE INTO audience VALUES (?, ?, ?)",
                    [(reg_id, prompt_id, n) for n in names],
                )

        if await self.prompt(reg_id, prompt_id) is None:
            self._atomic(work)
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

    async def prompt_and_forward(
        self, reg_id: str, prompt_id: str
    ) -> tuple[PromptRow | None, Forward | None]:
        """The prompt row and its forward (each None when absent)."""
        return await self.prompt(reg_id, prompt_id), await self.forward(reg_id, prompt_id)

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

    async def list_open(self, query: OpenQuery, limit: int) -> tuple[list[Listed], int]:
        """The first ``limit`` open prompts ``query`` selects, and how many in all."""
        where, args = _selection(query)
        joined = f"FROM prompts p JOIN registrations r ON r.id = p.reg_id WHERE {where}"
        total = int(self._run(f"SELECT COUNT(*) {joined}", tuple(args)).fetchone()[0])
        rows = self._run(
            f"SELECT {_REG_R}, {_PROMPT_P} {joined} "
            "ORDER BY p.deadline IS NULL, p.deadline, p.first_seen, p.prompt_id LIMIT ?",
            (*args, limit),
        ).fetchall()
        if not rows:
            return [], total
        keys = [(r[6], r[7]) for r in rows]
        marks = ", ".join("(?, ?)" for _ in keys)
        flat = tuple(v for k in keys for v in k)
        forwards = {
            (f[0], f[1]): _forward(f)
            for f in self._run(
                f"SELECT {_FORWARD} FROM forwards WHERE (reg_id, prompt_id) IN (VALUES {marks})",
                flat,
            ).fetchall()
        }
        ballots: dict[tuple[str, str], list[Ballot]] = {}
        for reg_id, prompt_id, responder, payload, at in self._run(
            "SELECT reg_id, prompt_id, responder, payload, at FROM ballots "
            f"WHERE (reg_id, prompt_id) IN (VALUES {marks}) ORDER BY at, responder",
            flat,
        ).fetchall():
            ballots.setdefault((reg_id, prompt_id), []).append(Ballot(responder, payload, at))
        listed = [
            Listed(Registration(*r[:6]), _prompt(r[6:]), forwards.get(k), ballots.get(k, []))
            for r, k in zip(rows, keys, strict=True)
        ]
        return listed, total

    async def due_prompts(self, before: float) -> list[PromptRow]:
        """Open prompts whose deadline is at most ``before``."""
        rows = self._run(
            f"SELECT {_PROMPT} FROM prompts WHERE closed IS NULL AND deadline IS NOT NULL "
            "AND deadline <= ?",
            (before,),
        ).fetchall()
        return [_prompt(r) for r in rows]

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
        self,
        reg_id: str,
        prompt_id: str,
        message_id: str,
        payload: str,
        responders: list[str],
        owner: str = "",
    ) -> Forward | None:
        """Write-ahead: claim the prompt's one forward; it as written, or None if it was
        claimed before."""
        fwd = Forward(
            reg_id,
            prompt_id,
            message_id,
            payload,
            list(responders),
            "forwarding",
            None,
            time.time(),
            owner,
        )
        cur = self._run(
            f"INSERT OR IGNORE INTO forwards ({_FORWARD}) "
            "VALUES (?, ?, ?, ?, ?, 'forwarding', NULL, ?, ?)",
            (reg_id, prompt_id, message_id, payload, json.dumps(responders), fwd.at, owner),
        )
        return fwd if cur.rowcount == 1 else None

    async def finish_forward(
        self, reg_id: str, prompt_id: str, state: str, detail: str, *, closed: str | None = None
    ) -> None:
        """Record how a forward ended (``forwarded`` or ``failed``); with ``closed``, close
        the prompt too, in the same transaction (one commit)."""

        def work() -> None:
            self._run(
                "UPDATE forwards SET state = ?, detail = ?, at = ? "
                "WHERE reg_id = ? AND prompt_id = ?",
                (state, detail, time.time(), reg_id, prompt_id),
            )
            if closed is not None:
                self._run(
                    "UPDATE prompts SET closed = ? "
                    "WHERE reg_id = ? AND prompt_id = ? AND closed IS NULL",
                    (closed, reg_id, prompt_id),
                )

        self._atomic(work)

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

    async def adopt_forwards(self, replica: str) -> list[Forward]:
        """Take over the unsettled forwards of stopped replicas; all ``replica`` owns."""

        def work() -> list[Forward]:
            self._run(
                "UPDATE forwards SET owner = ? WHERE state = 'forwarding' AND owner NOT IN "
                "(SELECT id FROM replicas WHERE expires > ?)",
                (replica, time.time()),
            )
            rows = self._run(
                f"SELECT {_FORWARD} FROM forwards WHERE state = 'forwarding' AND owner = ?",
                (replica,),
            ).fetchall()
            return [_forward(r) for r in rows]

        adopted: list[Forward] = self._atomic(work)
        return adopted

    # -- replicas and leases ---------------------------------------------------------

    async def hold_leases(self, replica: str, ttl: float) -> set[str]:
        """Heartbeat, renew, take a fair share, give back the rest; what it holds."""

        def work() -> set[str]:
            now = time.time()
            self._run(
                "INSERT INTO replicas (id, started, expires) VALUES (?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET expires = excluded.expires",
                (replica, now, now + ttl),
            )
            self._run("DELETE FROM replicas WHERE expires < ?", (now - 3600,))
            live = int(
                self._run("SELECT COUNT(*) FROM replicas WHERE expires > ?", (now,)).fetchone()[0]
            )
            watched = int(
                self._run("SELECT COUNT(*) FROM registrations WHERE ended IS NULL").fetchone()[0]
            )
            share = -(-watched // max(live, 1))
            self._run("UPDATE leases SET expires = ? WHERE holder = ?", (now + ttl, replica))
            held = [
                r[0]
                for r in self._run(
                    "SELECT reg_id FROM leases WHERE holder = ? ORDER BY reg_id", (replica,)
                ).fetchall()
            ]
            if len(held) > share:
                for reg_id in held[share:]:
                    self._run("DELETE FROM leases WHERE reg_id = ?", (reg_id,))
                held = held[:share]
            elif len(held) < share:
                free = self._run(
                    "SELECT r.id FROM registrations r LEFT JOIN leases l ON l.reg_id = r.id "
                    "WHERE r.ended IS NULL AND (l.reg_id IS NULL OR l.expires < ?) "
                    "ORDER BY r.created, r.id LIMIT ?",
                    (now, share - len(held)),
                ).fetchall()
                for (reg_id,) in free:
                    self._run(
                        "INSERT INTO leases (reg_id, holder, expires) VALUES (?, ?, ?) "
                        "ON CONFLICT (reg_id) DO UPDATE SET holder = excluded.holder, "
                        "expires = excluded.expires WHERE leases.expires < ?",
                        (reg_id, replica, now + ttl, now),
                    )
                    held.append(reg_id)
            return set(held)

        held: set[str] = self._atomic(work)
        return held

    async def take_lease(self, reg_id: str, replica: str, ttl: float) -> bool:
        """Lease one registration to ``replica`` if nobody holds it."""
        now = time.time()
        cur = self._run(
            "INSERT INTO leases (reg_id, holder, expires) VALUES (?, ?, ?) "
            "ON CONFLICT (reg_id) DO UPDATE SET holder = excluded.holder, "
            "expires = excluded.expires WHERE leases.expires < ? OR leases.holder = ?",
            (reg_id, replica, now + ttl, now, replica),
        )
        return cur.rowcount == 1

    async def end_watch(self, reg_id: str) -> None:
        """The task ended: nobody watches it any more."""

        def work() -> None:
            self._run("UPDATE registrations SET ended = ? WHERE id = ?", (time.time(), reg_id))
            self._run("DELETE FROM leases WHERE reg_id = ?", (reg_id,))

        self._atomic(work)

    async def leave(self, replica: str) -> None:
        """``replica`` stops: its heartbeat and leases go."""

        def work() -> None:
            self._run("DELETE FROM leases WHERE holder = ?", (replica,))
            self._run("DELETE FROM replicas WHERE id = ?", (replica,))

        self._atomic(work)

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


_REG_R = ", ".join("r." + c for c in _REG.split(", "))
_PROMPT_P = ", ".join("p." + c for c in _PROMPT.split(", "))


def _may(name: str | None, args: list[Any]) -> str:
    """SQL: may ``name`` answer prompt ``p`` (the rule of :func:`_views.audience`)?"""
    if name is None:
        return "(p.named = 0 AND p.needed <= 1)"
    args.append(name)
    return (
        "(p.named = 0 OR EXISTS (SELECT 1 FROM audience a WHERE a.reg_id = p.reg_id "
        "AND a.prompt_id = p.prompt_id AND a.name = ?))"
    )


def _selection(query: OpenQuery) -> tuple[str, list[Any]]:
    args: list[Any] = []
    where = ["p.closed IS NULL"]
    if query.agent is not None:
        where.append("r.agent_url = ?")
        args.append(query.agent)
    if query.due_before is not None:
        where.append("p.deadline IS NOT NULL AND p.deadline <= ?")
        args.append(query.due_before)
    if not query.see_all:
        if query.viewer is None:
            where.append(_may(None, args))
        else:
            args.append(query.viewer)
            where.append(f"(r.registrant = ? OR {_may(query.viewer, args)})")
    if query.for_responder:
        where.append(_may(query.responder, args))
    return " AND ".join(where), args


def _prompt(row: tuple[Any, ...]) -> PromptRow:
    reg_id, prompt_id, context_id, envelope, deadline, first_seen, closed = row
    return PromptRow(
        reg_id, prompt_id, context_id, json.loads(envelope), deadline, first_seen, closed
    )


def _forward(row: tuple[Any, ...]) -> Forward:
    reg_id, prompt_id, message_id, payload, responders, state, detail, at, owner = row
    return Forward(
        reg_id, prompt_id, message_id, payload, json.loads(responders), state, detail, at, owner
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
