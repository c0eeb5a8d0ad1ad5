"""The schema's versions on both databases: one numbering, and an older database
brought up to date in place, keeping its rows (version 2, before replicas, to 3;
databases written by version 3 and by version 4, before the outbox, to today's).

SQLite's own history (the unnumbered first layout, a failed step) is in
``test_sqlite.py``, PostgreSQL's (a newer database refused, a failed step, two replicas
migrating at once) in ``test_postgres.py``.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hitl_nb.gateway import GatewayStore
from hitl_nb.gateway._postgres import PostgresStore
from hitl_nb.gateway._schema import SCHEMA_VERSION
from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.gateway._store import OpenQuery
from tests.gateway.schema3 import make as schema3
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


def _as_it_knew(value: Any) -> Any:
    """What a newer store reads back, in the members an older one knew: a
    registration's ``two_person`` (the two-person rule, added later) is checked to be
    off, as every registration made before it is, and left out."""
    if isinstance(value, dict):
        if "registrant" in value and "two_person" in value:
            assert value.pop("two_person") is False, value
        return {k: _as_it_knew(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_it_knew(v) for v in value]
    return value


def _old_sqlite(folder: Path) -> Callable[[], GatewayStore]:
    path = folder / "v2.sqlite"
    made = SQLiteStore(path, upto=2)
    assert made.found_version == 0
    asyncio.run(made.close())
    db = sqlite3.connect(path, isolation_level=None)
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


# -- databases written by version 3 (tests/gateway/schema3: made by that version's stores)

SCHEMA3 = Path(__file__).parent / "schema3"


def _schema3_sqlite(folder: Path, fixtures: Path = SCHEMA3) -> Path:
    path = folder / f"{fixtures.name}.sqlite"
    db = sqlite3.connect(path)
    db.executescript((fixtures / "sqlite.sql").read_text(encoding="utf-8"))
    db.close()
    return path


def _schema3_postgres(request: pytest.FixtureRequest, fixtures: Path = SCHEMA3) -> str:
    cluster: postgres.Cluster = request.getfixturevalue("pg_cluster")
    url = cluster.database(fixtures.name)
    subprocess.run(
        [str(cluster.bin / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url]
        + ["-f", str(fixtures / "postgresql.sql")],
        check=True,
        capture_output=True,
    )
    return url


async def _raw(where: Path | str) -> dict[str, Any]:
    """The rows the interface does not read back, straight from the database."""
    if isinstance(where, Path):
        with closing(sqlite3.connect(where)) as db:
            rows = {k: db.execute(q).fetchall() for k, q in schema3.RAW_SQL.items()}
    else:
        async with await psycopg.AsyncConnection.connect(where) as conn:
            rows = {}
            for k, q in schema3.RAW_SQL.items():
                cur = await conn.execute(q)
                rows[k] = await cur.fetchall()
    return schema3.raw(rows)


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_a_version_3_database_is_brought_up_to_date_with_nothing_lost(
    database: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    where = _schema3_sqlite(tmp_path) if database == "sqlite" else _schema3_postgres(request)

    def opener() -> GatewayStore:
        return SQLiteStore(where) if isinstance(where, Path) else PostgresStore(where)

    expected = json.loads((SCHEMA3 / "readback.json").read_text(encoding="utf-8"))

    async def go() -> None:
        store = opener()
        await store.open()
        assert store.found_version == 3
        # Every row reads back with the values version 3 read: registrations, prompts,
        # ballots, forwards, push secrets, the audit trail, and who sees and may answer
        # what in every listing.
        got = _as_it_knew(await schema3.read(store))
        got["raw"] = await _raw(where)
        for key in expected:
            assert got[key] == expected[key], key
        # Forwards in doubt: a dead replica's and an unowned one are adopted, a live
        # replica's is not; the dead replica's leases are taken, the live one's kept.
        adopted = await store.adopt_forwards("replica-new")
        assert sorted(f.prompt_id for f in adopted) == ["p-doubt", "p-doubt-dead"]
        assert await store.hold_leases("replica-new", 30.0) == {"r-bob", "r-quote"}
        # Open prompts are still answered as before: a ballot joins the ones cast, a
        # forward is claimed once, and not where one was claimed before.
        ballots = await store.cast_ballot("r-team", "p-two", "dave", '{"alpha":true}')
        assert [b.responder for b in ballots] == ["carol", "dave"]
        assert await store.begin_forward("r-team", "p-two", "m", "{}", ["carol", "dave"])
        assert await store.begin_forward("r-team", "p-forwarded", "m", "{}", ["x"]) is None
        assert await store.begin_forward("r-team", "p-doubt", "m", "{}", ["x"]) is None
        assert await store.begin_forward("r-team", "p-dropped", "m2", "{}", ["bob"])
        # Push secrets stay; the audit trail goes on after its last id.
        assert await store.ensure_push_secret("r-team", "other") == "secret-team-0123456789"
        await store.add_audit(schema3.audit_entries()[0])
        assert [e.id for e in await store.audit(None, after=10)] == [11]
        # A new prompt for named people is listed for them alone.
        env = schema3.envelope("p-new", ["specific:o'brien", "specific:zoë"], None)
        await store.see_prompt("r-bob", "p-new", None, env, None)
        for name, listed in [("zoë", True), ("o'brien", True), ("bob", False), (None, False)]:
            query = OpenQuery(None, see_all=True, for_responder=True, responder=name)
            page, _ = await store.list_open(query, 1000)
            assert ("p-new" in [i.row.prompt_id for i in page]) is listed, name
        await store.close()
        again = opener()
        await again.open()
        assert again.found_version == SCHEMA_VERSION  # nothing more to do
        await again.close()

    asyncio.run(go())


# -- databases written by version 4 (tests/gateway/schema4: the same rows, before the outbox)

SCHEMA4 = Path(__file__).parent / "schema4"


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_a_version_4_database_gets_the_outbox_with_nothing_lost(
    database: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    from hitl_nb.notify import PromptFacts, TeamChannels, opened_notes, person

    if database == "sqlite":
        where: Path | str = _schema3_sqlite(tmp_path, SCHEMA4)
    else:
        where = _schema3_postgres(request, SCHEMA4)

    def opener() -> GatewayStore:
        return SQLiteStore(where) if isinstance(where, Path) else PostgresStore(where)

    expected = json.loads((SCHEMA4 / "readback.json").read_text(encoding="utf-8"))

    async def go() -> None:
        store = opener()
        await store.open()
        assert store.found_version == 4
        got = _as_it_knew(await schema3.read(store))
        got["raw"] = await _raw(where)
        for key in expected:
            assert got[key] == expected[key], key
        # The outbox is there: a prompt seen writes its notes in its transaction, the
        # sender claims them, a ballot withdraws the answerer's own.
        store.notes_on = True
        env = schema3.envelope("p-new", ["specific:bob", "specific:carol"], schema3.FAR)
        facts = PromptFacts(
            "r-team",
            "p-new",
            schema3.AGENT,
            env["prompt"],
            deadline=schema3.FAR,
            specific=("bob", "carol"),
        )
        await store.see_prompt(
            "r-team",
            "p-new",
            None,
            env,
            schema3.FAR,
            notes=lambda now: opened_notes(facts, TeamChannels(), now),
        )
        assert await store.outbox.states() == {"pending": 4}  # opened and reminder, each
        await store.cast_ballot("r-team", "p-new", "bob", "{}")
        assert await store.outbox.states() == {"pending": 2, "withdrawn": 2}
        (batch,) = await store.outbox.claim("replica", 2e9, 60, recipients=10, listed=5)
        assert batch.recipient == person("carol") and batch.notes[0].kind == "opened"
        assert batch.notes[0].facts.answers == 1
        await store.close()
        again = opener()
        await again.open()
        assert again.found_version == SCHEMA_VERSION >= 6
        await again.close()

    asyncio.run(go())


# -- databases written by version 5 (tests/gateway/schema5: the same rows, an unchained trail)

SCHEMA5 = Path(__file__).parent / "schema5"


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_a_version_5_database_has_its_audit_trail_chained_in_order(
    database: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    from hitl_nb.gateway._audit_export import exported
    from hitl_nb.gateway._audit_verify import verify

    if database == "sqlite":
        where: Path | str = _schema3_sqlite(tmp_path, SCHEMA5)
    else:
        where = _schema3_postgres(request, SCHEMA5)

    def opener() -> GatewayStore:
        return SQLiteStore(where) if isinstance(where, Path) else PostgresStore(where)

    expected = json.loads((SCHEMA5 / "readback.json").read_text(encoding="utf-8"))

    async def go() -> None:
        store = opener()
        await store.open()
        assert store.found_version == 5
        got = _as_it_knew(await schema3.read(store))
        for key in expected:
            if key != "raw":
                assert got[key] == expected[key], key
        # The ten entries written by version 5, chained in the order they were written.
        rows = [r async for r in exported(store)]
        assert [r["seq"] for r in rows] == list(range(1, 11))
        assert [r["id"] for r in rows] == [e["id"] for e in expected["audit"]]
        verdict = verify(rows)
        assert verdict.whole, verdict.lines()
        # The chain goes on from its last link.
        await store.add_audit(schema3.audit_entries()[0])
        rows = [r async for r in exported(store)]
        assert rows[-1]["seq"] == 11 and rows[-1]["prev_hash"] == rows[-2]["hash"]
        assert verify(rows).whole
        await store.close()
        again = opener()
        await again.open()
        assert again.found_version == SCHEMA_VERSION
        await again.close()

    asyncio.run(go())
