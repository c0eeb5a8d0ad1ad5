"""The SQLite file's schema versions: a new file starts at the latest, an older one is
brought up to date in place keeping its rows, a newer one is refused. A file another
process keeps locked makes the store unavailable (the host's 503), changing nothing."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from hitl_nb.gateway import StoreUnavailable
from hitl_nb.gateway._schema import SCHEMA_VERSION
from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.gateway._store import Registration

# The layout hitl-nb wrote before its schema had a number (what users' files hold).
FIRST_LAYOUT = """
CREATE TABLE registrations (id TEXT PRIMARY KEY, agent_url TEXT NOT NULL,
    task_id TEXT NOT NULL, registered_by TEXT NOT NULL, created REAL NOT NULL,
    UNIQUE (agent_url, task_id));
CREATE TABLE prompts (reg_id TEXT NOT NULL REFERENCES registrations(id),
    prompt_id TEXT NOT NULL, context_id TEXT, envelope TEXT NOT NULL, deadline REAL,
    first_seen REAL NOT NULL, closed TEXT, PRIMARY KEY (reg_id, prompt_id));
CREATE TABLE ballots (reg_id TEXT NOT NULL, prompt_id TEXT NOT NULL,
    responder TEXT NOT NULL, payload TEXT NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (reg_id, prompt_id, responder));
CREATE TABLE forwards (reg_id TEXT NOT NULL, prompt_id TEXT NOT NULL,
    message_id TEXT NOT NULL, payload TEXT NOT NULL, responders TEXT NOT NULL,
    state TEXT NOT NULL, detail TEXT, at REAL NOT NULL, PRIMARY KEY (reg_id, prompt_id));
CREATE TABLE push (reg_id TEXT PRIMARY KEY, secret TEXT NOT NULL, configured REAL,
    received INTEGER NOT NULL DEFAULT 0);
INSERT INTO registrations VALUES ('r1', 'http://agent.invalid', 't1', 'Alice', 1.0);
INSERT INTO prompts VALUES ('r1', 'p1', 'c1', '{"prompt_id": "p1"}', NULL, 2.0, NULL);
INSERT INTO ballots VALUES ('r1', 'p1', 'alice', '{"ok":true}', 3.0);
INSERT INTO push VALUES ('r1', 'kept-secret', 4.0, 2);
"""


def _version(path: Path) -> int:
    with closing(sqlite3.connect(path)) as db, db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def test_a_new_file_starts_at_the_latest_version(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "new.sqlite")
    assert store.found_version == 0
    asyncio.run(store.close())
    assert _version(tmp_path / "new.sqlite") == SCHEMA_VERSION == 10


def test_a_file_of_the_first_layout_is_migrated_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with closing(sqlite3.connect(path)) as db, db:
        db.executescript(FIRST_LAYOUT)

    async def go() -> None:
        store = SQLiteStore(path)
        assert store.found_version == 1
        reg = await store.registration("r1")
        assert reg is not None and reg.registered_by == "Alice"
        assert reg.registrant is None  # not known then: only administrators read its trail
        assert [b.responder for b in await store.ballots("r1", "p1")] == ["alice"]
        assert await store.push_secret("r1") == "kept-secret"
        assert await store.push_configured("r1")
        entry_count = len(await store.audit())
        assert entry_count == 0  # the trail starts with the migration
        await store.close()

    asyncio.run(go())
    assert _version(path) == SCHEMA_VERSION
    again = SQLiteStore(path)  # opening a migrated file again changes nothing
    assert again.found_version == SCHEMA_VERSION
    asyncio.run(again.close())


def test_a_file_from_a_newer_hitl_nb_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(RuntimeError, match="newer than this hitl-nb"):
        SQLiteStore(path)


def test_a_failed_step_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "half.sqlite"
    with closing(sqlite3.connect(path)) as db, db:
        db.executescript(FIRST_LAYOUT)
        db.execute("CREATE TABLE audit (id INTEGER)")  # in the way of step 2
    with pytest.raises(sqlite3.OperationalError):
        SQLiteStore(path)
    assert _version(path) == 0
    with closing(sqlite3.connect(path)) as db, db:
        columns = [r[1] for r in db.execute("PRAGMA table_info(registrations)")]
    assert "registrant" not in columns  # the step's first change was rolled back too


def test_a_file_locked_by_another_process_is_unavailable_and_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "gateway.sqlite"

    async def go() -> None:
        store = SQLiteStore(path, timeout=0.05)  # not the 10 s a service waits
        await store.open()
        reg = await store.add_registration(
            Registration("r1", "http://agent.invalid", "t1", "Alice", 1.0, "alice")
        )
        await store.see_prompt(reg.id, "p1", None, {"prompt_id": "p1", "prompt": "?"}, None)
        assert await store.begin_forward(reg.id, "p1", "m1", "{}", ["alice"])
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another writer holds the file
        try:
            with pytest.raises(StoreUnavailable, match="locked"):
                await store.cast_ballot(reg.id, "p1", "bob", "{}")  # a transaction
            with pytest.raises(StoreUnavailable, match="locked"):
                await store.finish_forward(reg.id, "p1", "forwarded", "ok", closed="answered")
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert await store.ballots(reg.id, "p1") == []
        row, fwd = await store.prompt_and_forward(reg.id, "p1")
        assert row is not None and row.closed is None
        assert fwd is not None and fwd.state == "forwarding"
        await store.close()

    asyncio.run(go())
