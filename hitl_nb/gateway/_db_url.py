"""Which database a ``db_url`` names, opened as a :class:`~hitl_nb.gateway.GatewayStore`.

- None or ``""``: the SQLite file ``gateway.sqlite`` in the host's state directory;
- ``sqlite:///relative/path.sqlite`` or ``sqlite:////absolute/path.sqlite`` (SQLAlchemy's
  spelling, as JupyterHub's own ``db_url``);
- ``postgresql://user[:password]@host[:port]/database`` (also ``postgres://`` and
  SQLAlchemy's ``postgresql+psycopg://``): PostgreSQL, through psycopg 3
  (:mod:`hitl_nb.gateway._postgres`, installed with the ``hub`` extra), for a hub whose
  service runs as several replicas.

Anything else is refused with a message naming what is supported, before the service
starts serving (a typo must not silently fall back to a file nobody backs up). A
refusal never repeats a password.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.gateway._store import GatewayStore

__all__ = ["check_db_url", "open_store", "sqlite_path"]

DEFAULT_FILE = "gateway.sqlite"
_POSTGRES = ("postgresql", "postgres")
_SUPPORTED = (
    "use None (a SQLite file in the state directory), sqlite:///path/to/file.sqlite or "
    "postgresql://user@host:port/database"
)


def _is_postgres(db_url: str) -> bool:
    return urlsplit(db_url).scheme.split("+", 1)[0] in _POSTGRES


def sqlite_path(db_url: str | None, state_dir: Path) -> Path:
    """The SQLite file ``db_url`` names (``state_dir / gateway.sqlite`` when None).

    Raises ``ValueError`` for a URL that does not name a SQLite file."""
    if not db_url:
        return state_dir / DEFAULT_FILE
    parts = urlsplit(db_url)
    if parts.scheme != "sqlite":
        shown = parts.scheme + "://..." if parts.scheme else repr(db_url)
        raise ValueError(f"db_url {shown} is not supported: {_SUPPORTED}")
    if parts.netloc or not parts.path or parts.path == "/":
        raise ValueError(f"db_url {db_url!r} names no file: use sqlite:///path/to/file.sqlite")
    path = unquote(parts.path[1:])  # sqlite:///rel -> "rel"; sqlite:////abs -> "/abs"
    if path == ":memory:":
        raise ValueError("db_url sqlite:///:memory: keeps nothing across a restart")
    return Path(path)


def check_db_url(db_url: str | None) -> None:
    """Raise ``ValueError`` (saying what works) unless the gateway can open ``db_url``:
    what :func:`hitl_nb.hub.configure` checks when the hub reads its config."""
    if db_url and _is_postgres(db_url):
        try:
            from hitl_nb.gateway._postgres import postgres_conninfo
        except ImportError as exc:  # the hub extra brings psycopg
            raise ValueError(
                f"db_url postgresql://... needs psycopg 3: pip install 'hitl-nb[hub]' ({exc})"
            ) from None
        postgres_conninfo(db_url)
        return
    sqlite_path(db_url, Path("."))


def open_store(db_url: str | None, state_dir: Path) -> GatewayStore:
    """The store ``db_url`` names (see the module docstring); a PostgreSQL store
    connects when first used (:meth:`~hitl_nb.gateway.GatewayStore.open`)."""
    if db_url and _is_postgres(db_url):
        from hitl_nb.gateway._postgres import PostgresStore

        return PostgresStore(db_url)
    path = sqlite_path(db_url, state_dir)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return SQLiteStore(path)
