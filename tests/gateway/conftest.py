"""The gateway's stores, one fixture for all: every store test runs on each database
the gateway ships (add a database here and the whole store suite runs on it).

PostgreSQL: the process's throwaway cluster (:mod:`tests.helpers.postgres`), a fresh
database per test module, and in it a fresh schema per test."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hitl_nb.gateway import GatewayStore
from hitl_nb.gateway._sqlite import SQLiteStore
from tests.helpers import postgres
from tests.helpers.postgres import pg_cluster, pg_url

__all__ = ["Opener", "opener", "pg_cluster", "pg_url"]

Opener = Callable[[], GatewayStore]
_SCHEMAS = itertools.count()


def _sqlite(request: pytest.FixtureRequest, folder: Path) -> Opener:
    return lambda: SQLiteStore(folder / "gateway.sqlite")


def _postgresql(request: pytest.FixtureRequest, folder: Path) -> Opener:
    from hitl_nb.gateway._postgres import PostgresStore

    url: str = request.getfixturevalue("pg_url")
    cluster: postgres.Cluster = request.getfixturevalue("pg_cluster")
    schema = f"s{next(_SCHEMAS)}"
    cluster.psql(f"CREATE SCHEMA {schema}", url.rsplit("/", 1)[1])
    return lambda: PostgresStore(postgres.with_schema(url, schema))


#: Database name -> how to open it (the same database every call) for a test.
STORES: dict[str, Callable[[pytest.FixtureRequest, Path], Opener]] = {
    "sqlite": _sqlite,
    "postgresql": _postgresql,
}


@pytest.fixture(params=sorted(STORES))
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens the test's database (the same one each call: a new connection, as a second
    process or a restarted one has)."""
    yield STORES[request.param](request, tmp_path)
