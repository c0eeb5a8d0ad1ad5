"""The gateway's store per answer, on SQLite and PostgreSQL, and what SQLAlchemy Core adds.

    python benchmarks/bench_store.py [--prompts 300] [--rounds 3]

1. **The store's share of an answer.** What :meth:`Gateway.answer` asks of the store for
   a ``consensus:2`` prompt answered twice (the first answer held, the second
   forwarded): the registration, the prompt with its forward, the ballot cast and
   counted, the forward claimed and finished (its prompt closed), an audit entry each.
   One answer after another in this process, on a SQLite file and on a throwaway
   PostgreSQL cluster (``fsync`` on, as in production): the CPU this process spends per
   answer (the store's Python and the driver's; PostgreSQL's own processes apart) and
   the wall time. Only the store's public interface is used, so the same script runs on
   any checkout (``PYTHONPATH=<checkout> python benchmarks/bench_store.py``).
2. **The audit chain's cost.** The same answers with the audit trail chained (each
   entry's digest computed here, its link hashed by the statement that appends it) and
   with version 5's plain insert of the same columns in its place, rounds alternating in
   one run on each database: the CPU per answer each way and their ratio.
3. **SQLAlchemy Core, the other way to write the SQL once** (as JupyterHub and a2a-python
   do; needs ``sqlalchemy`` and, for its asyncio engine, ``greenlet``): two of those
   statements, the prompt read with its forward and the ballot cast (lock, upsert, read
   in one transaction), through SQLAlchemy Core (tables and ``select()``, its compiled
   cache warm) next to the driver itself, on the same tables: the CPU per call each way.

The machine is shared: the load average (1 min) is printed with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._signals import end_on_sigterm  # noqa: E402
from hitl_nb.gateway import GatewayStore  # noqa: E402
from hitl_nb.gateway._postgres import PostgresStore  # noqa: E402
from hitl_nb.gateway._sqlite import SQLiteStore  # noqa: E402
from hitl_nb.gateway._store import AuditEntry, Registration  # noqa: E402
from tests.helpers import postgres  # noqa: E402

PAYLOAD = '{"approve":true}'


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def _entry(reg_id: str, prompt_id: str, action: str) -> AuditEntry:
    sha = "a" * 64
    agent = "http://agent.invalid"
    return AuditEntry(
        time.time(), reg_id, "t", agent, prompt_id, "u1", "U1", action, 202, None, sha, sha, ["u1"]
    )


async def _seed(store: GatewayStore, prompts: int, tag: str) -> list[tuple[str, str]]:
    reg = await store.add_registration(
        Registration(f"r-{tag}", "http://agent.invalid", f"t-{tag}", "U", time.time(), "u0")
    )
    keys = []
    for i in range(prompts):
        pid = f"p-{tag}-{i}"
        env = {"prompt_id": pid, "prompt": "Approve?", "allowed_responders": ["consensus:2"]}
        await store.see_prompt(reg.id, pid, None, env, None)
        keys.append((reg.id, pid))
    return keys


async def _answers(store: GatewayStore, keys: list[tuple[str, str]]) -> None:
    """Each prompt answered twice, as the gateway asks the store."""
    for reg_id, pid in keys:
        for k, responder in enumerate(("u1", "u2")):
            assert await store.registration(reg_id) is not None
            row, fwd = await store.prompt_and_forward(reg_id, pid)
            assert row is not None and fwd is None
            ballots = await store.cast_ballot(reg_id, pid, responder, PAYLOAD)
            if k == 1:
                responders = [b.responder for b in ballots]
                assert await store.begin_forward(reg_id, pid, f"m-{pid}", PAYLOAD, responders)
                await store.finish_forward(reg_id, pid, "forwarded", "ok", closed="answered")
            await store.add_audit(_entry(reg_id, pid, "forwarded" if k else "held"))


async def seeded(store: GatewayStore, prompts: int, tag: str) -> list[tuple[str, str]]:
    try:
        return await _seed(store, prompts, tag)
    finally:
        await store.close()


async def per_answer(make: Callable[[], GatewayStore], prompts: int, rounds: int) -> str:
    store = make()
    await store.open()
    cpu: list[float] = []
    wall: list[float] = []
    for r in range(rounds + 1):
        keys = await _seed(store, prompts, f"{os.getpid()}-{time.time_ns()}-{r}")
        t0, w0 = time.process_time(), time.perf_counter()
        await _answers(store, keys)
        if r:  # the first round warms caches, prepared statements, the pool
            cpu.append((time.process_time() - t0) / (2 * prompts))
            wall.append((time.perf_counter() - w0) / (2 * prompts))
    await store.close()
    med = statistics.median
    each = ", ".join(f"{c * 1e3:.2f}" for c in cpu)
    return (
        f"CPU {med(cpu) * 1e3:5.2f} ms per answer (rounds {each}), "
        f"wall {med(wall) * 1e3:5.2f} ms  ({load()})"
    )


# -- 2. the audit chain's cost ----------------------------------------------------------


def _unchained(dialect: Any, values: Any) -> tuple[str, tuple[Any, ...]]:
    """Version 5's statement in place of :func:`hitl_nb.gateway._chain.append`."""
    import json

    from hitl_nb.gateway._chain import COLUMNS

    columns = [c for c, _ in COLUMNS]
    args = [values[c] for c in columns]
    args[12] = json.dumps(values["responders"])
    args[13] = None if values["agent_reply"] is None else json.dumps(values["agent_reply"])
    marks = ", ".join("?" * len(columns))
    return f"INSERT INTO audit ({', '.join(columns)}) VALUES ({marks})", tuple(args)


STORE_APPEND = "hitl_nb.gateway._store.append"


async def chain_cost(make: Callable[[], GatewayStore], prompts: int, rounds: int) -> str:
    from contextlib import nullcontext
    from unittest import mock

    store = make()
    await store.open()
    cpu: dict[bool, list[float]] = {True: [], False: []}
    for r in range(rounds + 1):
        for chained in (True, False):
            keys = await _seed(store, prompts, f"c{os.getpid()}-{time.time_ns()}-{r}-{chained}")
            swap = nullcontext() if chained else mock.patch(STORE_APPEND, _unchained)
            with swap:
                t0 = time.process_time()
                await _answers(store, keys)
                if r:
                    cpu[chained].append((time.process_time() - t0) / (2 * prompts))
    await store.close()
    on, off = statistics.median(cpu[True]), statistics.median(cpu[False])
    return (
        f"CPU {on * 1e3:5.2f} ms per answer chained, {off * 1e3:5.2f} ms unchained: "
        f"{on / off:.3f}x  ({load()})"
    )


# -- 3. SQLAlchemy Core next to the driver ----------------------------------------------


def _tables() -> Any:
    import sqlalchemy as sa

    meta = sa.MetaData()

    def table(name: str, columns: str) -> Any:
        return sa.Table(name, meta, *(sa.Column(c) for c in columns.split()))

    return (
        table("prompts", "reg_id prompt_id context_id envelope deadline first_seen closed"),
        table("forwards", "reg_id prompt_id message_id payload responders state detail at owner"),
        table("ballots", "reg_id prompt_id responder payload at"),
    )


def _sa_statements(dialect_insert: Any) -> tuple[Callable[..., Any], Callable[..., list[Any]]]:
    """The two statements as SQLAlchemy Core builds them (``dialect_insert``: the
    dialect's ``insert`` with ``on_conflict_do_update``)."""
    import sqlalchemy as sa

    prompts, forwards, ballots = _tables()
    read = (
        sa.select(prompts, forwards)
        .select_from(
            prompts.outerjoin(
                forwards,
                sa.and_(
                    forwards.c.reg_id == prompts.c.reg_id,
                    forwards.c.prompt_id == prompts.c.prompt_id,
                ),
            )
        )
        .where(prompts.c.reg_id == sa.bindparam("r"), prompts.c.prompt_id == sa.bindparam("p"))
    )

    def read_args(reg_id: str, pid: str) -> Any:
        return read, {"r": reg_id, "p": pid}

    key = sa.and_(prompts.c.reg_id == sa.bindparam("r"), prompts.c.prompt_id == sa.bindparam("p"))
    lock = sa.select(sa.literal(1)).select_from(prompts).where(key)
    ins = dialect_insert(ballots).values(
        reg_id=sa.bindparam("r"),
        prompt_id=sa.bindparam("p"),
        responder=sa.bindparam("who"),
        payload=sa.bindparam("payload"),
        at=sa.bindparam("at"),
    )
    ins = ins.on_conflict_do_update(
        index_elements=["reg_id", "prompt_id", "responder"],
        set_={"payload": ins.excluded.payload, "at": ins.excluded.at},
    )
    tally = (
        sa.select(ballots.c.responder, ballots.c.payload, ballots.c.at)
        .where(ballots.c.reg_id == sa.bindparam("r"), ballots.c.prompt_id == sa.bindparam("p"))
        .order_by(ballots.c.at, ballots.c.responder)
    )

    locked = lock.with_for_update()

    def cast(reg_id: str, pid: str, who: str, for_update: bool) -> list[Any]:
        """The three statements (built once) and their parameters."""
        args = {"r": reg_id, "p": pid, "who": who, "payload": PAYLOAD, "at": time.time()}
        return [(locked if for_update else lock, args), (ins, args), (tally, args)]

    return read_args, cast


def _timed(calls: int, run: Callable[[int], Any]) -> float:
    t0 = time.process_time()
    for i in range(calls):
        run(i)
    return (time.process_time() - t0) / calls * 1e6


async def _atimed(calls: int, run: Callable[[int], Awaitable[Any]]) -> float:
    t0 = time.process_time()
    for i in range(calls):
        await run(i)
    return (time.process_time() - t0) / calls * 1e6


def sqlalchemy_sqlite(path: Path, keys: list[tuple[str, str]]) -> str:
    import sqlite3

    import sqlalchemy as sa
    from sqlalchemy.dialects.sqlite import insert

    read_args, cast = _sa_statements(insert)
    n = len(keys)
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.connect() as conn:
        sa_read = _timed(n, lambda i: conn.execute(*read_args(*keys[i])).fetchall())
        conn.commit()

        def sa_cast(i: int) -> None:
            with conn.begin():
                for stmt, args in cast(*keys[i], "sa", False):
                    result = conn.execute(stmt, args)
                result.fetchall()

        sa_cast_us = _timed(n, sa_cast)
    engine.dispose()
    db = sqlite3.connect(path, isolation_level=None)
    read_sql = (
        "SELECT p.*, f.* FROM prompts p LEFT JOIN forwards f ON f.reg_id = p.reg_id "
        "AND f.prompt_id = p.prompt_id WHERE p.reg_id = ? AND p.prompt_id = ?"
    )
    raw_read = _timed(n, lambda i: db.execute(read_sql, keys[i]).fetchall())

    def raw_cast(i: int) -> None:
        db.execute("BEGIN IMMEDIATE")
        db.execute("SELECT 1 FROM prompts WHERE reg_id = ? AND prompt_id = ?", keys[i])
        db.execute(
            "INSERT INTO ballots (reg_id, prompt_id, responder, payload, at) VALUES "
            "(?, ?, ?, ?, ?) ON CONFLICT (reg_id, prompt_id, responder) DO UPDATE SET "
            "payload = excluded.payload, at = excluded.at",
            (*keys[i], "raw", PAYLOAD, time.time()),
        )
        db.execute(
            "SELECT responder, payload, at FROM ballots WHERE reg_id = ? AND prompt_id = ? "
            "ORDER BY at, responder",
            keys[i],
        ).fetchall()
        db.execute("COMMIT")

    raw_cast_us = _timed(n, raw_cast)
    db.close()
    return (
        f"read {raw_read:4.0f} us sqlite3, {sa_read:4.0f} us SQLAlchemy; "
        f"cast {raw_cast_us:5.0f} us sqlite3, {sa_cast_us:5.0f} us SQLAlchemy  ({load()})"
    )


async def sqlalchemy_postgres(url: str, keys: list[tuple[str, str]]) -> str:
    import psycopg
    import sqlalchemy as sa  # noqa: F401
    from sqlalchemy.dialects.postgresql import insert
    from sqlalchemy.ext.asyncio import create_async_engine

    read_args, cast = _sa_statements(insert)
    n = len(keys)
    engine = create_async_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    async with engine.connect() as conn:

        async def sa_read(i: int) -> None:
            (await conn.execute(*read_args(*keys[i]))).fetchall()

        async def sa_cast(i: int) -> None:
            async with conn.begin():
                for stmt, args in cast(*keys[i], "sa", True):
                    result = await conn.execute(stmt, args)
                result.fetchall()

        for i in range(10):  # warm: prepared statements, the compiled cache
            await sa_read(i)
        sa_read_us = await _atimed(n, sa_read)
        await conn.commit()
        sa_cast_us = await _atimed(n, sa_cast)
    await engine.dispose()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as raw:
        read_sql = (
            "SELECT p.*, f.* FROM prompts p LEFT JOIN forwards f ON f.reg_id = p.reg_id "
            "AND f.prompt_id = p.prompt_id WHERE p.reg_id = %s AND p.prompt_id = %s"
        )

        async def raw_read(i: int) -> None:
            await (await raw.execute(read_sql, keys[i])).fetchall()

        async def raw_cast(i: int) -> None:
            async with raw.transaction():
                await raw.execute(
                    "SELECT 1 FROM prompts WHERE reg_id = %s AND prompt_id = %s FOR UPDATE",
                    keys[i],
                )
                await raw.execute(
                    "INSERT INTO ballots (reg_id, prompt_id, responder, payload, at) VALUES "
                    "(%s, %s, %s, %s, %s) ON CONFLICT (reg_id, prompt_id, responder) DO UPDATE "
                    "SET payload = excluded.payload, at = excluded.at",
                    (*keys[i], "raw", PAYLOAD, time.time()),
                )
                cur = await raw.execute(
                    "SELECT responder, payload, at FROM ballots WHERE reg_id = %s "
                    "AND prompt_id = %s ORDER BY at, responder",
                    keys[i],
                )
                await cur.fetchall()

        for i in range(10):
            await raw_read(i)
        raw_read_us = await _atimed(n, raw_read)
        raw_cast_us = await _atimed(n, raw_cast)
    return (
        f"read {raw_read_us:4.0f} us psycopg, {sa_read_us:4.0f} us SQLAlchemy; "
        f"cast {raw_cast_us:5.0f} us psycopg, {sa_cast_us:5.0f} us SQLAlchemy (the same "
        f"statements one by one in a transaction)  ({load()})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"start ({load()}, {os.cpu_count()} cores)")
    cluster = postgres.start_cluster(fsync=True)
    try:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "gateway.sqlite"
            url = cluster.database("bench")
            print(f"\n1. the store's share of an answer ({args.prompts} prompts, answered twice)")
            sq = asyncio.run(per_answer(lambda: SQLiteStore(path), args.prompts, args.rounds))
            print(f"  SQLite       {sq}")
            pg = asyncio.run(per_answer(lambda: PostgresStore(url), args.prompts, args.rounds))
            print(f"  PostgreSQL   {pg}")
            print("\n2. the audit chain's cost (rounds alternating, CPU of this process)")
            sq = asyncio.run(chain_cost(lambda: SQLiteStore(path), args.prompts, args.rounds))
            print(f"  SQLite       {sq}")
            pg = asyncio.run(chain_cost(lambda: PostgresStore(url), args.prompts, args.rounds))
            print(f"  PostgreSQL   {pg}")
            try:
                import greenlet  # noqa: F401
                import sqlalchemy  # noqa: F401
            except ImportError as exc:
                print(f"\n3. skipped: {exc} (pip install sqlalchemy greenlet)")
                return
            print("\n3. SQLAlchemy Core next to the driver (CPU per call, same tables)")
            keys = asyncio.run(seeded(SQLiteStore(path), args.prompts, "sa"))
            print(f"  SQLite       {sqlalchemy_sqlite(path, keys)}")
            keys = asyncio.run(seeded(PostgresStore(url), args.prompts, "sa"))
            print(f"  PostgreSQL   {asyncio.run(sqlalchemy_postgres(url, keys))}")
    finally:
        cluster.stop()
        shutil.rmtree(cluster.folder, ignore_errors=True)


if __name__ == "__main__":
    end_on_sigterm()
    main()
