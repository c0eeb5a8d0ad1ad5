"""The gateway's state in PostgreSQL, for a hub whose service runs as several replicas:
:class:`PostgresStore`, the store (:class:`~hitl_nb.gateway._store.GatewayStore`) on
:class:`PostgresDatabase`.

The same rows, statements and schema versions as the SQLite file, through psycopg 3's
asyncio connections: a query waits on its socket inside the event loop (no thread,
nothing blocks the loop), from a small pool (:class:`psycopg_pool.AsyncConnectionPool`)
that checks a connection before lending it, so a server that restarted costs no request
more than the outage itself.

- A connection lost in the middle of a call rolls back what it was doing and raises
  :class:`~hitl_nb.gateway._store.StoreUnavailable` (the host answers 503 naming the
  database). A pool that cannot lend a connection within ``timeout`` seconds says the
  same; it keeps reconnecting in the background, so the service recovers by itself.
- A batch of statements is sent as one query (the simple query protocol, its parameters
  bound by psycopg): one round trip, one transaction. Each statement takes its own
  snapshot (READ COMMITTED), so a read after a row lock sees what was committed before
  the lock.
- A batch whose later statements depend on its first ones' rows (an audit entry that
  says how many answers agree) is two queries on one connection, the first beginning
  the transaction and the second committing it.
- A serial batch (the audit trail's) takes a transaction-scoped advisory lock first, so
  the ids an identity column hands out become visible in order.
- The replica's heartbeat (:meth:`PostgresDatabase.apart`) has a connection of its
  own, outside the pool: when requests keep every pooled connection busy, a heartbeat
  that waited its turn behind them could come later than its lease, and another replica
  would take this live one for dead (and finish its forwards a second time).
- Transactions that lose a deadlock or a serialization check are run again (3 times).
- The schema (:mod:`hitl_nb.gateway._schema`) is versioned in the table
  ``hitl_schema`` and brought up to date by :meth:`PostgresDatabase.open` under an
  advisory lock: two replicas starting together migrate once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

import psycopg
import psycopg.errors
from psycopg_pool import AsyncConnectionPool

from hitl_nb.gateway._schema import SCHEMA_VERSION, upgrade
from hitl_nb.gateway._sql import AUDIT_LOCK, POSTGRESQL, Rows, Session, Statement
from hitl_nb.gateway._store import GatewayStore, StoreUnavailable

__all__ = ["PostgresDatabase", "PostgresStore", "postgres_conninfo"]

T = TypeVar("T")
Conn = psycopg.AsyncConnection[tuple[Any, ...]]

#: Advisory lock keys (any constants of this application): the schema's, and each
#: serial batch's by name.
_MIGRATE_LOCK = 0x68_69_74_6C_01
_SERIAL_LOCKS = {"audit": AUDIT_LOCK}
#: A connection returned this recently is lent without a check (see ``_check``).
_FRESH_SECONDS = 2.0
_TUPLES = psycopg.pq.ExecStatus.TUPLES_OK
_IN_TRANSACTION = psycopg.pq.TransactionStatus.INTRANS
_IN_ERROR = psycopg.pq.TransactionStatus.INERROR
_RETRIED = (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected)


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


def _has_rows(cur: psycopg.AsyncCursor[Any]) -> bool:
    """Did the statement return rows (a SELECT: fetch them)? Read from the result's
    status: ``cur.description`` would make a column object for each column first."""
    return cur.pgresult is not None and cur.pgresult.status == _TUPLES


class _Session:
    """Statements on one of the pool's connections (:class:`~hitl_nb.gateway._sql.Session`)."""

    def __init__(self, conn: Conn) -> None:
        self._conn = conn

    async def rows(self, sql: str, args: Sequence[Any] = ()) -> Rows:
        cur = await self._conn.execute(POSTGRESQL.sql(sql), args)
        return await cur.fetchall() if _has_rows(cur) else []

    async def count(self, sql: str, args: Sequence[Any] = ()) -> int:
        cur = await self._conn.execute(POSTGRESQL.sql(sql), args)
        return cur.rowcount

    async def many(self, sql: str, args: Sequence[Sequence[Any]]) -> None:
        if args:
            async with self._conn.cursor() as cur:
                await cur.executemany(POSTGRESQL.sql(sql), args)


class PostgresDatabase:
    """A PostgreSQL database (see the module docstring).

    ``db_url``: ``postgresql://user[:password]@host[:port]/database`` (libpq's URL, its
    query options included, e.g. ``?sslmode=require``; the password may come from
    ``PGPASSWORD`` or ``~/.pgpass`` instead). ``max_connections``: the pool's size;
    ``timeout``: how long a call waits for a connection before the database counts as
    unavailable.
    """

    dialect = POSTGRESQL

    def __init__(self, db_url: str, *, max_connections: int = 8, timeout: float = 5.0) -> None:
        self._conninfo, self.where = postgres_conninfo(db_url)
        self._max = max_connections
        self._timeout = timeout
        self._pool: AsyncConnectionPool[Conn] | None = None
        self._opening = asyncio.Lock()
        self._last_used: dict[int, float] = {}
        self._apart: Conn | None = None
        self._apart_lock = asyncio.Lock()
        #: The schema version the database had when opened (0: a new database).
        self.found_version: int | None = None

    # -- connections -----------------------------------------------------------------

    async def open(self, upto: int = SCHEMA_VERSION) -> None:
        """Connect, and bring the schema up to ``upto``."""
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
            await conn.execute("CREATE TABLE IF NOT EXISTS hitl_schema (version integer NOT NULL)")
            cur = await conn.execute("SELECT max(version) FROM hitl_schema")
            found = await cur.fetchone()
            had = int(found[0]) if found and found[0] is not None else 0
            await upgrade(_Session(conn), POSTGRESQL, self.where, had, upto)
            if upto > had:
                await conn.execute("DELETE FROM hitl_schema")
                await conn.execute("INSERT INTO hitl_schema VALUES (%s)", (upto,))
        return had

    async def close(self) -> None:
        """Close the pool's connections (and the one of :meth:`apart`)."""
        await self._drop_apart()
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
        except _RETRIED:
            raise  # operational errors too, but the database is there: run again
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            raise StoreUnavailable(self.where, _say(exc)) from exc

    @asynccontextmanager
    async def _own_conn(self) -> AsyncIterator[Conn]:
        """The connection of :meth:`apart`, made when first needed and again after it
        failed; one user at a time."""
        if self._pool is None:
            await self.open()  # the schema first
        async with self._apart_lock:
            try:
                if self._apart is None:
                    self._apart = await Conn.connect(
                        self._conninfo,
                        autocommit=True,
                        application_name="hitl-nb gateway heartbeat",
                        connect_timeout=max(1, round(self._timeout)),
                    )
                yield self._apart
            except _RETRIED:
                raise  # the connection is fine: run again
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                await self._drop_apart()
                raise StoreUnavailable(self.where, _say(exc)) from exc
            except BaseException:
                # Cancelled mid-query: what the connection is doing is unknown.
                await self._drop_apart()
                raise

    async def _drop_apart(self) -> None:
        conn, self._apart = self._apart, None
        if conn is not None:
            await conn.close()

    async def _again(
        self,
        run: Callable[[Conn], Awaitable[T]],
        connection: Callable[[], AbstractAsyncContextManager[Conn]] | None = None,
    ) -> T:
        """``run`` on a connection (the pool's, or ``connection``'s); again when it
        loses a deadlock or a serialization check (nothing of the lost run was
        committed)."""
        connect = connection or self._conn
        for attempt in range(3):
            try:
                async with connect() as conn:
                    return await run(conn)
            except _RETRIED:
                if attempt == 2:
                    raise
                await asyncio.sleep(0.01 * (attempt + 1))
        raise AssertionError("unreachable")

    async def apart(self, work: Callable[[Session], Coroutine[Any, Any, T]]) -> T:
        """Run ``work`` in one transaction on a connection of its own, never waiting
        for the pool (the replica's heartbeat: see the module docstring)."""
        return await self._again(_in_transaction(work), self._own_conn)

    # -- statements ------------------------------------------------------------------

    async def rows(self, sql: str, args: Sequence[Any] = ()) -> Rows:
        """Run one statement; its rows."""
        async with self._conn() as conn:
            return await _Session(conn).rows(sql, args)

    async def count(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Run one statement; how many rows it changed."""
        async with self._conn() as conn:
            return await _Session(conn).count(sql, args)

    async def many(self, sql: str, args: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each parameter set."""
        async with self._conn() as conn:
            await _Session(conn).many(sql, args)

    async def batch(
        self,
        steps: Sequence[Statement],
        *,
        serial: str | None = None,
        then: Callable[[list[Rows]], Sequence[Statement]] | None = None,
    ) -> list[Rows]:
        """Run ``steps`` in one transaction, sent as one query (one round trip); with
        ``then``, its statements and the commit are a second query on that connection."""
        if serial is not None:
            steps = [("SELECT pg_advisory_xact_lock(?)", (_SERIAL_LOCKS[serial],)), *steps]
            after = None if then is None else (lambda rows: then(rows[1:]))
            return (await self.batch(steps, then=after))[1:]
        if len(steps) == 1 and then is None:
            return [await self.rows(*steps[0])]  # one statement: prepared, bound by the server
        if then is None:
            return await self._again(lambda conn: _query(conn, steps))

        async def run(conn: Conn) -> list[Rows]:
            try:
                out = (await _query(conn, [("BEGIN", ()), *steps]))[1:]
                more = await _query(conn, [*then(out), ("COMMIT", ())])
            except BaseException:
                await _roll_back(conn)
                raise
            return out + more[:-1]

        return await self._again(run)

    async def atomic(self, work: Callable[[Session], Coroutine[Any, Any, T]]) -> T:
        """Run ``work`` in one transaction."""
        return await self._again(_in_transaction(work))


def _in_transaction(
    work: Callable[[Session], Coroutine[Any, Any, T]],
) -> Callable[[Conn], Awaitable[T]]:
    async def run(conn: Conn) -> T:
        async with conn.transaction():
            return await work(_Session(conn))

    return run


async def _query(conn: Conn, steps: Sequence[Statement]) -> list[Rows]:
    """``steps`` as one query; the rows of each. The statements of one query are one
    transaction (the server's implicit one, unless they begin one), each with its own
    snapshot; only a query's parameters bound here, client-side, let it carry several
    statements."""
    cur = psycopg.AsyncClientCursor(conn)
    await cur.execute(
        ";\n".join(POSTGRESQL.sql(sql) for sql, _ in steps),
        [arg for _, step_args in steps for arg in step_args],
    )
    out: list[Rows] = []
    while True:
        out.append(await cur.fetchall() if _has_rows(cur) else [])
        if not cur.nextset():
            return out


async def _roll_back(conn: Conn) -> None:
    """End a transaction a failed query left open (the pool would, with a warning); a
    connection that is lost or still busy is the pool's to drop."""
    if conn.info.transaction_status in (_IN_TRANSACTION, _IN_ERROR):
        try:
            await conn.rollback()
        except psycopg.Error:
            pass


class PostgresStore(GatewayStore):
    """The gateway's store in a PostgreSQL database (see :class:`PostgresDatabase` for
    ``db_url``, ``max_connections`` and ``timeout``); it connects when first used."""

    def __init__(self, db_url: str, *, max_connections: int = 8, timeout: float = 5.0) -> None:
        super().__init__(PostgresDatabase(db_url, max_connections=max_connections, timeout=timeout))


def _say(exc: BaseException) -> str:
    """The driver's words, first line only (a connection error repeats the conninfo)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
