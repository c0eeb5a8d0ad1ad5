"""What the gateway keeps, and the one store that keeps it (in SQLite or PostgreSQL).

The rows (:class:`Registration`, :class:`PromptRow`, :class:`Ballot`, :class:`Forward`,
:class:`AuditEntry`) are plain values; :class:`GatewayStore` is what the gateway, its push
desk and its forwarder use: every operation written once, as SQL (the schema:
:mod:`hitl_nb.gateway._schema`), over a :class:`~hitl_nb.gateway._sql.Database`, every
method a coroutine so a networked database can sit behind it. Two databases ship:
:class:`~hitl_nb.gateway._sqlite.SQLiteStore`, a file (the Jupyter server's, a hub with
one service process), and :class:`~hitl_nb.gateway._postgres.PostgresStore`, for a hub
whose service runs as several replicas. On each the store keeps these promises, which
``tests/gateway/test_store.py`` checks on each:

- every change is committed when the call returns (a crash after it loses nothing);
- :meth:`GatewayStore.begin_forward` is the at-most-once guard: a unique claim in the
  database, so of any number of callers (tasks of one loop, or processes sharing the
  database) exactly one gets its forward back for a prompt (the others None);
- :meth:`GatewayStore.cast_ballot` writes a responder's answer and reads the prompt's
  answers in one transaction: each caller sees every ballot cast before its own;
- first sightings win (:meth:`GatewayStore.see_prompt`, :meth:`GatewayStore.add_registration`,
  :meth:`GatewayStore.ensure_push_secret`), so racing writers agree on one row;
- replicas (several gateway processes on one database) share the work through it: each
  writes a heartbeat (:meth:`GatewayStore.hold_leases`), a registered task is leased to
  one live replica at a time (its watcher), a lease not renewed for ``ttl`` seconds is
  taken over, and a forward left ``forwarding`` by a replica whose heartbeat stopped is
  adopted by one other (:meth:`GatewayStore.adopt_forwards`), which settles it. Times
  of leases and heartbeats are the database's clock, so replicas on machines whose
  clocks differ agree;
- a store that cannot reach its database raises :class:`StoreUnavailable` (and the
  transaction it was in is rolled back): the host answers 503 naming the database, and
  the next call tries again (no restart);
- notifications (:mod:`hitl_nb.gateway._outbox`, when the gateway turns them on with
  :attr:`GatewayStore.notes_on`): the notes a change causes are written in the
  transaction of that change (a prompt seen, a forward's end, a prompt closed, a
  refusal), and the notes a change makes moot are withdrawn in it (a person's about a
  prompt they answered; every ``opened`` and ``reminder`` note of a prompt that
  closed); :attr:`GatewayStore.outbox` is the sender's side on the same database.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hitl_nb.gateway._chain import append
from hitl_nb.gateway._deadline_store import DeadlineRecords, policy_name
from hitl_nb.gateway._outbox import StoreOutbox, count_answers, withdraw, write_notes
from hitl_nb.gateway._schema import SCHEMA_VERSION, audience
from hitl_nb.gateway._slack_store import SlackRecords
from hitl_nb.gateway._sql import AUDIT_LOCK, Database, Rows, Session, Statement
from hitl_nb.notify import Note, person

__all__ = [
    "AuditEntry",
    "Ballot",
    "Chained",
    "Forward",
    "GatewayStore",
    "Listed",
    "OpenQuery",
    "PromptRow",
    "Registration",
    "StoreUnavailable",
    "unstorable",
]


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable(text: str) -> str | None:
    """What in ``text`` no store can keep as text, in words (None: nothing): a NUL
    character (U+0000, which PostgreSQL's text refuses) or a lone surrogate (not UTF-8).
    Both stores refuse the same text, so checked before anything is written; JSON text
    escapes them, so only what goes into a text column of its own needs the check."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    char, at = found.group(), found.start()
    if char == "\x00":
        return f"a NUL character (U+0000) at position {at}"
    return f"a lone surrogate (U+{ord(char):04X}) at position {at}"


class StoreUnavailable(Exception):
    """The gateway's database cannot be reached (or went away mid-transaction, which
    was rolled back). ``where`` names it for people (never its password)."""

    def __init__(self, where: str, detail: str) -> None:
        super().__init__(f"{where} cannot be reached ({detail})")
        self.where = where
        self.detail = detail


@dataclass(frozen=True)
class Registration:
    """A task someone asked the gateway to watch. ``registered_by`` is the name shown,
    ``registrant`` the user name the host vouched for (None: a host that cannot tell
    its users apart). ``two_person``: the registrant turned the two-person rule on for
    this task (the gateway's setting may turn it on for every task)."""

    id: str
    agent_url: str
    task_id: str
    registered_by: str
    created: float
    registrant: str | None = None
    two_person: bool = False

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
    #: The replica that claimed (or adopted) it; "" when not known.
    owner: str = ""


@dataclass(frozen=True)
class OpenQuery:
    """Which open prompts a listing shows (``GET api/prompts``), soonest deadline first.

    ``see_all``: every prompt (a Jupyter server, a hub administrator); else those
    ``viewer`` registered or may answer. ``agent``: only this agent URL.
    ``for_responder``: only prompts ``responder`` may answer (None: an unnamed caller,
    who may answer only prompts for anyone). ``due_before``: only deadlines up to then.
    ``registration``: only the prompts of this registration (the feed reads one task's
    again when it hears of a change there). ``registered``: only prompts of tasks
    ``viewer`` registered (None: tasks registered by a caller the host could not name).
    """

    viewer: str | None
    see_all: bool = False
    agent: str | None = None
    for_responder: bool = False
    responder: str | None = None
    due_before: float | None = None
    registration: str | None = None
    registered: bool = False


@dataclass(frozen=True)
class Listed:
    """One prompt of a listing, with what its view needs."""

    reg: Registration
    row: PromptRow
    forward: Forward | None
    ballots: list[Ballot]


@dataclass(frozen=True)
class Chained:
    """An entry of the audit trail with its link in the chain
    (:mod:`hitl_nb.gateway._chain`): its place ``seq``, the previous entry's hash and
    its own (None: an entry no chain holds, written by an older hitl-nb after the
    database was upgraded)."""

    entry: AuditEntry
    seq: int | None
    prev_hash: str | None
    hash: str | None

    def to_json(self) -> dict[str, Any]:
        """The entry as an export shows it: :meth:`AuditEntry.to_json` and the link."""
        return {
            **self.entry.to_json(),
            "seq": self.seq,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }


@dataclass(frozen=True)
class AuditEntry:
    """One line of the audit trail: an answer given, or what became of a forward.

    ``action``: ``held`` (a consensus answer counted, waiting for more), ``forwarded``
    (the agent accepted it), ``forwarding`` (sent, the agent's reply lost: the gateway
    makes sure it lands once), ``refused`` (the gateway turned it away: ``reason``),
    ``rejected`` (the agent refused it), ``failed`` (the agent could not be told),
    ``closed`` (the prompt was answered elsewhere). ``responder`` is None for what
    the gateway did by itself (a forward settled after a restart). ``id`` orders the
    trail (assigned by the store; 0 before it is stored).
    """

    at: float
    reg_id: str
    task_id: str
    agent_url: str
    prompt_id: str
    responder: str | None
    display: str | None
    action: str
    status: int
    reason: str | None
    payload_sha256: str | None
    schema_sha256: str | None
    responders: list[str] = field(default_factory=list)
    agent_reply: dict[str, Any] | None = None
    id: int = 0

    def to_json(self) -> dict[str, Any]:
        """The entry as ``GET api/audit`` shows it (one JSON line of the export)."""
        return {
            "id": self.id,
            "at": self.at,
            "registration": self.reg_id,
            "task_id": self.task_id,
            "agent_url": self.agent_url,
            "prompt_id": self.prompt_id,
            "responder": self.responder,
            "display_name": self.display,
            "action": self.action,
            "status": self.status,
            "reason": self.reason,
            "payload_sha256": self.payload_sha256,
            "response_schema_sha256": self.schema_sha256,
            "responders": list(self.responders),
            "agent_reply": self.agent_reply,
        }


_REG = "id, agent_url, task_id, registered_by, created, registrant, two_person"
_PROMPT = "reg_id, prompt_id, context_id, envelope, deadline, first_seen, closed"
_FORWARD = "reg_id, prompt_id, message_id, payload, responders, state, detail, at, owner"
_AUDIT = (
    "at, reg_id, task_id, agent_url, prompt_id, responder, display, action, status, "
    "reason, payload_sha256, schema_sha256, responders, agent_reply"
)


def _columns(table: str, columns: str) -> str:
    return ", ".join(f"{table}.{c}" for c in columns.split(", "))


_REG_R = _columns("r", _REG)
_PROMPT_P = _columns("p", _PROMPT)
_FORWARD_F = _columns("f", _FORWARD)
_BALLOTS = "SELECT responder, payload, at FROM ballots WHERE reg_id = ? AND prompt_id = ?"
_ORDER = "ORDER BY p.deadline IS NULL, p.deadline, p.first_seen, p.prompt_id"
_UPSERT_LEASE = (
    "ON CONFLICT (reg_id) DO UPDATE SET holder = excluded.holder, expires = excluded.expires "
    "WHERE leases.expires < {now}"
)


class GatewayStore:
    """The gateway's database, every operation once (see the module docstring): made
    by :class:`~hitl_nb.gateway._sqlite.SQLiteStore` or
    :class:`~hitl_nb.gateway._postgres.PostgresStore` over their database."""

    def __init__(self, db: Database) -> None:
        self._db = db
        # A registration never changes once written (the first one of a task wins, and
        # none is deleted): each is read from the database once. An answer looks its
        # registration up first; this saves that round trip.
        self._registrations: dict[str, Registration] = {}
        #: The notifications' outbox on this database (the sender's side).
        self.outbox = StoreOutbox(db)
        #: A Slack app's messages and the requests it took, on this database.
        self.slack = SlackRecords(db)
        #: The deadline policies and the actions fired at deadlines, on this database.
        self.deadlines = DeadlineRecords(db)
        #: Withdraw notes when prompts are answered or closed (set by a gateway that
        #: notifies; notes passed in are written either way).
        self.notes_on = False

    @property
    def where(self) -> str:
        """The database in words, for messages (``PostgreSQL hitl at db.example:5432``)."""
        return self._db.where

    @property
    def found_version(self) -> int | None:
        """The schema version the database had when opened (0: new; None: not opened yet)."""
        return self._db.found_version

    async def open(self, upto: int = SCHEMA_VERSION) -> None:
        """Connect and bring the schema up to date (the host calls it at start; each
        call opens first when needed). ``upto``: lower only to make an older database
        in tests."""
        await self._db.open(upto)

    async def close(self) -> None:
        """Let go of the database."""
        await self._db.close()

    # -- registrations ---------------------------------------------------------------

    async def add_registration(self, reg: Registration) -> Registration:
        """Store ``reg``; an existing registration of the same task wins (returned)."""
        args = (
            reg.id,
            reg.agent_url,
            reg.task_id,
            reg.registered_by,
            reg.created,
            reg.registrant,
            int(reg.two_person),
        )
        _, found = await self._db.batch(
            [
                (
                    f"INSERT INTO registrations ({_REG}) VALUES (?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT DO NOTHING",
                    args,
                ),
                (
                    f"SELECT {_REG} FROM registrations WHERE agent_url = ? AND task_id = ?",
                    (reg.agent_url, reg.task_id),
                ),
            ]
        )
        return self._known(found[0])

    def _known(self, row: Sequence[Any]) -> Registration:
        reg = self._registrations.get(row[0])
        if reg is None:
            reg = self._registrations[row[0]] = _registration(row)
        return reg

    async def find_registration(self, agent_url: str, task_id: str) -> Registration | None:
        """The registration of this task, if any."""
        rows = await self._db.rows(
            f"SELECT {_REG} FROM registrations WHERE agent_url = ? AND task_id = ?",
            (agent_url, task_id),
        )
        return self._known(rows[0]) if rows else None

    async def registration(self, reg_id: str) -> Registration | None:
        """The registration with this id, if any."""
        reg = self._registrations.get(reg_id)
        if reg is None:
            rows = await self._db.rows(f"SELECT {_REG} FROM registrations WHERE id = ?", (reg_id,))
            reg = self._known(rows[0]) if rows else None
        return reg

    async def registrations(self) -> list[Registration]:
        """Every registration, oldest first."""
        rows = await self._db.rows(f"SELECT {_REG} FROM registrations ORDER BY created, id")
        return [self._known(r) for r in rows]

    async def count_registrations(self) -> int:
        """How many tasks are registered."""
        return int((await self._db.rows("SELECT count(*) FROM registrations"))[0][0])

    # -- prompts ---------------------------------------------------------------------

    async def see_prompt(
        self,
        reg_id: str,
        prompt_id: str,
        context_id: str | None,
        envelope: dict[str, Any],
        deadline: float | None,
        notes: Callable[[float], Sequence[Note]] | None = None,
    ) -> PromptRow:
        """Record a prompt the agent shows (first sighting wins); returns the row.
        ``notes``: the notes its first sighting writes, in the same transaction (given
        the time it was first seen)."""
        row = await self.prompt(reg_id, prompt_id)
        if row is not None:
            return row  # the usual case: a prompt seen again
        names, needed = audience(envelope)
        text = json.dumps(envelope)
        first_seen = time.time()

        async def work(tx: Session) -> bool:
            inserted = await tx.count(
                f"INSERT INTO prompts ({_PROMPT}, needed, named) "
                "VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?) ON CONFLICT DO NOTHING",
                (
                    reg_id,
                    prompt_id,
                    context_id,
                    text,
                    deadline,
                    first_seen,
                    needed,
                    int(bool(names)),
                ),
            )
            if inserted and names:
                await tx.many(
                    "INSERT INTO audience (reg_id, prompt_id, name) VALUES (?, ?, ?)",
                    [(reg_id, prompt_id, n) for n in names],
                )
            if inserted and notes is not None:
                for sql, args in write_notes(notes(first_seen)):
                    await tx.count(sql, args)
            return inserted == 1

        if await self._db.atomic(work):
            return PromptRow(
                reg_id, prompt_id, context_id, json.loads(text), deadline, first_seen, None
            )
        row = await self.prompt(reg_id, prompt_id)  # another sighting was first
        assert row is not None
        return row

    async def prompt(self, reg_id: str, prompt_id: str) -> PromptRow | None:
        """The prompt row, if the gateway has seen it."""
        rows = await self._db.rows(
            f"SELECT {_PROMPT} FROM prompts WHERE reg_id = ? AND prompt_id = ?",
            (reg_id, prompt_id),
        )
        return _prompt(rows[0]) if rows else None

    async def prompt_and_forward(
        self, reg_id: str, prompt_id: str
    ) -> tuple[PromptRow | None, Forward | None]:
        """The prompt row and its forward (each None when absent), read together: what
        an answer is checked against, in one round trip."""
        rows = await self._db.rows(
            f"SELECT {_PROMPT_P}, {_FORWARD_F} FROM prompts p "
            "LEFT JOIN forwards f ON f.reg_id = p.reg_id AND f.prompt_id = p.prompt_id "
            "WHERE p.reg_id = ? AND p.prompt_id = ?",
            (reg_id, prompt_id),
        )
        if not rows:
            return None, None
        row = rows[0]
        return _prompt(row[:7]), None if row[7] is None else _forward(row[7:])

    async def prompts(self, reg_id: str) -> list[PromptRow]:
        """The registration's prompts, first seen first."""
        rows = await self._db.rows(
            f"SELECT {_PROMPT} FROM prompts WHERE reg_id = ? ORDER BY first_seen, prompt_id",
            (reg_id,),
        )
        return [_prompt(r) for r in rows]

    async def open_prompts(self) -> list[PromptRow]:
        """Every prompt still open here."""
        rows = await self._db.rows(f"SELECT {_PROMPT} FROM prompts WHERE closed IS NULL")
        return [_prompt(r) for r in rows]

    async def close_prompt(
        self, reg_id: str, prompt_id: str, why: str, notes: Sequence[Note] = ()
    ) -> bool:
        """Mark an open prompt closed (``why``); False if it was closed already. When it
        closes here, ``notes`` are written and its pending notes withdrawn, in the same
        transaction."""
        close = (
            "UPDATE prompts SET closed = ? WHERE reg_id = ? AND prompt_id = ? AND closed IS NULL",
            (why, reg_id, prompt_id),
        )
        if not notes and not self.notes_on:
            return await self._db.count(*close) == 1

        async def work(tx: Session) -> bool:
            if await tx.count(*close) != 1:
                return False
            for sql, args in [withdraw(reg_id, prompt_id, time.time()), *write_notes(notes)]:
                await tx.count(sql, args)
            return True

        return await self._db.atomic(work)

    async def list_open(self, query: OpenQuery, limit: int) -> tuple[list[Listed], int]:
        """The first ``limit`` open prompts ``query`` selects, soonest deadline first
        (then first seen, prompt id), and how many it selects in all.

        The page and its count come from one statement; its forwards and ballots are
        read just after (no transaction), so a forward made in between shows, as a
        later listing would show it."""
        where, args = _selection(query)
        joined = f"FROM prompts p JOIN registrations r ON r.id = p.reg_id WHERE {where}"
        rows = await self._db.rows(
            f"SELECT {_REG_R}, {_PROMPT_P}, (SELECT count(*) {joined}) {joined} {_ORDER} LIMIT ?",
            (*args, *args, limit),
        )
        if not rows:
            total = await self._db.rows(f"SELECT count(*) {joined}", args)
            return [], int(total[0][0])
        keys = [(r[7], r[8]) for r in rows]
        pairs = f"(reg_id, prompt_id) IN (VALUES {', '.join('(?, ?)' for _ in keys)})"
        flat = [v for key in keys for v in key]
        forwards = {
            (f[0], f[1]): _forward(f)
            for f in await self._db.rows(f"SELECT {_FORWARD} FROM forwards WHERE {pairs}", flat)
        }
        ballots: dict[tuple[str, str], list[Ballot]] = {}
        for reg_id, prompt_id, responder, payload, at in await self._db.rows(
            f"SELECT reg_id, prompt_id, responder, payload, at FROM ballots WHERE {pairs} "
            "ORDER BY at, responder",
            flat,
        ):
            ballots.setdefault((reg_id, prompt_id), []).append(Ballot(responder, payload, at))
        listed = [
            Listed(_registration(r[:7]), _prompt(r[7:14]), forwards.get(k), ballots.get(k, []))
            for r, k in zip(rows, keys, strict=True)
        ]
        return listed, int(rows[0][14])

    async def due_prompts(self, before: float) -> list[PromptRow]:
        """Open prompts whose deadline is at most ``before``."""
        rows = await self._db.rows(
            f"SELECT {_PROMPT} FROM prompts WHERE closed IS NULL AND deadline IS NOT NULL "
            "AND deadline <= ?",
            (before,),
        )
        return [_prompt(r) for r in rows]

    # -- ballots ---------------------------------------------------------------------

    async def cast_ballot(
        self, reg_id: str, prompt_id: str, responder: str, payload: str
    ) -> list[Ballot]:
        """Record (or replace) a responder's answer; the prompt's ballots after it,
        oldest first, read in the same transaction.

        The prompt's row is locked first (PostgreSQL; SQLite locks the file), so ballots
        of one prompt are counted one after the other across replicas; the ballots are
        read by a statement of their own, after the lock was granted (a snapshot that
        holds every ballot committed before)."""
        *_, rows = await self._db.batch(self._casting(reg_id, prompt_id, responder, payload))
        return [Ballot(*r) for r in rows]

    async def cast_and_decide(
        self,
        reg_id: str,
        prompt_id: str,
        responder: str,
        payload: str,
        decide: Callable[[list[Ballot]], AuditEntry | Forward],
    ) -> tuple[list[Ballot], Forward | None]:
        """:meth:`cast_ballot`, and in the same transaction what ``decide`` makes of
        the ballots: an entry of the audit trail (the answer is held) is appended, or a
        forward (the answer completes the consensus) is claimed as
        :meth:`begin_forward` claims it. The ballots, and the forward if this call
        claimed it (None: another claimed it before, or an entry was appended).

        One transaction where :meth:`cast_ballot` then :meth:`add_audit` or
        :meth:`begin_forward` were two: on PostgreSQL two queries on one connection."""
        cast: list[Ballot] = []
        claiming: list[Forward] = []

        def then(results: list[Rows]) -> list[Statement]:
            cast[:] = [Ballot(*r) for r in results[-1]]
            decided = decide(list(cast))
            if isinstance(decided, AuditEntry):
                claiming.clear()
                return self._appending(decided)
            claiming[:] = [decided]
            key = (decided.reg_id, decided.prompt_id)
            return [
                _claim(decided),
                (
                    "SELECT message_id = ? FROM forwards WHERE reg_id = ? AND prompt_id = ?",
                    (decided.message_id, *key),
                ),
            ]

        steps = self._casting(reg_id, prompt_id, responder, payload)
        *_, last = await self._db.batch(steps, then=then)
        return cast, claiming[0] if claiming and last and last[0][0] else None

    def _casting(
        self, reg_id: str, prompt_id: str, responder: str, payload: str
    ) -> list[Statement]:
        key = (reg_id, prompt_id)
        at = time.time()
        steps: list[Statement] = [
            ("SELECT 1 FROM prompts WHERE reg_id = ? AND prompt_id = ?{for_update}", key),
            (
                "INSERT INTO ballots (reg_id, prompt_id, responder, payload, at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (reg_id, prompt_id, responder) "
                "DO UPDATE SET payload = excluded.payload, at = excluded.at",
                (*key, responder, payload, at),
            ),
        ]
        if self.notes_on:  # they answered: no reminder for them; the others' counts
            steps += [withdraw(*key, at, person(responder)), count_answers(*key)]
        steps.append((f"{_BALLOTS} ORDER BY at, responder", key))
        return steps

    async def ballots(self, reg_id: str, prompt_id: str) -> list[Ballot]:
        """The answers collected for a prompt, oldest first."""
        rows = await self._db.rows(f"{_BALLOTS} ORDER BY at, responder", (reg_id, prompt_id))
        return [Ballot(*r) for r in rows]

    async def all_ballots(self) -> dict[tuple[str, str], list[Ballot]]:
        """Every collected answer, by (registration, prompt)."""
        out: dict[tuple[str, str], list[Ballot]] = {}
        for reg_id, prompt_id, responder, payload, at in await self._db.rows(
            "SELECT reg_id, prompt_id, responder, payload, at FROM ballots ORDER BY at, responder"
        ):
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
        """Write-ahead: claim the prompt's one forward (for replica ``owner``); the
        forward as written (``forwarding``), or None if it was claimed before. The claim
        is the row's primary key: of any number of callers, one inserts it."""
        at = time.time()
        fwd = Forward(
            reg_id, prompt_id, message_id, payload, list(responders), "forwarding", None, at, owner
        )
        inserted = await self._db.count(*_claim(fwd))
        return fwd if inserted == 1 else None

    async def finish_forward(
        self,
        reg_id: str,
        prompt_id: str,
        state: str,
        detail: str,
        *,
        closed: str | None = None,
        notes: Sequence[Note] = (),
        audit: AuditEntry | None = None,
    ) -> bool:
        """Record how a forward still ``forwarding`` ended (``forwarded`` or ``failed``);
        with ``closed``, the prompt is closed for that reason in the same transaction
        (if still open, its pending notes withdrawn); ``notes`` are written in it too
        (under keys of their own: a second writer's are left out), and ``audit`` is
        appended to the audit trail in it (whichever call ended it). True when this call
        ended it; False when it had ended already: two replicas finish one forward when
        one took the other for dead while it was only slow (its heartbeat late), and the
        first to finish records it."""
        key = (reg_id, prompt_id)
        at = time.time()
        steps: list[Statement] = [
            (
                "UPDATE forwards SET state = ?, detail = ?, at = ? "
                "WHERE reg_id = ? AND prompt_id = ? AND state = 'forwarding'",
                (state, detail, at, *key),
            )
        ]
        if closed is not None:
            steps.append(
                (
                    "UPDATE prompts SET closed = ? "
                    "WHERE reg_id = ? AND prompt_id = ? AND closed IS NULL",
                    (closed, *key),
                )
            )
            if self.notes_on:
                steps.append(withdraw(*key, at))
        steps.extend(write_notes(notes))
        if audit is not None:
            steps.extend(self._appending(audit))
        # Which call ended it, in the same round trip: the one whose time is written.
        steps.append(("SELECT at = ? FROM forwards WHERE reg_id = ? AND prompt_id = ?", (at, *key)))
        *_, mine = await self._db.batch(steps)
        return bool(mine and mine[0][0])

    async def drop_forward(
        self,
        reg_id: str,
        prompt_id: str,
        notes: Sequence[Note] = (),
        audit: AuditEntry | None = None,
    ) -> None:
        """Forget a forward the agent refused (422): the prompt may be answered again;
        ``notes`` (the refusal told) are written and ``audit`` appended in the same
        transaction."""
        await self._db.batch(
            [
                ("DELETE FROM forwards WHERE reg_id = ? AND prompt_id = ?", (reg_id, prompt_id)),
                *write_notes(notes),
                *([] if audit is None else self._appending(audit)),
            ]
        )

    async def forward(self, reg_id: str, prompt_id: str) -> Forward | None:
        """The prompt's forward, if one was claimed."""
        rows = await self._db.rows(
            f"SELECT {_FORWARD} FROM forwards WHERE reg_id = ? AND prompt_id = ?",
            (reg_id, prompt_id),
        )
        return _forward(rows[0]) if rows else None

    async def all_forwards(self) -> dict[tuple[str, str], Forward]:
        """Every forward, by (registration, prompt)."""
        rows = await self._db.rows(f"SELECT {_FORWARD} FROM forwards")
        return {(r[0], r[1]): _forward(r) for r in rows}

    async def unsettled_forwards(self) -> list[Forward]:
        """Forwards whose fate is unknown (a crash or a lost connection mid-forward)."""
        rows = await self._db.rows(f"SELECT {_FORWARD} FROM forwards WHERE state = 'forwarding'")
        return [_forward(r) for r in rows]

    async def adopt_forwards(self, replica: str) -> list[Forward]:
        """Take over the unsettled forwards of replicas whose heartbeat stopped (and
        those of no known owner); every unsettled forward ``replica`` now owns."""
        _, mine = await self._db.batch(
            [
                (
                    "UPDATE forwards SET owner = ? WHERE state = 'forwarding' AND owner NOT IN "
                    "(SELECT id FROM replicas WHERE expires > {now})",
                    (replica,),
                ),
                (
                    f"SELECT {_FORWARD} FROM forwards WHERE state = 'forwarding' AND owner = ?",
                    (replica,),
                ),
            ]
        )
        return [_forward(r) for r in mine]

    # -- replicas and leases ---------------------------------------------------------

    async def hold_leases(self, replica: str, ttl: float) -> set[str]:
        """Write ``replica``'s heartbeat, renew its leases, take free or expired ones up
        to its fair share (registrations still watched, divided by live replicas) and
        give back what it holds beyond that; the registrations it holds now. Written
        apart from the other calls (:meth:`~hitl_nb.gateway._sql.Database.apart`): a
        heartbeat that waited behind busy requests for a connection would come late,
        and the others would take this live replica for dead."""

        async def work(tx: Session) -> set[str]:
            ((now,),) = await tx.rows("SELECT {now}")
            await tx.rows(
                "INSERT INTO replicas (id, started, expires) VALUES (?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET expires = excluded.expires",
                (replica, now, now + ttl),
            )
            await tx.rows("DELETE FROM replicas WHERE expires < ?", (now - 3600,))
            ((live, watched),) = await tx.rows(
                "SELECT (SELECT count(*) FROM replicas WHERE expires > ?), "
                "(SELECT count(*) FROM registrations WHERE ended IS NULL)",
                (now,),
            )
            share = -(-int(watched) // max(int(live), 1))
            await tx.rows("UPDATE leases SET expires = ? WHERE holder = ?", (now + ttl, replica))
            held = [r[0] for r in await tx.rows(_HELD, (replica,))]
            if len(held) > share:
                beyond, args = self._db.dialect.one_of("reg_id", held[share:])
                await tx.rows(f"DELETE FROM leases WHERE holder = ? AND {beyond}", (replica, *args))
                return set(held[:share])
            if len(held) < share:
                await tx.rows(
                    "INSERT INTO leases (reg_id, holder, expires) "
                    "SELECT r.id, ?, ? FROM registrations r LEFT JOIN leases l ON l.reg_id = r.id "
                    "WHERE r.ended IS NULL AND (l.reg_id IS NULL OR l.expires < ?) "
                    f"ORDER BY r.created, r.id LIMIT ? {_UPSERT_LEASE}",
                    (replica, now + ttl, now, share - len(held)),
                )
                held = [r[0] for r in await tx.rows(_HELD, (replica,))]
            return set(held)

        return await self._db.apart(work)

    async def take_lease(self, reg_id: str, replica: str, ttl: float) -> bool:
        """Lease one registration to ``replica`` if nobody holds it (a new task)."""
        taken = await self._db.count(
            "INSERT INTO leases (reg_id, holder, expires) VALUES (?, ?, {now} + ?) "
            f"{_UPSERT_LEASE} OR leases.holder = ?",
            (reg_id, replica, ttl, replica),
        )
        return taken == 1

    async def end_watch(self, reg_id: str) -> None:
        """The task ended: no replica watches it any more (its lease is dropped)."""
        await self._db.batch(
            [
                ("UPDATE registrations SET ended = ? WHERE id = ?", (time.time(), reg_id)),
                ("DELETE FROM leases WHERE reg_id = ?", (reg_id,)),
            ]
        )

    async def leave(self, replica: str) -> None:
        """``replica`` stops: its heartbeat and leases go, for others to take at once."""
        await self._db.batch(
            [
                ("DELETE FROM leases WHERE holder = ?", (replica,)),
                ("DELETE FROM replicas WHERE id = ?", (replica,)),
            ]
        )

    # -- push secrets ----------------------------------------------------------------

    async def push_secret(self, reg_id: str) -> str | None:
        """The registration's push secret, if one was made."""
        rows = await self._db.rows("SELECT secret FROM push WHERE reg_id = ?", (reg_id,))
        return str(rows[0][0]) if rows else None

    async def ensure_push_secret(self, reg_id: str, candidate: str) -> str:
        """The registration's push secret: ``candidate`` unless one exists already."""
        _, found = await self._db.batch(
            [
                (
                    "INSERT INTO push (reg_id, secret) VALUES (?, ?) ON CONFLICT DO NOTHING",
                    (reg_id, candidate),
                ),
                ("SELECT secret FROM push WHERE reg_id = ?", (reg_id,)),
            ]
        )
        return str(found[0][0])

    async def mark_push_configured(self, reg_id: str, at: float) -> None:
        """An agent accepted the push configuration of this registration."""
        await self._db.count("UPDATE push SET configured = ? WHERE reg_id = ?", (at, reg_id))

    async def push_configured(self, reg_id: str) -> bool:
        """Has an agent accepted a push configuration for this registration?"""
        rows = await self._db.rows("SELECT configured FROM push WHERE reg_id = ?", (reg_id,))
        return bool(rows and rows[0][0] is not None)

    async def count_push(self, reg_id: str) -> None:
        """One more notification was accepted for this registration."""
        await self._db.count("UPDATE push SET received = received + 1 WHERE reg_id = ?", (reg_id,))

    # -- the audit trail -------------------------------------------------------------

    async def add_audit(self, entry: AuditEntry) -> None:
        """Append one entry (its ``id`` is assigned here). Entries are appended one
        after another (``serial``), so they become visible in id order: a reader paging
        with ``after`` never skips one committed late. An entry about a change is
        appended in that change's transaction instead where the change offers it
        (``audit`` of :meth:`cast_ballot`, :meth:`finish_forward`,
        :meth:`drop_forward`), under the same lock."""
        await self._db.batch([append(self._db.dialect, _values(entry))], serial="audit")

    def appending(self, entry: AuditEntry) -> list[Statement]:
        """The statements that append ``entry`` in a transaction of another's making
        (a deadline's action ended: :meth:`DeadlineRecords.finish`)."""
        return self._appending(entry)

    def _appending(self, entry: AuditEntry) -> list[Statement]:
        """The statements that append ``entry`` inside a larger transaction: the audit
        trail's lock first (held to its commit, as :meth:`add_audit`'s), then the entry
        as the chain's next link (:func:`hitl_nb.gateway._chain.append`)."""
        return [(self._db.dialect.lock, (AUDIT_LOCK,)), append(self._db.dialect, _values(entry))]

    async def audit(
        self, reg_ids: list[str] | None = None, *, after: int = 0, limit: int = 1000
    ) -> list[AuditEntry]:
        """Entries with an id above ``after``, oldest first, at most ``limit``;
        ``reg_ids``: only those registrations' (None: all)."""
        if reg_ids is not None and not reg_ids:
            return []
        where, args = "id > ?", [after]
        if reg_ids is not None:
            among, more = self._db.dialect.one_of("reg_id", reg_ids)
            where, args = f"{among} AND {where}", [*more, after]
        rows = await self._db.rows(
            f"SELECT id, {_AUDIT} FROM audit WHERE {where} ORDER BY id LIMIT ?", (*args, limit)
        )
        return [_audit(r) for r in rows]

    async def chain_span(
        self, since: float | None = None, until: float | None = None
    ) -> tuple[int | None, int | None]:
        """The places in the chain (``seq``) of the first entry written at or after
        ``since`` and the last written at or before ``until`` (None: no bound given, or
        no bound given; a bound no entry meets gives a run that holds none): a time range
        as one run of the chain."""
        first = last = None
        if since is not None:
            ((first,),) = await self._db.rows("SELECT min(seq) FROM audit WHERE at >= ?", (since,))
            first = _NO_PLACE if first is None else int(first)
        if until is not None:
            ((last,),) = await self._db.rows("SELECT max(seq) FROM audit WHERE at <= ?", (until,))
            last = 0 if last is None else int(last)
        return first, last

    async def audit_chain(
        self,
        *,
        after: int = 0,
        limit: int = 1000,
        registration: str | None = None,
        first: int | None = None,
        last: int | None = None,
    ) -> list[Chained]:
        """Entries with their links, in the order they were written (``id`` above
        ``after``), at most ``limit``; ``registration``: only its entries; ``first``,
        ``last``: only places in the chain from ``first`` to ``last``
        (:meth:`chain_span`)."""
        where, args = ["id > ?"], list[Any]([after])
        if registration is not None:
            where.append("reg_id = ?")
            args.append(registration)
        if first is not None:
            where.append("seq >= ?")
            args.append(first)
        if last is not None:
            where.append("seq <= ?")
            args.append(last)
        rows = await self._db.rows(
            f"SELECT id, {_AUDIT}, seq, prev_hash, hash FROM audit "
            f"WHERE {' AND '.join(where)} ORDER BY id LIMIT ?",
            (*args, limit),
        )
        return [
            Chained(_audit(r[:15]), None if r[15] is None else int(r[15]), r[16], r[17])
            for r in rows
        ]

    async def open_by_kind(self) -> dict[tuple[str, str], int]:
        """How many prompts are open (no answer on its way or delivered) by the kind of
        who may answer: ``any``, ``specific`` (named people) or ``consensus`` (more than
        one must agree), and by their registration's deadline policy (remind, escalate,
        default, cancel), for the metrics."""
        policy, args = policy_name("d.policy")
        rows = await self._db.rows(
            "SELECT CASE WHEN p.needed > 1 THEN 'consensus' WHEN p.named = 1 THEN 'specific' "
            f"ELSE 'any' END AS kind, {policy} AS policy, count(*) FROM prompts p "
            "LEFT JOIN deadline_policies d ON d.reg_id = p.reg_id WHERE p.closed IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM forwards f WHERE f.reg_id = p.reg_id "
            "AND f.prompt_id = p.prompt_id AND f.state IN ('forwarding', 'forwarded')) "
            "GROUP BY 1, 2",
            args,
        )
        return {(str(kind), str(name)): int(n) for kind, name, n in rows}


#: Beyond any place in the chain.
_NO_PLACE = 2**62
_HELD = "SELECT reg_id FROM leases WHERE holder = ? ORDER BY reg_id"


def _claim(fwd: Forward) -> Statement:
    """The statement that claims a prompt's forward (changes nothing when claimed)."""
    args = (fwd.reg_id, fwd.prompt_id, fwd.message_id, fwd.payload, json.dumps(fwd.responders))
    return (
        f"INSERT INTO forwards ({_FORWARD}) "
        "VALUES (?, ?, ?, ?, ?, 'forwarding', NULL, ?, ?) ON CONFLICT DO NOTHING",
        (*args, fwd.at, fwd.owner),
    )


def _values(entry: AuditEntry) -> dict[str, Any]:
    """``entry``'s values by the audit table's column names (:func:`_chain.append`)."""
    return {
        "at": entry.at,
        "reg_id": entry.reg_id,
        "task_id": entry.task_id,
        "agent_url": entry.agent_url,
        "prompt_id": entry.prompt_id,
        "responder": entry.responder,
        "display": entry.display,
        "action": entry.action,
        "status": entry.status,
        "reason": entry.reason,
        "payload_sha256": entry.payload_sha256,
        "schema_sha256": entry.schema_sha256,
        "responders": list(entry.responders),
        "agent_reply": entry.agent_reply,
    }


def _may(name: str | None, args: list[Any]) -> str:
    """SQL: may ``name`` answer prompt ``p`` (the rule of :func:`_schema.audience`)?"""
    if name is None:
        return "(p.named = 0 AND p.needed <= 1)"
    args.append(name)
    return (
        "(p.named = 0 OR EXISTS (SELECT 1 FROM audience a WHERE a.reg_id = p.reg_id "
        "AND a.prompt_id = p.prompt_id AND a.name = ?))"
    )


def _selection(query: OpenQuery) -> tuple[str, list[Any]]:
    """SQL for the prompts ``query`` selects (``p``: prompts, ``r``: registrations)."""
    args: list[Any] = []
    where = ["p.closed IS NULL"]
    if query.registration is not None:
        where.append("p.reg_id = ?")
        args.append(query.registration)
    if query.registered:
        if query.viewer is None:
            where.append("r.registrant IS NULL")
        else:
            where.append("r.registrant = ?")
            args.append(query.viewer)
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


def _registration(row: Sequence[Any]) -> Registration:
    """A stored registration: the columns of :data:`_REG`."""
    id_, agent_url, task_id, registered_by, created, registrant, two_person = row
    return Registration(
        id_, agent_url, task_id, registered_by, created, registrant, bool(two_person)
    )


def _prompt(row: Sequence[Any]) -> PromptRow:
    reg_id, prompt_id, context_id, envelope, deadline, first_seen, closed = row
    return PromptRow(
        reg_id, prompt_id, context_id, json.loads(envelope), deadline, first_seen, closed
    )


def _forward(row: Sequence[Any]) -> Forward:
    reg_id, prompt_id, message_id, payload, responders, state, detail, at, owner = row
    return Forward(
        reg_id, prompt_id, message_id, payload, json.loads(responders), state, detail, at, owner
    )


def _audit(row: Sequence[Any]) -> AuditEntry:
    """A stored entry: its id, then the columns of :data:`_AUDIT`."""
    id_, at, reg_id, task_id, agent_url, prompt_id, responder, display, *more = row
    action, status, reason, payload_sha256, schema_sha256, responders, reply = more
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
        payload_sha256,
        schema_sha256,
        json.loads(responders),
        None if reply is None else json.loads(reply),
        int(id_),
    )
