"""Which database a ``db_url`` names, opened as a :class:`~hitl_nb.gateway.GatewayStore`.

- None or ``""``: the SQLite file ``gateway.sqlite`` in the host's state directory;
- ``sqlite:///relative/path.sqlite`` or ``sqlite:////absolute/path.sqlite`` (SQLAlchemy's
  spelling, as JupyterHub's own ``db_url``).

Anything else is refused with a message naming what is supported, before the service
starts serving (a typo must not silently fall back to a file nobody backs up).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.gateway._store import GatewayStore

__all__ = ["open_store", "sqlite_path"]

DEFAULT_FILE = "gateway.sqlite"


def sqlite_path(db_url: str | None, state_dir: Path) -> Path:
    """The SQLite file ``db_url`` names (``state_dir / gateway.sqlite`` when None).

    Raises ``ValueError`` for a URL that does not name a SQLite file."""
    if not db_url:
        return state_dir / DEFAULT_FILE
    parts = urlsplit(db_url)
    if parts.scheme != "sqlite":
        raise ValueError(
            f"db_url {parts.scheme + '://...' if parts.scheme else db_url!r} is not "
            "supported: use None (a SQLite file in the state directory) or "
            "sqlite:///path/to/file.sqlite"
        )
    if parts.netloc or not parts.path or parts.path == "/":
        raise ValueError(f"db_url {db_url!r} names no file: use sqlite:///path/to/file.sqlite")
    path = unquote(parts.path[1:])  # sqlite:///rel -> "rel"; sqlite:////abs -> "/abs"
    if path == ":memory:":
        raise ValueError("db_url sqlite:///:memory: keeps nothing across a restart")
    return Path(path)


def open_store(db_url: str | None, state_dir: Path) -> GatewayStore:
    """The store ``db_url`` names (see the module docstring)."""
    path = sqlite_path(db_url, state_dir)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return SQLiteStore(path)
