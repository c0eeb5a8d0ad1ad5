"""The notifications' outbox in the gateway's database (schema version 5).

Two sides, one set of tables (``notify_notes``, ``notify_mailboxes``, ``notify_prefs``):

- **The gateway's transactions** write and withdraw notes with the statements built
  here (:func:`write_notes`, :func:`withdraw`, :func:`count_answers`), run by
  :class:`~hitl_nb.gateway.GatewayStore` inside the transaction that records what they
  tell of: a prompt seen, a forward's end, a prompt closed, a ballot cast. A crash
  between recording and sending loses nothing: the note is in the database.
- **The sender** (:class:`hitl_nb.notify.Sender`) reads them only through
  :class:`StoreOutbox`, the :class:`hitl_nb.notify.Outbox` protocol on the same
  database, whose promises ``tests/notify/test_outbox.py`` checks on SQLite and
  PostgreSQL alike. A claim is a compare-and-set on the recipient's mailbox row (an
  upsert that only takes a free mailbox): of any number of senders, tasks or replicas,
  one holds a recipient at a time, and a claim whose sender died lapses after its
  lease. A note given up leaves an entry in the gateway's audit trail (action
  ``undelivered``, ``display`` the recipient, ``reason`` why), in the same
  transaction.

Each person's own choice (messages off, a webhook of their own) is a row of
``notify_prefs`` (:meth:`StoreOutbox.preference`, :meth:`StoreOutbox.set_preference`).
Notes sent, withdrawn or given up are kept a week (for the audit and so a key is not
written again), then removed by the sweep.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hitl_nb.gateway._chain import append
from hitl_nb.gateway._sql import AUDIT_LOCK, Database, Session, Statement
from hitl_nb.notify import Batch, Note, PromptFacts, stale_reason

__all__ = [
    "KEEP_SECONDS",
    "NotifyChoice",
    "StoreOutbox",
    "count_answers",
    "withdraw",
    "write_notes",
]

#: Notes done (sent, withdrawn, given up) are removed this long after.
KEEP_SECONDS = 7 * 86400.0

_NOTE = "key, recipient, kind, facts, answers, created, due, expires, attempts, last_error"
# A note is not claimable before its recipient's next message is allowed: kept in
# ``not_before`` (here, and by ``mark_sent``), so a claim's look at due notes is an index
# range of what is due, however many notes wait for a recipient's next minute.
_INSERT = (
    "INSERT INTO notify_notes (key, recipient, kind, reg_id, prompt_id, facts, answers, "
    "created, due, expires, not_before) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
    "{greatest}(?, COALESCE((SELECT next_at FROM notify_mailboxes WHERE recipient = ?), 0))) "
    "ON CONFLICT (key) DO NOTHING"
)


def write_notes(notes: Sequence[Note]) -> list[Statement]:
    """The statements that write ``notes`` (a key written before is left as it is)."""
    return [
        (
            _INSERT,
            (
                n.key,
                n.recipient,
                n.kind,
                n.facts.reg_id,
                n.facts.prompt_id,
                json.dumps(n.facts.to_json(), ensure_ascii=False),
                n.facts.answers,
                n.created,
                n.due,
                n.expires,
                n.due,
                n.recipient,
            ),
        )
        for n in notes
    ]


def withdraw(reg_id: str, prompt_id: str, at: float, recipient: str | None = None) -> Statement:
    """The statement that withdraws a prompt's pending ``opened`` and ``reminder``
    notes (``recipient``: only theirs, who answered it), claimed or not: a withdrawn
    note is never sent again, whatever its sender marks."""
    sql = (
        "UPDATE notify_notes SET state = 'withdrawn', done_at = ? WHERE reg_id = ? "
        "AND prompt_id = ? AND state = 'pending' AND kind IN ('opened', 'reminder')"
    )
    args: list[Any] = [at, reg_id, prompt_id]
    if recipient is not None:
        sql += " AND recipient = ?"
        args.append(recipient)
    return sql, args


def count_answers(reg_id: str, prompt_id: str) -> Statement:
    """The statement that brings a prompt's pending notes up to date with how many
    answers it has (a consensus' reminder says how many more are needed)."""
    return (
        "UPDATE notify_notes SET answers = (SELECT count(*) FROM ballots b "
        "WHERE b.reg_id = ? AND b.prompt_id = ?) "
        "WHERE reg_id = ? AND prompt_id = ? AND state = 'pending'",
        (reg_id, prompt_id, reg_id, prompt_id),
    )


def _note(row: Sequence[Any]) -> Note:
    key, recipient, kind, facts, answers, created, due, expires, attempts, last_error = row
    data = json.loads(facts)
    data["answers"] = answers
    return Note(
        key=key,
        recipient=recipient,
        kind=kind,
        facts=PromptFacts.from_json(data),
        created=created,
        due=due,
        expires=expires,
        attempts=attempts,
        last_error=last_error,
    )


@dataclass(frozen=True)
class NotifyChoice:
    """A person's own choice as stored: ``off`` (no messages), ``webhook`` (a webhook
    of theirs in place of email, as they gave it: a Slack-compatible URL, or
    ``teams:URL``; None: email)."""

    off: bool = False
    webhook: str | None = None
    updated: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The choice as ``api/me/notify`` shows it."""
        return {"enabled": not self.off, "webhook": self.webhook}


_FREE = (
    "SELECT n.recipient, min(n.not_before) AS oldest FROM notify_notes n "
    "LEFT JOIN notify_mailboxes m ON m.recipient = n.recipient "
    "WHERE n.state = 'pending' AND n.not_before <= ? AND (n.expires IS NULL OR n.expires > ?) "
    "AND (m.recipient IS NULL OR ((m.claim IS NULL OR m.claim_until <= ?) "
    "AND (m.next_at IS NULL OR m.next_at <= ?))) "
    "GROUP BY n.recipient ORDER BY oldest, n.recipient LIMIT ?"
)
# A compare-and-set: the mailbox is taken only when free (no live claim, its next
# message allowed). On PostgreSQL a racing claim waits for the row and sees it taken.
_TAKE = (
    "INSERT INTO notify_mailboxes (recipient, claim, claim_until) VALUES (?, ?, ?) "
    "ON CONFLICT (recipient) DO UPDATE SET claim = excluded.claim, "
    "claim_until = excluded.claim_until WHERE (notify_mailboxes.claim IS NULL "
    "OR notify_mailboxes.claim_until <= ?) AND (notify_mailboxes.next_at IS NULL "
    "OR notify_mailboxes.next_at <= ?)"
)
_HOLDS = "SELECT last_sent FROM notify_mailboxes WHERE recipient = ? AND claim = ?{for_update}"
_RELEASE = (
    "UPDATE notify_mailboxes SET claim = NULL, claim_until = NULL WHERE recipient = ? AND claim = ?"
)
_REGISTRATION = "SELECT task_id, agent_url FROM registrations WHERE id = ?"


class StoreOutbox:
    """The :class:`hitl_nb.notify.Outbox` protocol over the gateway's database (see
    the module docstring)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # -- the protocol ------------------------------------------------------------------

    async def claim(
        self, owner: str, now: float, lease: float, *, recipients: int, listed: int
    ) -> list[Batch]:
        """Claim the due notes of up to ``recipients`` free recipients."""

        async def work(tx: Session) -> list[Batch]:
            batches = []
            for recipient, _ in await tx.rows(_FREE, (now, now, now, now, recipients)):
                token = f"{owner}:{uuid.uuid4().hex}"
                taken = await tx.count(_TAKE, (recipient, token, now + lease, now, now))
                if taken != 1:
                    continue  # another sender took it meanwhile
                await tx.count(
                    "UPDATE notify_notes SET claim = ? WHERE recipient = ? AND state = 'pending' "
                    "AND not_before <= ? AND (expires IS NULL OR expires > ?)",
                    (token, recipient, now, now),
                )
                notes = await tx.rows(
                    f"SELECT {_NOTE} FROM notify_notes WHERE claim = ? AND state = 'pending' "
                    "ORDER BY due, seq LIMIT ?",
                    (token, listed),
                )
                counts = {
                    str(kind): int(n)
                    for kind, n in await tx.rows(
                        "SELECT kind, count(*) FROM notify_notes WHERE claim = ? "
                        "AND state = 'pending' GROUP BY kind",
                        (token,),
                    )
                }
                ((last,),) = await tx.rows(
                    "SELECT last_sent FROM notify_mailboxes WHERE recipient = ?", (recipient,)
                )
                if not notes:  # withdrawn between the look and the claim
                    await tx.count(_RELEASE, (recipient, token))
                    continue
                batches.append(
                    Batch(
                        recipient=recipient,
                        token=token,
                        notes=tuple(_note(n) for n in notes),
                        total=sum(counts.values()),
                        counts=counts,
                        last_sent=last,
                    )
                )
            return batches

        return await self._db.atomic(work)

    async def mark_sent(self, batch: Batch, at: float, next_at: float) -> bool:
        """The batch went; its recipient's next message not before ``next_at``."""

        async def work(tx: Session) -> bool:
            if not await tx.rows(_HOLDS, (batch.recipient, batch.token)):
                return False
            await tx.count(
                "UPDATE notify_notes SET state = 'sent', done_at = ?, claim = NULL "
                "WHERE claim = ? AND state = 'pending'",
                (at, batch.token),
            )
            await tx.count(
                "UPDATE notify_mailboxes SET last_sent = ?, next_at = ?, claim = NULL, "
                "claim_until = NULL WHERE recipient = ?",
                (at, next_at, batch.recipient),
            )
            await tx.count(
                "UPDATE notify_notes SET not_before = {greatest}(not_before, ?) "
                "WHERE recipient = ? AND state = 'pending' AND not_before < ?",
                (next_at, batch.recipient, next_at),
            )
            return True

        return await self._db.atomic(work)

    async def mark_retry(self, batch: Batch, not_before: float, error: str | None) -> bool:
        """Back to pending until ``not_before`` (an attempt counted when ``error``)."""

        async def work(tx: Session) -> bool:
            if not await tx.rows(_HOLDS, (batch.recipient, batch.token)):
                return False
            await tx.count(
                "UPDATE notify_notes SET not_before = ?, claim = NULL, "
                "attempts = attempts + ?, last_error = COALESCE(?, last_error) "
                "WHERE claim = ? AND state = 'pending'",
                (not_before, 0 if error is None else 1, error, batch.token),
            )
            await tx.count(_RELEASE, (batch.recipient, batch.token))
            return True

        return await self._db.atomic(work)

    async def _give_up(
        self, tx: Session, rows: Sequence[Sequence[Any]], at: float, reasons: Sequence[str]
    ) -> list[int]:
        """Give up each note of ``rows`` (key, recipient, kind, reg_id, prompt_id) still
        pending, with its audit entry; the indexes of those given up here."""
        await tx.rows(self._db.dialect.lock, (AUDIT_LOCK,))
        done = []
        for i, ((key, recipient, _kind, reg_id, prompt_id), reason) in enumerate(
            zip(rows, reasons, strict=True)
        ):
            changed = await tx.count(
                "UPDATE notify_notes SET state = 'given_up', done_at = ?, claim = NULL, "
                "last_error = COALESCE(last_error, ?) WHERE key = ? AND state = 'pending'",
                (at, reason, key),
            )
            if changed:
                found = await tx.rows(_REGISTRATION, (reg_id,))
                task_id, agent_url = found[0] if found else ("", "")
                entry = {
                    "at": at,
                    "reg_id": reg_id,
                    "task_id": task_id,
                    "agent_url": agent_url,
                    "prompt_id": prompt_id,
                    "responder": None,
                    "display": recipient,
                    "action": "undelivered",
                    "status": 0,
                    "reason": reason,
                    "payload_sha256": None,
                    "schema_sha256": None,
                    "responders": [],
                    "agent_reply": None,
                }
                await tx.count(*append(self._db.dialect, entry))
                done.append(i)
        return done

    async def give_up(self, batch: Batch, at: float, reason: str) -> bool:
        """The batch is given up, each note with an audit entry."""

        async def work(tx: Session) -> bool:
            if not await tx.rows(_HOLDS, (batch.recipient, batch.token)):
                return False
            rows = await tx.rows(
                "SELECT key, recipient, kind, reg_id, prompt_id FROM notify_notes "
                "WHERE claim = ? AND state = 'pending' ORDER BY due, seq",
                (batch.token,),
            )
            await self._give_up(tx, rows, at, [reason] * len(rows))
            await tx.count(_RELEASE, (batch.recipient, batch.token))
            return True

        return await self._db.atomic(work)

    async def give_up_stale(self, at: float, due_before: float) -> list[Note]:
        """Give up the unclaimed pending notes that waited too long or expired; remove
        notes done more than :data:`KEEP_SECONDS` ago."""

        async def work(tx: Session) -> list[Note]:
            rows = await tx.rows(
                f"SELECT {', '.join('n.' + c for c in _NOTE.split(', '))}, n.reg_id, "
                "n.prompt_id FROM notify_notes n "
                "LEFT JOIN notify_mailboxes m ON m.recipient = n.recipient "
                "WHERE n.state = 'pending' AND (n.due < ? OR (n.expires IS NOT NULL "
                "AND n.expires <= ?)) AND NOT (n.claim IS NOT NULL AND m.claim = n.claim "
                "AND m.claim_until > ?) ORDER BY n.seq",
                (due_before, at, at),
            )
            notes = [_note(r[:10]) for r in rows]
            keys = [(r[0], r[1], r[2], r[10], r[11]) for r in rows]
            done = await self._give_up(tx, keys, at, [stale_reason(n, at) for n in notes])
            await tx.count(
                "DELETE FROM notify_notes WHERE state <> 'pending' AND done_at < ?",
                (at - KEEP_SECONDS,),
            )
            return [notes[i] for i in done]

        return await self._db.atomic(work)

    # -- each person's choice ------------------------------------------------------------

    async def preference(self, name: str) -> NotifyChoice | None:
        """``name``'s own choice, if they made one."""
        rows = await self._db.rows(
            "SELECT off, webhook, updated FROM notify_prefs WHERE name = ?", (name,)
        )
        if not rows:
            return None
        off, webhook, updated = rows[0]
        return NotifyChoice(bool(off), webhook, updated)

    async def set_preference(self, name: str, choice: NotifyChoice) -> None:
        """Store ``name``'s choice (replacing the one before)."""
        await self._db.count(
            "INSERT INTO notify_prefs (name, off, webhook, updated) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET off = excluded.off, "
            "webhook = excluded.webhook, updated = excluded.updated",
            (name, int(choice.off), choice.webhook, choice.updated),
        )

    # -- for tests and figures -------------------------------------------------------------

    async def states(self) -> dict[str, int]:
        """How many notes are in each state."""
        rows = await self._db.rows("SELECT state, count(*) FROM notify_notes GROUP BY state")
        return {str(state): int(n) for state, n in rows}

    async def depth(self) -> tuple[int, float | None]:
        """The notes waiting to be sent (``pending``) and when the oldest of them was
        written (None: none waits): the outbox's depth, for the metrics."""
        ((count, oldest),) = await self._db.rows(
            "SELECT count(*), min(created) FROM notify_notes WHERE state = 'pending'"
        )
        return int(count), None if oldest is None else float(oldest)
