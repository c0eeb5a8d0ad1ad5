"""Which database a db_url names: a SQLite file or PostgreSQL, anything else refused up
front (never repeating a password)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hitl_nb.gateway import check_db_url, open_store
from hitl_nb.gateway._db_url import sqlite_path
from hitl_nb.gateway._postgres import PostgresStore
from hitl_nb.gateway._sqlite import SQLiteStore


def test_none_is_the_state_folders_file(tmp_path: Path) -> None:
    assert sqlite_path(None, tmp_path) == tmp_path / "gateway.sqlite"
    assert sqlite_path("", tmp_path) == tmp_path / "gateway.sqlite"


def test_sqlalchemy_spellings_of_a_file(tmp_path: Path) -> None:
    assert sqlite_path("sqlite:///rel/gw.sqlite", tmp_path) == Path("rel/gw.sqlite")
    assert sqlite_path(f"sqlite:///{tmp_path}/a%20b.sqlite", tmp_path) == tmp_path / "a b.sqlite"


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("mysql://hitl:pw@x/y", "not supported"),
        ("postgresql://hitl:pw@db.example/", "names no database"),
        ("gateway.sqlite", "not supported"),
        ("sqlite://", "names no file"),
        ("sqlite://host/file.sqlite", "names no file"),
        ("sqlite:///:memory:", "keeps nothing"),
    ],
)
def test_what_it_cannot_open_is_refused_saying_what_works(
    url: str, words: str, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=words) as refused:
        check_db_url(url)
    assert "pw" not in str(refused.value)


def test_open_store_makes_the_folder_and_the_file(tmp_path: Path) -> None:
    store = open_store(None, tmp_path / "deep" / "state")
    assert isinstance(store, SQLiteStore)
    assert (tmp_path / "deep" / "state" / "gateway.sqlite").exists()
    asyncio.run(store.close())


@pytest.mark.parametrize(
    "url", ["postgresql://hitl:pw@db/gw", "postgres://db/gw", "postgresql+psycopg://db:6432/gw"]
)
def test_postgresql_urls_open_a_postgresql_store_that_connects_when_used(
    url: str, tmp_path: Path
) -> None:
    check_db_url(url)
    store = open_store(url, tmp_path)
    assert isinstance(store, PostgresStore) and store.found_version is None
    assert "pw" not in store.where and "'gw'" in store.where
    assert list(tmp_path.iterdir()) == []  # no file made, no connection yet
