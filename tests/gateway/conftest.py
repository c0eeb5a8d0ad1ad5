"""The gateway's stores, one fixture for all: every store test runs on each database
the gateway ships (add a database here and the whole store suite runs on it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hitl_nb.gateway import GatewayStore, SQLiteStore

#: Database name -> how to open it (the same database every call) in a test's folder.
STORES: dict[str, Callable[[Path], GatewayStore]] = {
    "sqlite": lambda folder: SQLiteStore(folder / "gateway.sqlite"),
}

Opener = Callable[[], GatewayStore]


@pytest.fixture(params=sorted(STORES))
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens the test's database (the same one each call: a new connection, as a second
    process or a restarted one has)."""
    make = STORES[request.param]
    yield lambda: make(tmp_path)
