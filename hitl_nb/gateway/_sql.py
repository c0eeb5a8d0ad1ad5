"""The SQL the gateway's store speaks: where SQLite and PostgreSQL differ (one table), and
the narrow interface a database offers the store.

The store (:class:`~hitl_nb.gateway._store.GatewayStore`) writes each statement once, with
``?`` for its parameters and a few ``{tokens}`` for what the two databases spell apart;
:meth:`Dialect.sql` turns it into the database's own text (once per statement: kept).
Everything else is the same SQL on both: ``INSERT ... ON CONFLICT`` for every upsert,
row values, ``count(*)``, the indexes (SQLite 3.25 or newer, PostgreSQL 12 or newer).

A database (:class:`Database`: :mod:`~hitl_nb.gateway._sqlite`,
:mod:`~hitl_nb.gateway._postgres`) runs statements one by one, a few sent together as one
transaction (:meth:`Database.batch`), or a piece of work that reads before it writes
(:meth:`Database.atomic`); how it connects, locks and waits is its own.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

__all__ = [
    "AUDIT_LOCK",
    "POSTGRESQL",
    "SQLITE",
    "Database",
    "Dialect",
    "Rows",
    "Session",
    "Statement",
]

#: The audit trail's lock (any constant of this application): entries are appended one
#: transaction after another, so their ids become visible in order (PostgreSQL's
#: advisory lock; SQLite's writes are serial already).
AUDIT_LOCK = 0x68_69_74_6C_02

T = TypeVar("T")
Rows = list[tuple[Any, ...]]
#: A statement and its parameters.
Statement = tuple[str, Sequence[Any]]


@dataclass(frozen=True)
class Dialect:
    """How one database spells what the two spell apart (see :data:`SQLITE`,
    :data:`POSTGRESQL`)."""

    #: The parameter marker the driver takes (``?`` in the statements as written).
    param: str
    #: Column types: an id (compared and ordered byte by byte on both), an id assigned
    #: by the database in increasing order.
    id: str
    serial: str
    #: The database's clock in epoch seconds (leases and heartbeats are timed by it, so
    #: replicas on machines whose clocks differ agree).
    now: str
    #: Appended to a ``SELECT`` that locks the rows it reads until the transaction ends
    #: (SQLite locks the whole file for a writing transaction: nothing to add).
    for_update: str
    #: The larger of two values (``{greatest}(a, b)``).
    greatest: str = "max"
    #: A statement that takes the lock numbered by its one parameter until the
    #: transaction ends (:data:`AUDIT_LOCK`).
    lock: str = "SELECT ?"
    #: The SHA-256 (hex) of a text's UTF-8, ``{}`` standing for the text (SQLite: a
    #: function the connection defines; see :mod:`hitl_nb.gateway._chain`).
    sha256: str = "hitl_sha256({})"
    #: Statements the one step to version 4 adds (PostgreSQL's version 3 kept who may
    #: answer as an array; see :mod:`hitl_nb.gateway._schema`).
    v4: str = ""
    _texts: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def sql(self, text: str) -> str:
        """``text`` (``?`` parameters, ``{tokens}``) as this database reads it."""
        done = self._texts.get(text)
        if done is None:
            done = text.format(
                id=self.id,
                serial=self.serial,
                now=self.now,
                for_update=self.for_update,
                greatest=self.greatest,
            )
            if self.param != "?":
                assert "%" not in done, "a literal % would be read as a parameter"
                done = done.replace("?", self.param)
            self._texts[text] = done
        return done

    def one_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """SQL for "``column`` is one of ``values``" and its parameters: an array where
        the database has them (one statement text for any number of values)."""
        if self.param == "%s":
            return f"{column} = ANY(?)", [list(values)]
        return f"{column} IN ({', '.join('?' * len(values))})", list(values)


SQLITE = Dialect(
    param="?",
    id="text",
    serial="integer PRIMARY KEY AUTOINCREMENT",
    now="((julianday('now') - 2440587.5) * 86400.0)",
    for_update="",
)

POSTGRESQL = Dialect(
    param="%s",
    # "C": byte order, as SQLite's, whatever the database's locale.
    id='text COLLATE "C"',
    serial="bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    now="extract(epoch from clock_timestamp())::float8",
    for_update=" FOR UPDATE",
    lock="SELECT pg_advisory_xact_lock(?)",
    sha256="encode(sha256(convert_to({}, 'UTF8')), 'hex')",
    greatest="GREATEST",
    v4="""
ALTER TABLE prompts DROP COLUMN IF EXISTS audience;
ALTER TABLE prompts ADD COLUMN IF NOT EXISTS named integer NOT NULL DEFAULT 0;
DROP INDEX IF EXISTS prompts_open
""",
)


class Session(Protocol):
    """Statements on one connection (inside a transaction, for :meth:`Database.atomic`)."""

    async def rows(self, sql: str, args: Sequence[Any] = ()) -> Rows:
        """Run one statement; the rows it returns (none for a change)."""

    async def count(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Run one statement; how many rows it changed."""

    async def many(self, sql: str, args: Sequence[Sequence[Any]]) -> None:
        """Run one statement once for each parameter set."""


class Database(Session, Protocol):
    """A database as the store sees it. A call that cannot reach the database raises
    :class:`~hitl_nb.gateway._store.StoreUnavailable` (and what it was doing is rolled
    back); each call connects first when needed."""

    dialect: Dialect
    #: The database in words, for messages (``PostgreSQL hitl at db.example:5432``).
    where: str
    #: The schema version the database had when opened (0: new; None: not opened yet).
    found_version: int | None

    async def open(self, upto: int) -> None:
        """Connect, and bring the schema up to version ``upto``
        (:func:`hitl_nb.gateway._schema.upgrade`, under a lock: replicas starting
        together migrate once)."""

    async def close(self) -> None:
        """Let go of the database."""

    async def batch(
        self,
        steps: Sequence[Statement],
        *,
        serial: str | None = None,
        then: Callable[[list[Rows]], Sequence[Statement]] | None = None,
    ) -> list[Rows]:
        """Run ``steps`` in one transaction, sent together (PostgreSQL: one round trip);
        the rows of each. ``serial``: batches of the same name commit one after another,
        in the order they began (PostgreSQL: an advisory lock; SQLite's writes are
        serial already). ``then``: given those rows, the statements that follow in the
        same transaction (PostgreSQL: a second round trip on the same connection, ending
        with the commit), whose rows follow; it runs again if the transaction is run
        again."""

    async def atomic(self, work: Callable[[Session], Coroutine[Any, Any, T]]) -> T:
        """Run ``work`` in one transaction (again, when it lost a deadlock: nothing of
        the lost run stays)."""

    async def apart(self, work: Callable[[Session], Coroutine[Any, Any, T]]) -> T:
        """:meth:`atomic`, never waiting behind the other calls for a connection (a
        replica's heartbeat, which must come in time however busy the host is)."""
