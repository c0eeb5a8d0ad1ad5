"""An outbox over a SQLite file, for the sender's tests: the
:class:`hitl_nb.notify.Outbox` protocol, statement by statement.

Not the package's: the gateway's one store implements the outbox in its own tables,
written in the same transactions as the prompts. This one shows what those statements
are, and lets the sender be tested on a real database now. Each instance holds one
connection; two instances on one file act as two replicas (``BEGIN IMMEDIATE``
serializes their claims). Besides the protocol: :meth:`SQLiteOutbox.add` (what the
gateway writes with a prompt), :meth:`SQLiteOutbox.withdraw` (what it withdraws when a
prompt is answered or closes), and read helpers for tests.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hitl_nb.notify import Batch, Note, PromptFacts, stale_reason

SCHEMA = """
CREATE TABLE IF NOT EXISTS notify_notes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    recipient TEXT NOT NULL,
    kind TEXT NOT NULL,
    reg_id TEXT NOT NULL,
    prompt_id TEXT NOT NULL,
    facts TEXT NOT NULL,
    created REAL NOT NULL,
    due REAL NOT NULL,
    expires REAL,
    not_before REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    state TEXT NOT NULL DEFAULT 'pending',
    claim TEXT,
    done_at REAL
);
CREATE INDEX IF NOT EXISTS notify_notes_due ON notify_notes (state, not_before);
CREATE INDEX IF NOT EXISTS notify_notes_claim ON notify_notes (claim);
CREATE INDEX IF NOT EXISTS notify_notes_prompt ON notify_notes (reg_id, prompt_id);
CREATE TABLE IF NOT EXISTS notify_mailboxes (
    recipient TEXT PRIMARY KEY,
    last_sent REAL,
    next_at REAL,
    claim TEXT,
    claim_until REAL
);
CREATE TABLE IF NOT EXISTS notify_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    note_key TEXT NOT NULL,
    recipient TEXT NOT NULL,
    kind TEXT NOT NULL,
    reg_id TEXT NOT NULL,
    prompt_id TEXT NOT NULL,
    reason TEXT NOT NULL
);
"""

_COLUMNS = "key, recipient, kind, facts, created, due, expires, attempts, last_error"


def _note(row: sqlite3.Row) -> Note:
    return Note(
        key=row["key"],
        recipient=row["recipient"],
        kind=row["kind"],
        facts=PromptFacts.from_json(json.loads(row["facts"])),
        created=row["created"],
        due=row["due"],
        expires=row["expires"],
        attempts=row["attempts"],
        last_error=row["last_error"],
    )


class SQLiteOutbox:
    """The outbox protocol over one SQLite file (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None, timeout=30)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- what the gateway writes -----------------------------------------------------

    def add_now(self, notes: Iterable[Note]) -> int:
        """Write notes (a key written before is kept as it was); how many are new."""
        added = 0
        with self._tx() as db:
            for n in notes:
                cur = db.execute(
                    "INSERT OR IGNORE INTO notify_notes (key, recipient, kind, reg_id, prompt_id,"
                    " facts, created, due, expires, not_before) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (
                        n.key,
                        n.recipient,
                        n.kind,
                        n.facts.reg_id,
                        n.facts.prompt_id,
                        json.dumps(n.facts.to_json()),
                        n.created,
                        n.due,
                        n.expires,
                        n.due,
                    ),
                )
                added += cur.rowcount
        return added

    async def add(self, notes: Iterable[Note]) -> int:
        return self.add_now(notes)

    async def withdraw(
        self,
        reg_id: str,
        prompt_id: str,
        *,
        recipient: str | None = None,
        kinds: tuple[str, ...] = ("opened", "reminder"),
    ) -> int:
        """A prompt was answered (by ``recipient``) or closed: its pending notes of
        ``kinds`` (to ``recipient``) are withdrawn."""
        marks = ",".join("?" for _ in kinds)
        sql = (
            f"UPDATE notify_notes SET state='withdrawn' WHERE reg_id=? AND prompt_id=?"
            f" AND state='pending' AND kind IN ({marks})"
        )
        args: list[Any] = [reg_id, prompt_id, *kinds]
        if recipient is not None:
            sql += " AND recipient=?"
            args.append(recipient)
        with self._tx() as db:
            return db.execute(sql, args).rowcount

    # -- the protocol ------------------------------------------------------------------

    async def claim(
        self, owner: str, now: float, lease: float, *, recipients: int, listed: int
    ) -> list[Batch]:
        batches = []
        with self._tx() as db:
            free = db.execute(
                "SELECT n.recipient, MIN(n.not_before) AS oldest FROM notify_notes n"
                " LEFT JOIN notify_mailboxes m ON m.recipient = n.recipient"
                " WHERE n.state = 'pending' AND n.not_before <= :now"
                " AND (n.expires IS NULL OR n.expires > :now)"
                " AND (m.recipient IS NULL OR ((m.claim IS NULL OR m.claim_until <= :now)"
                " AND (m.next_at IS NULL OR m.next_at <= :now)))"
                " GROUP BY n.recipient ORDER BY oldest, n.recipient LIMIT :limit",
                {"now": now, "limit": recipients},
            ).fetchall()
            for row in free:
                recipient = row["recipient"]
                token = f"{owner}:{uuid.uuid4().hex}"
                db.execute(
                    "INSERT INTO notify_mailboxes (recipient, claim, claim_until) VALUES (?,?,?)"
                    " ON CONFLICT (recipient) DO UPDATE SET claim = excluded.claim,"
                    " claim_until = excluded.claim_until",
                    (recipient, token, now + lease),
                )
                db.execute(
                    "UPDATE notify_notes SET claim = ? WHERE recipient = ? AND state = 'pending'"
                    " AND not_before <= ? AND (expires IS NULL OR expires > ?)",
                    (token, recipient, now, now),
                )
                notes = db.execute(
                    f"SELECT {_COLUMNS} FROM notify_notes WHERE claim = ? AND state = 'pending'"
                    " ORDER BY due, seq LIMIT ?",
                    (token, listed),
                ).fetchall()
                counts = {
                    r["kind"]: r["n"]
                    for r in db.execute(
                        "SELECT kind, COUNT(*) AS n FROM notify_notes WHERE claim = ?"
                        " AND state = 'pending' GROUP BY kind",
                        (token,),
                    )
                }
                last = db.execute(
                    "SELECT last_sent FROM notify_mailboxes WHERE recipient = ?", (recipient,)
                ).fetchone()
                batches.append(
                    Batch(
                        recipient=recipient,
                        token=token,
                        notes=tuple(_note(n) for n in notes),
                        total=sum(counts.values()),
                        counts=counts,
                        last_sent=last["last_sent"],
                    )
                )
        return batches

    def _holds(self, db: sqlite3.Connection, batch: Batch) -> bool:
        row = db.execute(
            "SELECT claim FROM notify_mailboxes WHERE recipient = ?", (batch.recipient,)
        ).fetchone()
        return row is not None and row["claim"] == batch.token

    def _release(self, db: sqlite3.Connection, batch: Batch) -> None:
        db.execute(
            "UPDATE notify_mailboxes SET claim = NULL, claim_until = NULL"
            " WHERE recipient = ? AND claim = ?",
            (batch.recipient, batch.token),
        )

    async def mark_sent(self, batch: Batch, at: float, next_at: float) -> bool:
        with self._tx() as db:
            if not self._holds(db, batch):
                return False
            db.execute(
                "UPDATE notify_notes SET state = 'sent', done_at = ?, claim = NULL"
                " WHERE claim = ? AND state = 'pending'",
                (at, batch.token),
            )
            db.execute(
                "UPDATE notify_mailboxes SET last_sent = ?, next_at = ? WHERE recipient = ?",
                (at, next_at, batch.recipient),
            )
            self._release(db, batch)
        return True

    async def mark_retry(self, batch: Batch, not_before: float, error: str | None) -> bool:
        with self._tx() as db:
            if not self._holds(db, batch):
                return False
            db.execute(
                "UPDATE notify_notes SET not_before = ?, claim = NULL,"
                " attempts = attempts + ?, last_error = COALESCE(?, last_error)"
                " WHERE claim = ? AND state = 'pending'",
                (not_before, 0 if error is None else 1, error, batch.token),
            )
            self._release(db, batch)
        return True

    def _give_up(
        self, db: sqlite3.Connection, rows: list[sqlite3.Row], at: float, reasons: list[str]
    ) -> None:
        for row, reason in zip(rows, reasons, strict=True):
            db.execute(
                "UPDATE notify_notes SET state = 'given_up', done_at = ?, claim = NULL,"
                " last_error = COALESCE(last_error, ?) WHERE key = ?",
                (at, reason, row["key"]),
            )
            db.execute(
                "INSERT INTO notify_audit (at, note_key, recipient, kind, reg_id, prompt_id,"
                " reason) VALUES (?,?,?,?,?,?,?)",
                (at, row["key"], row["recipient"], row["kind"], row["reg_id"], row["prompt_id"])
                + (reason,),
            )

    async def give_up(self, batch: Batch, at: float, reason: str) -> bool:
        with self._tx() as db:
            if not self._holds(db, batch):
                return False
            rows = db.execute(
                "SELECT key, recipient, kind, reg_id, prompt_id FROM notify_notes"
                " WHERE claim = ? AND state = 'pending'",
                (batch.token,),
            ).fetchall()
            self._give_up(db, rows, at, [reason] * len(rows))
            self._release(db, batch)
        return True

    async def give_up_stale(self, at: float, due_before: float) -> list[Note]:
        with self._tx() as db:
            rows = db.execute(
                f"SELECT n.{_COLUMNS.replace(', ', ', n.')}, n.reg_id, n.prompt_id"
                " FROM notify_notes n LEFT JOIN notify_mailboxes m ON m.recipient = n.recipient"
                " WHERE n.state = 'pending' AND (n.due < ? OR (n.expires IS NOT NULL"
                " AND n.expires <= ?)) AND NOT (n.claim IS NOT NULL AND m.claim = n.claim"
                " AND m.claim_until > ?)",
                (due_before, at, at),
            ).fetchall()
            notes = [_note(r) for r in rows]
            self._give_up(db, rows, at, [stale_reason(n, at) for n in notes])
        return notes

    # -- for tests -----------------------------------------------------------------------

    def states(self) -> dict[str, int]:
        """How many notes are in each state."""
        rows = self.db.execute("SELECT state, COUNT(*) AS n FROM notify_notes GROUP BY state")
        return {r["state"]: r["n"] for r in rows}

    def audit(self) -> list[dict[str, Any]]:
        """The audit entries written, oldest first."""
        return [dict(r) for r in self.db.execute("SELECT * FROM notify_audit ORDER BY id")]

    def note(self, key: str) -> dict[str, Any]:
        row = self.db.execute("SELECT * FROM notify_notes WHERE key = ?", (key,)).fetchone()
        return dict(row)
