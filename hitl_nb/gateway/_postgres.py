"""The gateway's state in PostgreSQL, for a hub whose service runs as several replicas.

The same rows, promises and schema versions as the SQLite file
(:mod:`hitl_nb.gateway._sqlite`), through psycopg 3's asyncio connections: a query waits
on its socket inside the event loop (no thread, nothing blocks the loop), from a small
pool (:class:`psycopg_pool.AsyncConnectionPool`) that checks a connection before lending
it, so a server that restarted costs no request more than the outage itself.

- Every call is one transaction; a connection lost in the middle rolls it back and
  raises :class:`~hitl_nb.gateway._store.StoreUnavailable` (the host answers 503 naming
  the database). A pool that cannot lend a connection within ``timeout`` seconds says
  the same; it keeps reconnecting in the background, so the service recovers by itself.
- The forward claim is the ``forwards`` row's primary key (``INSERT ... ON CONFLICT DO
  NOTHING``): of any number of replicas one inserts it.
- A ballot is cast under a row lock on its prompt (``SELECT ... FOR UPDATE``), so
  ballots of one prompt are counted one after the other across replicas (what SQLite's
  ``BEGIN IMMEDIATE`` does for the whole file).
- Heartbeats and leases are timed by the database's clock (``clock_timestamp()``).
- The audit trail's ids come from an identity column; entries are inserted under a
  transaction-scoped advisory lock so they become visible in id order (a reader paging
  with ``after`` never skips one committed late).
- Transactions that lose a deadlock or a serialization check are run again (3 times).

The schema is versioned in the table ``hitl_schema`` and brought up to date by
:meth:`PostgresStore.open` under an advisory lock (two replicas starting together
migrate once), each step in one transaction (PostgreSQL's DDL is transactional):

- 1, 2, 3: as the SQLite file's (:mod:`hitl_nb.gateway._sqlite`), in PostgreSQL's
  types: ids ``text COLLATE "C"`` (the same order as SQLite's), times ``double
  precision`` (epoch seconds), JSON as ``text`` (kept byte for byte: a response_schema's
  field order is part of the prompt); version 3's ``prompts.audience`` is a ``text[]``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

import psycopg
import psycopg.errors
from psycopg_pool import AsyncConnectionPool

from hitl_nb.gateway._sqlite import SCHEMA_VERSION
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

__all__ = ["PostgresStore", "postgres_conninfo"]

T = TypeVar("T")
Conn = psycopg.AsyncConnection[tuple[Any, ...]]

_ID = 'text COLLATE "C"'
_V1 = f"""
CREATE TABLE registrations (
    id {_ID} PRIMARY KEY,
    agent_url text NOT NULL,
    task_id text NOT NULL,
    registered_by text NOT NULL,
    created double precision NOT NULL,
    UNIQUE (agent_url, task_id)
);
CREATE TABLE prompts (
    reg_id {_ID} NOT NULL REFERENCES registrations(id),
    prompt_id {_ID} NOT NULL,
    context_id text,
    envelope text NOT NULL,
    deadline double precision,
    first_seen double precision NOT NULL,
    closed text,
    PRIMARY KEY (reg_id, prompt_id)
);
CREATE TABLE ballots (
    reg_id {_ID} NOT NULL,
    prompt_id {_ID} NOT NULL,
    responder {_ID} NOT NULL,
    payload text NOT NULL,
    at double precision NOT NULL,
    PRIMARY KEY (reg_id, prompt_id, responder)
);
CREATE TABLE forwards (
    reg_id {_ID} NOT NULL,
    prompt_id {_ID} NOT NULL,
    message_id text NOT NULL,
    payload text NOT NULL,
    responders text NOT NULL,
    state text NOT NULL,
    detail text,
    at double precision NOT NULL,
    PRIMARY KEY (reg_id, prompt_id)
);
CREATE TABLE push (
    reg_id {_ID} PRIMARY KEY,
    secret text NOT NULL,
    configured double precision,
    received bigint NOT NULL DEFAULT 0
)
"""

_V2 = f"""
ALTER TABLE registrations ADD COLUMN registrant text;
CREATE TABLE audit (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at double precision NOT NULL,
    reg_id {_ID} NOT NULL,
    task_id text NOT NULL,
    agent_url text NOT NULL,
    prompt_id text NOT NULL,
    responder text,
    display text,
    action text NOT NULL,
    status integer NOT NULL,
    reason text,
    payload_sha256 text,
    schema_sha256 text,
    responders text NOT NULL,
    agent_reply text
);
CREATE INDEX audit_by_registration ON audit (reg_id, id)
"""

_V3 = f"""
ALTER TABLE registrations ADD COLUMN ended double precision;
ALTER TABLE prompts ADD COLUMN needed integer NOT NULL DEFAULT 1;
ALTER TABLE prompts ADD COLUMN audience text[] NOT NULL DEFAULT '{{}}';
ALTER TABLE forwards ADD COLUMN owner text NOT NULL DEFAULT '';
CREATE TABLE replicas (
    id text PRIMARY KEY,
    started double precision NOT NULL,
    expires double precision NOT NULL
);
CREATE TABLE leases (
    reg_id {_ID} PRIMARY KEY,
    holder text NOT NULL,
    expires double precision NOT NULL
);
CREATE INDEX leases_by_holder ON leases (holder);
CREATE INDEX prompts_open ON prompts (deadline ASC NULLS LAST, first_seen, prompt_id)
    WHERE closed IS NULL;
CREATE INDEX forwards_unsettled ON forwards (owner) WHERE state = 'forwarding'
"""


async def _fill_audience(conn: Conn) -> None:
    """Version 3's data step: who may answer each stored prompt, from its envelope."""
    cur = await conn.execute("SELECT reg_id, prompt_id, envelope FROM prompts")
    for reg_id, prompt_id, envelope in await cur.fetchall():
        names, needed = audience(json.loads(envelope))
        await conn.execute(
            "UPDATE prompts SET needed = %s, audience = %s WHERE reg_id = %s AND prompt_id = %s",
            (needed, names, reg_id, prompt_id),
        )


Step = tuple[str, Callable[[Conn], Awaitable[None]] | None]
_STEPS: tuple[Step, ...] = ((_V1, None), (_V2, None), (_V3, _fill_audience))
assert len(_STEPS) == SCHEMA_VERSION, "the two stores share one numbering"

#: Advisory lock keys (any two constants of this application).
_MIGRATE_LOCK = 0x68_69_74_6C_01
_AUDIT_LOCK = 0x68_69_74_6C_02
_NOW = "extract(epoch from clock_timestamp())::float8"
#: A connection returned this recently is lent without a check (see ``_check``).
_FRESH_SECONDS = 2.0

_REG = "id, agent_url, task_id, registered_by, created, registrant"
_PROMPT = "reg_id, prompt_id, context_id, envelope, deadline, first_seen, closed"
_FORWARD = "reg_id, prompt_id, message_id, payload, responders, state, detail, at, owner"
_AUDIT = (
    "id, at, reg_id, task_id, agent_url, prompt_id, responder, display, action, status, "
    "reason, payload_sha256, schema_sha256, responders, agent_reply"
)
_REG_R = ", ".join("r." + c for c in _REG.split(", "))
_PROMPT_P = ", ".join("p." + c for c in _PROMPT.split(", "))
_FORWARD_F = ", ".join("f." + c for c in _FORWARD.split(", "))


def postgres_conninfo(db_url: str) -> tuple[str, str]:
    """The libpq URL psycopg connects with, and the database in words (no password).

    Takes JupyterHub's (SQLAlchemy's) spellings too: ``postgresql+psycopg://`` and
    ``postgres://``. Raises ``ValueError`` when it names no database."""
    parts = urlsplit(db_url)
    scheme = parts.scheme.split("+", 1)[0]
    if scheme not in ("postgresql", "postgres"):
        raise ValueError(f"not a PostgreSQL URL: {parts.scheme}://...")
    database = unquote(parts.path.lstrip("/"))
    if not database:
        raise ValueError("db_url names no database: use postgresql://user@host:port/database")
    host = parts.hostname or "the local socket"
    where = f"the gateway's PostgreSQL database {database!r} at {host}"
    if parts.port:
        where += f":{parts.port}"
    conninfo = "postgresql" + db_url[len(parts.scheme) :]
    return conninfo, where


def _int(row: tuple[Any, ...] | None) -> int:
    return int(row[0]) if row else 0


class PostgresStore:
    """The gateway's PostgreSQL database (see the module docstring).

    ``db_url``: ``postgresql://user[:password]@host[:port]/database`` (libpq's URL, its
    query options included, e.g. ``?sslmode=require``; the password may come from
    ``PGPASSWORD`` or ``~/.pgpass`` instead). ``max_connections``: the pool's size;
    ``timeout``: how long a call waits for a connection before the database counts as
    unavailable.
    """

    def __init__(self, db_url: str, *, max_connections: int = 8, timeout: float = 5.0) -> None:
        self._conninfo, self.where = postgres_conninfo(db_url)
        self._max = max_connections
        self._timeout = timeout
        self._pool: AsyncConnectionPool[Conn] | None = None
        self._opening = asyncio.Lock()
        self._last_used: dict[int, float] = {}
        #: The schema version the database had when opened (0: a new database).
        self.found_version: int | None = None

    # -- connections -----------------------------------------------------------------

    async def open(self, upto: int = SCHEMA_VERSION) -> None:
        """Connect, and bring the schema up to ``upto`` (the latest; lower only to make
        an older database in tests)."""
        async with self._opening:
            if self._pool is not None:
                return
            pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
                self._conninfo,
                min_size=1,
                max_size=self._max,
                timeout=self._timeout,
                open=False,
                check=self._check,
                kwargs={"autocommit": True, "application_name": "hitl-nb gateway"},
                # The pool keeps trying while the server is down (the service recovers by
                # itself): give up a round only after a minute, then start another.
                reconnect_timeout=60.0,
                name="hitl-nb",
            )
            try:
                await pool.open(wait=True, timeout=self._timeout + 5)
            except (psycopg.Error, asyncio.TimeoutError) as exc:
                await pool.close()
                raise StoreUnavailable(self.where, _say(exc)) from exc
            try:
                async with pool.connection() as conn:
                    self.found_version = await self._migrate(conn, upto)
            except BaseException:
                await pool.close()
                raise
            self._pool = pool

    async def _check(self, conn: Conn) -> None:
        """Before lending a connection: one that sat idle is asked a round trip (a
        server that restarted meanwhile left it dead: the pool drops it and lends
        another); one used in the last seconds is lent as it is, saving that round
        trip on every call under load."""
        if time.monotonic() - self._last_used.get(id(conn), 0.0) > _FRESH_SECONDS:
            await AsyncConnectionPool.check_connection(conn)

    async def _migrate(self, conn: Conn, upto: int) -> int:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATE_LOCK,))
            cur = await conn.execute("SELECT to_regclass('hitl_schema') IS NOT NULL")
            exists = await cur.fetchone()
            if exists and exists[0]:
                cur = await conn.execute("SELECT max(version) FROM hitl_schema")
                had = _int(await cur.fetchone())
            else:
                await conn.execute("CREATE TABLE hitl_schema (version integer NOT NULL)")
                had = 0
            if had > SCHEMA_VERSION:
                raise RuntimeError(
                    f"{self.where} has schema version {had}, newer than this hitl-nb "
                    f"({SCHEMA_VERSION}): upgrade hitl-nb"
                )
            for version in range(had + 1, upto + 1):
                statements, data_step = _STEPS[version - 1]
                async with conn.transaction():  # a savepoint: each step whole or not at all
                    for statement in statements.split(";"):
                        if statement.strip():
                            await conn.execute(statement)
                    if data_step is not None:
                        await data_step(conn)
                    await conn.execute("DELETE FROM hitl_schema")
                    await conn.execute("INSERT INTO hitl_schema VALUES (%s)", (version,))
        return had

    async def close(self) -> None:
        """Close the pool's connections."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()

    @asynccontextmanager
    async def _conn(self) -> AsyncIterator[Conn]:
        if self._pool is None:
            await self.open()
        assert self._pool is not None
        try:
            async with self._pool.connection() as conn:
                yield conn
                # Noted here rather than by the pool's ``reset`` hook: with one, the pool
                # hands every returned connection to a worker task first.
                self._last_used[id(conn)] = time.monotonic()
        except (
            psycopg.errors.SerializationFailure,
            psycopg.errors.DeadlockDetected,
        ):
            raise
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            raise StoreUnavailable(self.where, _say(exc)) from exc

    async def _atomic(self, work: Callable[[Conn], Awaitable[T]]) -> T:
        """Run ``work`` in one transaction; again when it loses a deadlock or a
        serialization check (nothing of the lost run was committed)."""
        for attempt in range(3):
            try:
                async with self._conn() as conn, conn.transaction():
                    return await work(conn)
            except (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected):
                if attempt == 2:
                    raise
                await asyncio.sleep(0.01 * (attempt + 1))
        raise AssertionError("unreachable")

    async def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        async with self._conn() as conn:
            cur = await conn.execute(sql, args)
            return await cur.fetchall()

    async def _row(self, sql: str, args: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        rows = await self._rows(sql, args)
        return rows[0] if rows else None

    async def _count(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        async with self._conn() as conn:
            cur = await conn.execute(sql, args)
            return cur.rowcount

    # -- registrations ---------------------------------------------------------------

    async def add_registration(self, reg: Registration) -> Registration:
        """Store ``reg``; an existing registration of the same task wins (returned)."""
        await self._count(
            f"INSERT INTO registrations ({_REG}) VALUES (%s, %s, %s, %s, %s, %s) "
            "ON CONFLICT DO NOTHING",
            (reg.id, reg.agent_url, reg.task_id, reg.registered_by, reg.created, reg.registrant),
        )
        found = await self.find_registration(reg.agent_url, reg.task_id)
        assert found is not None
        return found

    async def find_registration(self, agent_url: str, task_id: str) -> Registration | None:
        """The registration of this task, if any."""
        row = await self._row(
            f"SELECT {_REG} FROM registrations WHERE agent_url = %s AND task_id = %s",
            (agent_url, task_id),
        )
        return Registration(*row) if row else None

    async def registration(self, reg_id: str) -> Registration | None:
        """The registration with this id, if any."""
        row = await self._row(f"SELECT {_REG} FROM registrations WHERE id = %s", (reg_id,))
        return Registration(*row) if row else None

    async def registrations(self) -> list[Registration]:
        """Every registration, oldest first."""
        rows = await self._rows(f"SELECT {_REG} FROM registrations ORDER BY created, id")
        return [Registration(*r) for r in rows]

    async def count_registrations(self) -> int:
        """How many tasks are registered."""
        row = await self._row("SELECT count(*) FROM registrations")
        return _int(row)

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
        row = await self._row(
            f"INSERT INTO prompts ({_PROMPT}, needed, audience) "
            "VALUES (%s, %s, %s, %s, %s, %s, NULL, %s, %s) ON CONFLICT DO NOTHING "
            f"RETURNING {_PROMPT}",
            (
                reg_id,
                prompt_id,
                context_id,
                json.dumps(envelope),
                deadline,
                time.time(),
                needed,
                names,
            ),
        )
        if row is None:
            found = await self.prompt(reg_id, prompt_id)
            assert found is not None
            return found
        return _prompt(row)

    async def prompt(self, reg_id: str, prompt_id: str) -> PromptRow | None:
        """The prompt row, if the gateway has seen it."""
        row = await self._row(
            f"SELECT {_PROMPT} FROM prompts WHERE reg_id = %s AND prompt_id = %s",
            (reg_id, prompt_id),
        )
        return _prompt(row) if row else None

    async def prompt_and_forward(
        self, reg_id: str, prompt_id: str
    ) -> tuple[PromptRow | None, Forward | None]:
        """The prompt row and its forward (each None when absent), in one query."""
        row = await self._row(
            f"SELECT {_PROMPT_P}, {_FORWARD_F} FROM prompts p LEFT JOIN forwards f "
            "ON f.reg_id = p.reg_id AND f.prompt_id = p.prompt_id "
            "WHERE p.reg_id = %s AND p.prompt_id = %s",
            (reg_id, prompt_id),
        )
        if row is None:
            return None, None
        width = len(_PROMPT.split(", "))
        fwd = None if row[width] is None else _forward(row[width:])
        return _prompt(row[:width]), fwd

    async def prompts(self, reg_id: str) -> list[PromptRow]:
        """The registration's prompts, first seen first."""
        rows = await self._rows(
            f"SELECT {_PROMPT} FROM prompts WHERE reg_id = %s ORDER BY first_seen, prompt_id",
            (reg_id,),
        )
        return [_prompt(r) for r in rows]

    async def open_prompts(self) -> list[PromptRow]:
        """Every prompt still open here."""
        rows = await self._rows(f"SELECT {_PROMPT} FROM prompts WHERE closed IS NULL")
        return [_prompt(r) for r in rows]

    async def close_prompt(self, reg_id: str, prompt_id: str, why: str) -> bool:
        """Mark an open prompt closed (``why``); False if it was closed already."""
        changed = await self._count(
            "UPDATE prompts SET closed = %s "
            "WHERE reg_id = %s AND prompt_id = %s AND closed IS NULL",
            (why, reg_id, prompt_id),
        )
        return changed == 1

    async def list_open(self, query: OpenQuery, limit: int) -> tuple[list[Listed], int]:
        """The first ``limit`` open prompts ``query`` selects, and how many in all."""
        where, args = _selection(query)
        joined = f"FROM prompts p JOIN registrations r ON r.id = p.reg_id WHERE {where}"

        async def work(conn: Conn) -> tuple[list[Listed], int]:
            # No transaction (two round trips fewer): the page and its count come from
            # one statement; its forwards and ballots are read just after, so a forward
            # made in between shows (as a later listing would show it).
            cur = await conn.execute(
                f"SELECT {_REG_R}, {_PROMPT_P}, count(*) OVER () {joined} "
                "ORDER BY p.deadline ASC NULLS LAST, p.first_seen, p.prompt_id LIMIT %s",
                (*args, limit),
            )
            rows = await cur.fetchall()
            if not rows:
                cur = await conn.execute(f"SELECT count(*) {joined}", tuple(args))
                return [], _int(await cur.fetchone())
            total = int(rows[0][-1])
            regs = [r[6] for r in rows]
            pids = [r[7] for r in rows]
            cur = await conn.execute(
                f"SELECT {_FORWARD} FROM forwards WHERE (reg_id, prompt_id) IN "
                "(SELECT * FROM unnest(%s::text[], %s::text[]))",
                (regs, pids),
            )
            forwards = {(f[0], f[1]): _forward(f) for f in await cur.fetchall()}
            cur = await conn.execute(
                "SELECT reg_id, prompt_id, responder, payload, at FROM ballots "
                "WHERE (reg_id, prompt_id) IN (SELECT * FROM unnest(%s::text[], %s::text[])) "
                "ORDER BY at, responder",
                (regs, pids),
            )
            ballots: dict[tuple[str, str], list[Ballot]] = {}
            for reg_id, prompt_id, responder, payload, at in await cur.fetchall():
                ballots.setdefault((reg_id, prompt_id), []).append(Ballot(responder, payload, at))
            listed = []
            for r in rows:
                key = (r[6], r[7])
                listed.append(
                    Listed(
                        Registration(*r[:6]),
                        _prompt(r[6:13]),
                        forwards.get(key),
                        ballots.get(key, []),
                    )
                )
            return listed, total

        async with self._conn() as conn:
            return await work(conn)

    async def due_prompts(self, before: float) -> list[PromptRow]:
        """Open prompts whose deadline is at most ``before``."""
        rows = await self._rows(
            f"SELECT {_PROMPT} FROM prompts WHERE closed IS NULL AND deadline IS NOT NULL "
            "AND deadline <= %s",
            (before,),
        )
        return [_prompt(r) for r in rows]

    # -- ballots ---------------------------------------------------------------------

    async def cast_ballot(
        self, reg_id: str, prompt_id: str, responder: str, payload: str
    ) -> list[Ballot]:
        """Record (or replace) a responder's answer; the ballots after it, read under a
        row lock on the prompt (ballots of one prompt are counted one at a time)."""

        async def work(conn: Conn) -> list[Ballot]:
            # Sent in one go (a pipeline): still three statements, so the last one reads
            # with a snapshot taken after the lock was granted (READ COMMITTED).
            async with conn.pipeline():
                await conn.execute(
                    "SELECT 1 FROM prompts WHERE reg_id = %s AND prompt_id = %s FOR UPDATE",
                    (reg_id, prompt_id),
                )
                await conn.execute(
                    "INSERT INTO ballots VALUES (%s, %s, %s, %s, %s) "
                    "ON CONFLICT (reg_id, prompt_id, responder) "
                    "DO UPDATE SET payload = EXCLUDED.payload, at = EXCLUDED.at",
                    (reg_id, prompt_id, responder, payload, time.time()),
                )
                cur = await conn.execute(
                    "SELECT responder, payload, at FROM ballots "
                    "WHERE reg_id = %s AND prompt_id = %s ORDER BY at, responder",
                    (reg_id, prompt_id),
                )
            return [Ballot(*r) for r in await cur.fetchall()]

        return await self._atomic(work)

    async def ballots(self, reg_id: str, prompt_id: str) -> list[Ballot]:
        """The answers collected for a prompt, oldest first."""
        rows = await self._rows(
            "SELECT responder, payload, at FROM ballots WHERE reg_id = %s AND prompt_id = %s "
            "ORDER BY at, responder",
            (reg_id, prompt_id),
        )
        return [Ballot(*r) for r in rows]

    async def all_ballots(self) -> dict[tuple[str, str], list[Ballot]]:
        """Every collected answer, by (registration, prompt)."""
        out: dict[tuple[str, str], list[Ballot]] = {}
        rows = await self._rows(
            "SELECT reg_id, prompt_id, responder, payload, at FROM ballots ORDER BY at, responder"
        )
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
        inserted = await self._count(
            f"INSERT INTO forwards ({_FORWARD}) "
            "VALUES (%s, %s, %s, %s, %s, 'forwarding', NULL, %s, %s) ON CONFLICT DO NOTHING",
            (reg_id, prompt_id, message_id, payload, json.dumps(responders), fwd.at, owner),
        )
        return fwd if inserted == 1 else None

    async def finish_forward(
        self, reg_id: str, prompt_id: str, state: str, detail: str, *, closed: str | None = None
    ) -> None:
        """Record how a forward ended (``forwarded`` or ``failed``); with ``closed``, close
        the prompt too. One statement (the prompt's update in a data-modifying WITH), so
        one round trip and one commit."""
        finish = (
            "UPDATE forwards SET state = %s, detail = %s, at = %s "
            "WHERE reg_id = %s AND prompt_id = %s"
        )
        args: tuple[Any, ...] = (state, detail, time.time(), reg_id, prompt_id)
        if closed is not None:
            finish = (
                f"WITH finished AS ({finish}) UPDATE prompts SET closed = %s "
                "WHERE reg_id = %s AND prompt_id = %s AND closed IS NULL"
            )
            args += (closed, reg_id, prompt_id)
        await self._count(finish, args)

    async def drop_forward(self, reg_id: str, prompt_id: str) -> None:
        """Forget a forward the agent refused (422): the prompt may be answered again."""
        await self._count(
            "DELETE FROM forwards WHERE reg_id = %s AND prompt_id = %s", (reg_id, prompt_id)
        )

    async def forward(self, reg_id: str, prompt_id: str) -> Forward | None:
        """The prompt's forward, if one was claimed."""
        row = await self._row(
            f"SELECT {_FORWARD} FROM forwards WHERE reg_id = %s AND prompt_id = %s",
            (reg_id, prompt_id),
        )
        return _forward(row) if row else None

    async def all_forwards(self) -> dict[tuple[str, str], Forward]:
        """Every forward, by (registration, prompt)."""
        rows = await self._rows(f"SELECT {_FORWARD} FROM forwards")
        return {(r[0], r[1]): _forward(r) for r in rows}

    async def unsettled_forwards(self) -> list[Forward]:
        """Forwards whose fate is unknown (a crash or a lost connection mid-forward)."""
        rows = await self._rows(f"SELECT {_FORWARD} FROM forwards WHERE state = 'forwarding'")
        return [_forward(r) for r in rows]

    async def adopt_forwards(self, replica: str) -> list[Forward]:
        """Take over the unsettled forwards of stopped replicas; all ``replica`` owns."""

        async def work(conn: Conn) -> list[Forward]:
            await conn.execute(
                "UPDATE forwards SET owner = %s WHERE state = 'forwarding' AND owner NOT IN "
                f"(SELECT id FROM replicas WHERE expires > {_NOW})",
                (replica,),
            )
            cur = await conn.execute(
                f"SELECT {_FORWARD} FROM forwards WHERE state = 'forwarding' AND owner = %s",
                (replica,),
            )
            return [_forward(r) for r in await cur.fetchall()]

        return await self._atomic(work)

    # -- replicas and leases ---------------------------------------------------------

    async def hold_leases(self, replica: str, ttl: float) -> set[str]:
        """Heartbeat, renew, take a fair share, give back the rest; what it holds."""

        async def work(conn: Conn) -> set[str]:
            cur = await conn.execute(f"SELECT {_NOW}")
            now = float((await cur.fetchone() or (0.0,))[0])
            await conn.execute(
                "INSERT INTO replicas (id, started, expires) VALUES (%s, %s, %s) "
                "ON CONFLICT (id) DO UPDATE SET expires = EXCLUDED.expires",
                (replica, now, now + ttl),
            )
            await conn.execute("DELETE FROM replicas WHERE expires < %s", (now - 3600,))
            cur = await conn.execute(
                "SELECT (SELECT count(*) FROM replicas WHERE expires > %s), "
                "(SELECT count(*) FROM registrations WHERE ended IS NULL)",
                (now,),
            )
            live, watched = await cur.fetchone() or (1, 0)
            share = -(-int(watched) // max(int(live), 1))
            cur = await conn.execute(
                "UPDATE leases SET expires = %s WHERE holder = %s RETURNING reg_id",
                (now + ttl, replica),
            )
            held = sorted(r[0] for r in await cur.fetchall())
            if len(held) > share:
                await conn.execute(
                    "DELETE FROM leases WHERE holder = %s AND reg_id = ANY(%s)",
                    (replica, held[share:]),
                )
                held = held[:share]
            elif len(held) < share:
                cur = await conn.execute(
                    "INSERT INTO leases (reg_id, holder, expires) "
                    "SELECT r.id, %s, %s FROM registrations r "
                    "LEFT JOIN leases l ON l.reg_id = r.id "
                    "WHERE r.ended IS NULL AND (l.reg_id IS NULL OR l.expires < %s) "
                    "ORDER BY r.created, r.id LIMIT %s "
                    "ON CONFLICT (reg_id) DO UPDATE SET holder = EXCLUDED.holder, "
                    "expires = EXCLUDED.expires WHERE leases.expires < %s "
                    "RETURNING reg_id",
                    (replica, now + ttl, now, share - len(held), now),
                )
                held += [r[0] for r in await cur.fetchall()]
            return set(held)

        return await self._atomic(work)

    async def take_lease(self, reg_id: str, replica: str, ttl: float) -> bool:
        """Lease one registration to ``replica`` if nobody holds it."""
        taken = await self._count(
            f"INSERT INTO leases (reg_id, holder, expires) VALUES (%s, %s, {_NOW} + %s) "
            "ON CONFLICT (reg_id) DO UPDATE SET holder = EXCLUDED.holder, "
            f"expires = EXCLUDED.expires WHERE leases.expires < {_NOW} OR leases.holder = %s",
            (reg_id, replica, ttl, replica),
        )
        return taken == 1

    async def end_watch(self, reg_id: str) -> None:
        """The task ended: nobody watches it any more."""

        async def work(conn: Conn) -> None:
            await conn.execute(
                "UPDATE registrations SET ended = %s WHERE id = %s", (time.time(), reg_id)
            )
            await conn.execute("DELETE FROM leases WHERE reg_id = %s", (reg_id,))

        await self._atomic(work)

    async def leave(self, replica: str) -> None:
        """``replica`` stops: its heartbeat and leases go."""

        async def work(conn: Conn) -> None:
            await conn.execute("DELETE FROM leases WHERE holder = %s", (replica,))
            await conn.execute("DELETE FROM replicas WHERE id = %s", (replica,))

        await self._atomic(work)

    # -- push secrets ----------------------------------------------------------------

    async def push_secret(self, reg_id: str) -> str | None:
        """The registration's push secret, if one was made."""
        row = await self._row("SELECT secret FROM push WHERE reg_id = %s", (reg_id,))
        return str(row[0]) if row else None

    async def ensure_push_secret(self, reg_id: str, candidate: str) -> str:
        """The registration's push secret: ``candidate`` unless one exists already."""
        await self._count(
            "INSERT INTO push (reg_id, secret) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (reg_id, candidate),
        )
        secret = await self.push_secret(reg_id)
        assert secret is not None
        return secret

    async def mark_push_configured(self, reg_id: str, at: float) -> None:
        """An agent accepted the push configuration of this registration."""
        await self._count("UPDATE push SET configured = %s WHERE reg_id = %s", (at, reg_id))

    async def push_configured(self, reg_id: str) -> bool:
        """Has an agent accepted a push configuration for this registration?"""
        row = await self._row("SELECT configured FROM push WHERE reg_id = %s", (reg_id,))
        return bool(row and row[0] is not None)

    async def count_push(self, reg_id: str) -> None:
        """One more notification was accepted for this registration."""
        await self._count("UPDATE push SET received = received + 1 WHERE reg_id = %s", (reg_id,))

    # -- the audit trail -------------------------------------------------------------

    async def add_audit(self, entry: AuditEntry) -> None:
        """Append one entry (visible in id order: see the module docstring)."""

        async def work(conn: Conn) -> None:
            # One statement, one round trip: the lock is taken before the row gets its
            # id and held until the statement commits.
            await conn.execute(
                f"WITH lock AS (SELECT pg_advisory_xact_lock({_AUDIT_LOCK})) "
                f"INSERT INTO audit ({_AUDIT.split(', ', 1)[1]}) "
                "SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s FROM lock",
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

        async with self._conn() as conn:
            await work(conn)

    async def audit(
        self, reg_ids: list[str] | None = None, *, after: int = 0, limit: int = 1000
    ) -> list[AuditEntry]:
        """Entries with an id above ``after``, oldest first, at most ``limit``."""
        if reg_ids is None:
            rows = await self._rows(
                f"SELECT {_AUDIT} FROM audit WHERE id > %s ORDER BY id LIMIT %s", (after, limit)
            )
        elif not reg_ids:
            return []
        else:
            rows = await self._rows(
                f"SELECT {_AUDIT} FROM audit WHERE reg_id = ANY(%s) AND id > %s "
                "ORDER BY id LIMIT %s",
                (reg_ids, after, limit),
            )
        return [_audit(r) for r in rows]


def _say(exc: BaseException) -> str:
    """The driver's words, first line only (a connection error repeats the conninfo)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _may(name: str | None, args: list[Any]) -> str:
    """SQL: may ``name`` answer prompt ``p`` (the rule of :func:`_views.audience`)?"""
    if name is None:
        return "(cardinality(p.audience) = 0 AND p.needed <= 1)"
    args.append(name)
    return "(cardinality(p.audience) = 0 OR %s = ANY(p.audience))"


def _selection(query: OpenQuery) -> tuple[str, list[Any]]:
    args: list[Any] = []
    where = ["p.closed IS NULL"]
    if query.agent is not None:
        where.append("r.agent_url = %s")
        args.append(query.agent)
    if query.due_before is not None:
        where.append("p.deadline IS NOT NULL AND p.deadline <= %s")
        args.append(query.due_before)
    if not query.see_all:
        if query.viewer is None:
            where.append(_may(None, args))
        else:
            args.append(query.viewer)
            where.append(f"(r.registrant = %s OR {_may(query.viewer, args)})")
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
    """A stored entry (its columns in :data:`_AUDIT`'s order, as the SQLite store's)."""
    return AuditEntry(
        at=row[1],
        reg_id=row[2],
        task_id=row[3],
        agent_url=row[4],
        prompt_id=row[5],
        responder=row[6],
        display=row[7],
        action=row[8],
        status=row[9],
        reason=row[10],
        payload_sha256=row[11],
        schema_sha256=row[12],
        responders=json.loads(row[13]),
        agent_reply=None if row[14] is None else json.loads(row[14]),
        id=int(row[0]),
    )
