"""The outboxes the sender's promises are checked on: one opener per implementation.
Today the SQLite helper of the tests; the gateway's one store joins here when it
implements :class:`hitl_nb.notify.Outbox`, and the whole outbox suite runs on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers.outbox_sqlite import SQLiteOutbox

Opener = Callable[[], SQLiteOutbox]

#: Name -> how to open the test's outbox (the same database at each call: a second
#: connection, as a second replica has).
OUTBOXES: dict[str, Callable[[Path], Opener]] = {
    "sqlite-helper": lambda folder: lambda: SQLiteOutbox(folder / "outbox.sqlite"),
}


@pytest.fixture(params=sorted(OUTBOXES))
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    opened: list[SQLiteOutbox] = []

    def open_one() -> SQLiteOutbox:
        outbox = OUTBOXES[request.param](tmp_path)()
        opened.append(outbox)
        return outbox

    yield open_one
    for outbox in opened:
        outbox.close()
