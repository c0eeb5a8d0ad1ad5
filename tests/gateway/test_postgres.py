"""The PostgreSQL store's own matters: the URLs it takes, its schema history (a newer
database refused, a failed step undone, replicas starting together), and an outage:
calls fail fast naming the database, nothing half-written, and the same store works
again once the server is back (no reopening)."""

from __future__ import annotations

import asyncio
import time

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hitl_nb.gateway import StoreUnavailable, check_db_url
from hitl_nb.gateway._postgres import PostgresStore, postgres_conninfo
from hitl_nb.gateway._schema import SCHEMA_VERSION
from hitl_nb.gateway._store import Registration
from tests.helpers import postgres
from tests.helpers.until import until_async


def test_the_urls_it_takes_and_the_words_it_uses() -> None:
    conninfo, where = postgres_conninfo("postgresql://hitl:s3cret@db.example:6432/gw")
    assert conninfo == "postgresql://hitl:s3cret@db.example:6432/gw"
    assert where == "the gateway's PostgreSQL database 'gw' at db.example:6432"
    assert postgres_conninfo("postgresql+psycopg://u@h/gw")[0] == "postgresql://u@h/gw"
    assert postgres_conninfo("postgres://u@h/gw?sslmode=require")[0].endswith("?sslmode=require")
    for bad in ("postgresql://u:pw@h", "postgresql://u:pw@h/", "mysql://u:pw@h/db"):
        with pytest.raises(ValueError) as refused:
            check_db_url(bad)
        assert "pw" not in str(refused.value)


@pytest.mark.property
@given(st.text(max_size=80))
def test_no_text_makes_the_url_check_raise_anything_but_value_error(text: str) -> None:
    for url in (text, "postgresql://" + text, "postgresql://u@h/" + text):
        try:
            check_db_url(url)
        except ValueError:
            pass


def _schema(cluster: postgres.Cluster, url: str, name: str) -> str:
    cluster.psql(f"CREATE SCHEMA {name}", url.rsplit("/", 1)[1])
    return postgres.with_schema(url, name)


def test_a_database_from_a_newer_hitl_nb_is_refused(
    pg_cluster: postgres.Cluster, pg_url: str
) -> None:
    url = _schema(pg_cluster, pg_url, "future")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE hitl_schema (version integer NOT NULL)")
        conn.execute("INSERT INTO hitl_schema VALUES (%s)", (SCHEMA_VERSION + 1,))
    with pytest.raises(RuntimeError, match="newer than this hitl-nb"):
        asyncio.run(PostgresStore(url).open())


def test_a_failed_step_leaves_the_database_as_it_was(
    pg_cluster: postgres.Cluster, pg_url: str
) -> None:
    url = _schema(pg_cluster, pg_url, "half")

    async def at_two() -> None:
        store = PostgresStore(url)
        await store.open(upto=2)
        await store.close()

    asyncio.run(at_two())
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE replicas (id integer)")  # in the way of step 3
    with pytest.raises(psycopg.errors.DuplicateTable):
        asyncio.run(PostgresStore(url).open())
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT version FROM hitl_schema").fetchall() == [(2,)]
        columns = conn.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = 'half' AND table_name = 'registrations'"
        ).fetchall()
    assert ("ended",) not in columns  # the step's first change was rolled back too


def test_replicas_starting_together_migrate_once(pg_cluster: postgres.Cluster, pg_url: str) -> None:
    url = _schema(pg_cluster, pg_url, "together")

    async def go() -> list[int | None]:
        stores = [PostgresStore(url) for _ in range(4)]
        await asyncio.gather(*(s.open() for s in stores))
        found = [s.found_version for s in stores]
        await asyncio.gather(*(s.close() for s in stores))
        return found

    found = asyncio.run(go())
    assert sorted(found) == [0, SCHEMA_VERSION, SCHEMA_VERSION, SCHEMA_VERSION]  # type: ignore[type-var]


def test_an_outage_fails_fast_naming_the_database_and_the_store_recovers(
    pg_cluster: postgres.Cluster, pg_url: str
) -> None:
    url = _schema(pg_cluster, pg_url, "outage")

    async def go() -> None:
        store = PostgresStore(url, timeout=2.0)
        reg = Registration("r1", "http://agent.invalid", "t1", "Alice", time.time(), "alice")
        await store.add_registration(reg)
        assert await store.hold_leases("a", 60) == {"r1"}  # its own connection made
        pg_cluster.stop()
        try:
            with pytest.raises(StoreUnavailable):
                await store.hold_leases("a", 60)
            with pytest.raises(StoreUnavailable) as down:
                await store.add_registration(
                    Registration("r2", "http://agent.invalid", "t2", "Bob", time.time(), "bob")
                )
            database = pg_url.rsplit("/", 1)[1]
            assert down.value.where == (
                f"the gateway's PostgreSQL database {database!r} at 127.0.0.1:{pg_cluster.port}"
            )
            with pytest.raises(StoreUnavailable):
                await store.registrations()
        finally:
            pg_cluster.start()
        # The same store, no reopening: the pool replaced its dead connections.
        regs = await until_async(
            store.registrations,
            timeout=30,
            what="the store to reach PostgreSQL again",
            interval=0.1,
            ignore=StoreUnavailable,
        )
        assert [r.id for r in regs] == ["r1"]  # r2 was never half-written
        assert await store.hold_leases("a", 60) == {"r1"}  # the heartbeat's, made again
        await store.close()

    asyncio.run(go())


def test_the_heartbeat_comes_while_requests_hold_every_pooled_connection(
    pg_cluster: postgres.Cluster, pg_url: str
) -> None:
    """A replica whose requests keep every pooled connection busy still writes its
    heartbeat: on the pool it would wait its turn behind them (here: for ever, the pool
    says so after its timeout), its lease would lapse, and another replica would take
    this live one for dead and finish its forwards again."""
    url = _schema(pg_cluster, pg_url, "heartbeat")
    blocker = 0x68_69_74_6C_7F

    async def go() -> None:
        busy = PostgresStore(url, max_connections=2, timeout=2.0)
        other = PostgresStore(url)
        await busy.open()
        reg = await busy.add_registration(
            Registration("r1", "http://agent.invalid", "t1", "Alice", time.time(), "alice")
        )
        await busy.see_prompt(reg.id, "p1", None, {"prompt_id": "p1", "prompt": "?"}, None)
        assert await busy.hold_leases("a", 60) == {"r1"}
        assert await busy.begin_forward("r1", "p1", "m1", "{}", ["alice"], owner="a")
        with psycopg.connect(url, autocommit=True) as holder:
            holder.execute("SELECT pg_advisory_lock(%s)", (blocker,))
            # Requests that wait on the database (here for a lock) hold both connections.
            waiting = [
                asyncio.ensure_future(busy._db.count("SELECT pg_advisory_xact_lock(?)", (blocker,)))
                for _ in range(2)
            ]
            await until_async(
                lambda: _lock_waiters(holder, blocker), what="both pooled connections busy"
            )
            with pytest.raises(StoreUnavailable):
                await busy.registrations()  # the pool has nothing to lend
            assert await busy.hold_leases("a", 60) == {"r1"}  # the heartbeat comes anyway
            assert await other.adopt_forwards("b") == []  # "a" is alive: nothing adopted
            holder.execute("SELECT pg_advisory_unlock_all()")
            await asyncio.gather(*waiting)
        await busy.leave("a")
        await busy.close()
        await other.close()

    asyncio.run(go())


async def _lock_waiters(holder: psycopg.Connection, key: int) -> bool:
    rows = holder.execute(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = %s",
        (key & 0xFFFFFFFF,),
    ).fetchall()
    return int(rows[0][0]) == 2
