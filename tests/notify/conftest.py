"""The outboxes the sender's promises are checked on: one opener per implementation.
The SQLite helper of the tests (the statements spelled out), and the gateway's one
store on each of its databases (SQLite, PostgreSQL): the whole outbox suite runs on
each."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Callable, Coroutine, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pytest

from hitl_nb.gateway import GatewayStore
from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.notify import Batch, Note
from tests.helpers import postgres
from tests.helpers.outbox_sqlite import SQLiteOutbox
from tests.helpers.postgres import pg_cluster, pg_url

__all__ = ["Opener", "opener", "pg_cluster", "pg_url"]

T = TypeVar("T")


class TestOutbox(Protocol):
    """What the outbox suite uses: the protocol, and a few helpers."""

    def add_now(self, notes: Iterable[Note]) -> int: ...
    async def withdraw(
        self, reg_id: str, prompt_id: str, *, recipient: str | None = None
    ) -> int: ...
    async def claim(
        self, owner: str, now: float, lease: float, *, recipients: int, listed: int
    ) -> list[Batch]: ...
    async def mark_sent(self, batch: Batch, at: float, next_at: float) -> bool: ...
    async def mark_retry(self, batch: Batch, not_before: float, error: str | None) -> bool: ...
    async def give_up(self, batch: Batch, at: float, reason: str) -> bool: ...
    async def give_up_stale(self, at: float, due_before: float) -> list[Note]: ...
    def states(self) -> dict[str, int]: ...
    def audit(self) -> list[dict[str, Any]]: ...
    def close(self) -> None: ...


Opener = Callable[[], TestOutbox]


class StoreOutboxUnderTest:
    """The gateway store's outbox, run on a loop of its own (its connections belong to
    that loop) so the suite's synchronous helpers can be called inside its coroutines."""

    def __init__(self, make: Callable[[], GatewayStore]) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.store = self._wait(self._open(make))

    async def _open(self, make: Callable[[], GatewayStore]) -> GatewayStore:
        store = make()
        await store.open()
        return store

    def _wait(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(60)

    async def _on(self, coro: Coroutine[Any, Any, T]) -> T:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._loop))

    def add_now(self, notes: Iterable[Note]) -> int:
        from hitl_nb.gateway._outbox import write_notes

        async def go() -> int:
            added = 0
            for sql, args in write_notes(list(notes)):
                added += await self.store._db.count(sql, args)
            return added

        return self._wait(go())

    async def withdraw(self, reg_id: str, prompt_id: str, *, recipient: str | None = None) -> int:
        from hitl_nb.gateway._outbox import withdraw

        return await self._on(self.store._db.count(*withdraw(reg_id, prompt_id, 0.0, recipient)))

    async def claim(
        self, owner: str, now: float, lease: float, *, recipients: int, listed: int
    ) -> list[Batch]:
        outbox = self.store.outbox
        return await self._on(outbox.claim(owner, now, lease, recipients=recipients, listed=listed))

    async def mark_sent(self, batch: Batch, at: float, next_at: float) -> bool:
        return await self._on(self.store.outbox.mark_sent(batch, at, next_at))

    async def mark_retry(self, batch: Batch, not_before: float, error: str | None) -> bool:
        return await self._on(self.store.outbox.mark_retry(batch, not_before, error))

    async def give_up(self, batch: Batch, at: float, reason: str) -> bool:
        return await self._on(self.store.outbox.give_up(batch, at, reason))

    async def give_up_stale(self, at: float, due_before: float) -> list[Note]:
        return await self._on(self.store.outbox.give_up_stale(at, due_before))

    def states(self) -> dict[str, int]:
        return self._wait(self.store.outbox.states())

    def audit(self) -> list[dict[str, Any]]:
        entries = self._wait(self.store.audit(None))
        return [{**e.to_json(), "note_recipient": e.display} for e in entries]

    def close(self) -> None:
        self._wait(self.store.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


_SCHEMAS = itertools.count()


def _store_sqlite(request: pytest.FixtureRequest, folder: Path) -> Opener:
    return lambda: StoreOutboxUnderTest(lambda: SQLiteStore(folder / "gateway.sqlite"))


def _store_postgresql(request: pytest.FixtureRequest, folder: Path) -> Opener:
    from hitl_nb.gateway._postgres import PostgresStore

    url: str = request.getfixturevalue("pg_url")
    cluster: postgres.Cluster = request.getfixturevalue("pg_cluster")
    schema = f"o{next(_SCHEMAS)}"
    cluster.psql(f"CREATE SCHEMA {schema}", url.rsplit("/", 1)[1])
    where = postgres.with_schema(url, schema)
    return lambda: StoreOutboxUnderTest(lambda: PostgresStore(where))


#: Name -> how to open the test's outbox (the same database at each call: a second
#: connection, as a second replica has).
OUTBOXES: dict[str, Callable[[pytest.FixtureRequest, Path], Opener]] = {
    "sqlite-helper": lambda request, folder: lambda: SQLiteOutbox(folder / "outbox.sqlite"),
    "store-sqlite": _store_sqlite,
    "store-postgresql": _store_postgresql,
}


@pytest.fixture(params=sorted(OUTBOXES))
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    opened: list[TestOutbox] = []
    make = OUTBOXES[request.param](request, tmp_path)

    def open_one() -> TestOutbox:
        outbox = make()
        opened.append(outbox)
        return outbox

    yield open_one
    for outbox in opened:
        outbox.close()
