"""The gateway's state in one SQLite file: :class:`SQLiteStore`, the store
(:class:`~hitl_nb.gateway._store.GatewayStore`) on :class:`SQLiteDatabase`.

Every change is one committed transaction (``synchronous=FULL``, WAL), so a restart
loses nothing that was acknowledged; a transaction that writes takes the file's write
lock first (``BEGIN IMMEDIATE``), so transactions of several processes on one file (a
second replica) run one after the other. The schema's version is ``PRAGMA user_version``
(:mod:`hitl_nb.gateway._schema`), brought up to date when the file is opened.

The calls are quick local reads and writes, made on the event loop's thread (one
connection): they never wait for anything but the disk (a commit waits for it,
``synchronous=FULL``, which ``benchmarks/bench_scale.py`` measures as the loop's stall),
so a transaction's work, written as a coroutine like every store operation, runs to its
end in one step: nothing else on the loop runs inside it.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

from hitl_nb.gateway._schema import SCHEMA_VERSION, upgrade
from hitl_nb.gateway._sql import SQLITE, Rows, Session, Statement
from hitl_nb.gateway._store import GatewayStore, StoreUnavailable

__all__ = ["SQLiteDatabase", "SQLiteStore"]

T = TypeVar("T")
#: Upserts (3.24) and the window of a listing's count (3.25).
_OLDEST = (3, 25, 0)


def _at_once(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to its end now: made of this database's calls, it never waits."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()
    raise RuntimeError("a SQLite transaction waited for something else")


def _sha256_hex(text: str | None) -> str | None:
    """SQL ``hitl_sha256(text)``: the SHA-256 (hex) of ``text``'s UTF-8."""
    return None if text is None else hashlib.sha256(str(text).encode("utf-8")).hexdigest()


class SQLiteDatabase:
    """One SQLite file, one connection used from the event loop's thread (see the module
    docstring). Opened, and its schema brought up to ``upto``, when made; ``timeout``:
    how long a call waits for a file another process keeps locked before the database
    counts as unavailable."""

    dialect = SQLITE

    def __init__(
        self, path: str | Path, *, upto: int = SCHEMA_VERSION, timeout: float = 10.0
    ) -> None:
        if sqlite3.sqlite_version_info < _OLDEST:
            raise RuntimeError(
                f"the gateway needs SQLite {'.'.join(map(str, _OLDEST))} or newer; this "
                f"Python has {sqlite3.sqlite_version}"
            )
        self.path = str(path)
        self.where = f"the gateway's SQLite file {self.path}"
        self._conn = sqlite3.connect(
            self.path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        self.found_version: int | None = None
        # The audit chain's link is hashed by the statement that appends it.
        self._conn.create_function("hitl_sha256", 1, _sha256_hex, deterministic=True)
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            _at_once(self.open(upto))
        except BaseException:
            self._conn.close()
            raise

    async def open(self, upto: int = SCHEMA_VERSION) -> None:
        """Bring the schema up to ``upto`` (done when the database was made)."""
        if self.found_version is None:
            self.found_version = await self.atomic(lambda tx: self._migrate(tx, upto))

    async def _migrate(self, tx: Session, upto: int) -> int:
        had = int(self._conn.execute("PRAGMA user_version").fetchone()[0])
        if (
            had == 0
            and self._conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'registrations'"
            ).fetchone()
        ):
            had = 1  # the first layout did not number itself
        await upgrade(tx, SQLITE, self.where, had, upto)
        if upto > had:
            self._conn.execute(f"PRAGMA user_version = {int(upto)}")
        return had

    async def close(self) -> None:
        """Close the file."""
        self._conn.close()

    def _run(self, run: Callable[[], T]) -> T:
        try:
            return run()
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "disk I/O" in str(exc):
                raise StoreUnavailable(self.where, str(exc)) from exc
            raise

    async def rows(self, sql: str, args: Sequence[Any] = ()) -> Rows:
        """Run one statement; its rows."""
        return self._run(lambda: self._conn.execute(SQLITE.sql(sql), args).fetchall())

    async def count(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Run one statement; how many rows it changed."""
        return self._run(lambda: self._conn.execute(SQLITE.sql(sql), args).rowcount)

    async def many(self, sql: str, args: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each parameter set."""
        self._run(lambda: self._conn.executemany(SQLITE.sql(sql), args))

    async def batch(
        self,
        steps: Sequence[Statement],
        *,
        serial: str | None = None,
        then: Callable[[list[Rows]], Sequence[Statement]] | None = None,
    ) -> list[Rows]:
        """Run ``steps``, then what ``then`` makes of their rows, in one transaction
        (``serial``: every write here is); the rows of each."""
        if len(steps) == 1 and then is None:  # a statement is a transaction of its own
            return [await self.rows(*steps[0])]

        async def work(tx: Session) -> list[Rows]:
            out = [await tx.rows(sql, args) for sql, args in steps]
            more = then(out) if then is not None else ()
            return out + [await tx.rows(sql, args) for sql, args in more]

        return await self.atomic(work)

    async def apart(self, work: Callable[[Session], Coroutine[Any, Any, T]]) -> T:
        """:meth:`atomic`: nothing here waits for a connection."""
        return await self.atomic(work)

    async def atomic(self, work: Callable[[Session], Coroutine[Any, Any, T]]) -> T:
        """Run ``work`` in one transaction that holds the file's write lock."""
        self._run(lambda: self._conn.execute("BEGIN IMMEDIATE"))
        try:
            result = _at_once(work(self))
            self._run(lambda: self._conn.execute("COMMIT"))
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise
        return result


class SQLiteStore(GatewayStore):
    """The gateway's store in the SQLite file ``path`` (made when missing; see
    :class:`SQLiteDatabase` for ``upto`` and ``timeout``)."""

    def __init__(
        self, path: str | Path, *, upto: int = SCHEMA_VERSION, timeout: float = 10.0
    ) -> None:
        database = SQLiteDatabase(path, upto=upto, timeout=timeout)
        super().__init__(database)
        self.path = database.path
