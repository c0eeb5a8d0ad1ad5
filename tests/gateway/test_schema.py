"""The schema's versions on both databases: one numbering, and an older database
brought up to date in place, keeping its rows (version 2, before replicas, to 3).

SQLite's own history (the unnumbered first layout, a failed step) is in
``test_sqlite.py``, PostgreSQL's (a newer database refused, a failed step, two replicas
migrating at once) in ``test_postgres.py``.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hitl_nb.gateway import SCHEMA_VERSION, GatewayStore, OpenQuery, PostgresStore, SQLiteStore
from hitl_nb.gateway._sqlite import migrate
from tests.helpers import postgres

ANY = {"prompt_id": "p-any", "prompt": "Anyone?", "response_schema": {"type": "object"}}
BOB = {**ANY, "prompt_id": "p-bob", "allowed_responders": ["specific:bob"]}
TWO = {**ANY, "prompt_id": "p-two", "allowed_responders": ["consensus:2"]}

# Version 2's rows, in each database's placeholders: a registration, three prompts,
# a ballot, a forward in doubt, a push secret, one audit entry.
V2_ROWS: list[tuple[str, tuple[Any, ...]]] = [
    (
        "INSERT INTO registrations VALUES (?, ?, ?, ?, ?, ?)",
        ("r1", "http://agent.invalid", "t1", "Alice", 1.0, "alice"),
    ),
    *[
        (
            "INSERT INTO prompts VALUES (?, ?, ?, ?, ?, ?, ?)",
            ("r1", env["prompt_id"], "c1", json.dumps(env), None, 2.0 + i, None),
        )
        for i, env in enumerate((ANY, BOB, TWO))
    ],
    ("INSERT INTO ballots VALUES (?, ?, ?, ?, ?)", ("r1", "p-two", "carol", '{"a":1}', 3.0)),
    (
        "INSERT INTO forwards VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ("r1", "p-any", "m1", "{}", '["alice"]', "forwarding", None, 4.0),
    ),
    ("INSERT INTO push VALUES (?, ?, ?, ?)", ("r1", "kept-secret", 5.0, 2)),
]


def _old_sqlite(folder: Path) -> Callable[[], GatewayStore]:
    path = folder / "v2.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    assert migrate(db, upto=2) == 0
    for sql, args in V2_ROWS:
        db.execute(sql, args)
    db.close()
    return lambda: SQLiteStore(path)


def _old_postgres(request: pytest.FixtureRequest) -> Callable[[], GatewayStore]:
    url: str = request.getfixturevalue("pg_url")
    cluster: postgres.Cluster = request.getfixturevalue("pg_cluster")
    schema = f"v2_{request.node.name[-8:].strip('[]-')}"
    cluster.psql(f"CREATE SCHEMA {schema}", url.rsplit("/", 1)[1])
    url = postgres.with_schema(url, schema)

    async def make() -> None:
        store = PostgresStore(url)
        await store.open(upto=2)
        await store.close()

    asyncio.run(make())
    with psycopg.connect(url, autocommit=True) as conn:
        for sql, args in V2_ROWS:
            conn.execute(sql.replace("?", "%s"), args)  # type: ignore[arg-type]
    return lambda: PostgresStore(url)


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_a_version_2_database_is_brought_to_version_3_keeping_its_rows(
    database: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    opener = _old_sqlite(tmp_path) if database == "sqlite" else _old_postgres(request)

    async def go() -> None:
        store = opener()
        await store.open()
        assert store.found_version == 2
        reg = await store.registration("r1")
        assert reg is not None and reg.registrant == "alice"
        assert [b.responder for b in await store.ballots("r1", "p-two")] == ["carol"]
        assert await store.push_secret("r1") == "kept-secret"
        (doubt,) = await store.unsettled_forwards()
        assert doubt.owner == ""  # no replica claimed it: the first round adopts it
        assert [f.prompt_id for f in await store.adopt_forwards("me")] == ["p-any"]

        # Who may answer was filled in from the stored envelopes.
        def ids(listed: list[Any]) -> list[str]:
            return [i.row.prompt_id for i in listed]

        mine, total = await store.list_open(OpenQuery("dave"), 10)
        assert ids(mine) == ["p-any", "p-two"] and total == 2
        bobs, _ = await store.list_open(OpenQuery("bob"), 10)
        assert ids(bobs) == ["p-any", "p-bob", "p-two"]
        anonymous, _ = await store.list_open(OpenQuery(None), 10)
        assert ids(anonymous) == ["p-any"]
        # The new tables work: the registration is leased to the one replica.
        assert await store.hold_leases("me", 30.0) == {"r1"}
        await store.close()
        again = opener()
        await again.open()
        assert again.found_version == SCHEMA_VERSION  # nothing more to do
        await again.close()

    asyncio.run(go())
