"""``hitl-nb audit``: the gateway's audit trail exported, and its chain verified.

    hitl-nb audit export [--format jsonl|csv] [--since T] [--until T] [--registration ID]
                         [--out FILE] [--db URL | --state-dir DIR]
    hitl-nb audit verify [--db URL | --state-dir DIR]
    hitl-nb audit verify --file FILE [--format jsonl|csv] [--registration ID]

The database is the one the hub service uses: ``--db`` (a SQLite file's path, a
``sqlite:///`` or ``postgresql://`` URL), else ``HITL_NB_DB_URL`` as the service reads
it, else ``gateway.sqlite`` in ``--state-dir`` (the service's, ``hitl-state`` unless
given). A Jupyter server's gateway: ``--db`` its file. The database is only read: one
that is missing, or of another hitl-nb's schema, is refused, never made or upgraded.

Exit status: 0 the chain is whole (or the export was written), 1 it is not (what is
wrong is printed, one line each), 2 bad usage (a missing database, a file that is no
export, a time that is no time).
"""

from __future__ import annotations

import argparse
import asyncio
import calendar
import datetime
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from hitl_nb._rfc3339 import read_date, read_date_time
from hitl_nb.gateway._audit_export import FORMATS, BadExport, exported, read_export, write_export
from hitl_nb.gateway._audit_verify import verify
from hitl_nb.gateway._db_url import sqlite_path
from hitl_nb.gateway._schema import SCHEMA_VERSION
from hitl_nb.gateway._store import GatewayStore, StoreUnavailable

__all__ = ["DEFAULT_STATE_DIR", "register_cli"]

#: The hub service's state directory when none is given (``hitl_nb.hub``'s own default,
#: which a test keeps equal).
DEFAULT_STATE_DIR = "hitl-state"

_NAME = "hitl-nb audit"


class _Usage(Exception):
    """Bad usage: said on stderr, exit status 2."""


def _time(text: str, *, end: bool) -> float:
    """An RFC 3339 date-time, or a date (its start; ``end``: its last instant), as epoch
    seconds."""
    reading = read_date_time(text, space=True)
    date = reading.date if reading is not None else read_date(text)
    if date is None:
        raise _Usage(f"{text!r} is not a date (2025-06-15) or an RFC 3339 time")
    try:
        day = datetime.date(*date)
        if reading is None:
            at = calendar.timegm(day.timetuple())
            return at + 86_400 - 1e-6 if end else float(at)
        h, mi, s, micro = reading.time
        clock = datetime.time(h, mi, min(s, 59), micro)  # a leap second: its minute's last
    except ValueError:
        raise _Usage(f"{text!r} is not a date") from None
    at = calendar.timegm(datetime.datetime.combine(day, clock).timetuple())
    return at + micro / 1e6 - reading.offset_minutes * 60


def _format(args: argparse.Namespace, path: Path | None = None) -> str:
    if args.format:
        return str(args.format)
    if path is not None and path.suffix.lower() == ".csv":
        return "csv"
    return "jsonl"


def _db(args: argparse.Namespace) -> str:
    """The database's URL or path (see the module docstring)."""
    given = args.db or os.environ.get("HITL_NB_DB_URL") or ""
    if given and "://" not in given:
        return given  # a SQLite file's path
    if given.split("://", 1)[0].split("+", 1)[0] in ("postgresql", "postgres"):
        return given
    try:
        return str(sqlite_path(given or None, Path(args.state_dir or DEFAULT_STATE_DIR)))
    except ValueError as exc:
        raise _Usage(str(exc)) from None


async def _open(db: str) -> GatewayStore:
    """The store of ``db``, opened as it is (never made, never upgraded)."""
    store: GatewayStore
    try:
        if "://" in db:
            from hitl_nb.gateway._postgres import PostgresStore

            try:
                store = PostgresStore(db)
            except ValueError as exc:
                raise _Usage(str(exc)) from None
            await store.open(upto=0)
        else:
            path = Path(db)
            if not path.is_file():
                raise _Usage(f"no gateway database at {path}")
            from hitl_nb.gateway._sqlite import SQLiteStore

            store = SQLiteStore(path, upto=0)
    except _Usage:
        raise
    except (StoreUnavailable, RuntimeError) as exc:
        raise _Usage(str(exc)) from None
    except Exception as exc:  # sqlite3.DatabaseError: a file that is no database
        raise _Usage(f"{db} cannot be read as a gateway database ({exc})") from None
    version = store.found_version or 0
    if version < SCHEMA_VERSION:
        await store.close()
        what = "no gateway database" if version == 0 else f"schema version {version}"
        raise _Usage(
            f"{store.where} has {what}; this hitl-nb reads version {SCHEMA_VERSION} "
            "(the gateway upgrades its database when it starts)"
        )
    return store


async def _export(args: argparse.Namespace) -> int:
    since = None if args.since is None else _time(args.since, end=False)
    until = None if args.until is None else _time(args.until, end=True)
    fmt = _format(args, args.out)
    store = await _open(_db(args))
    try:
        rows = [
            r
            async for r in exported(store, since=since, until=until, registration=args.registration)
        ]
    finally:
        await store.close()
    if args.out is None:
        write_export(rows, sys.stdout, fmt)
    else:
        out = Path(args.out)
        # Written beside it, then moved: a failed export leaves no half file.
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent or Path("."))
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                write_export(rows, f, fmt)
            os.replace(tmp, out)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    if rows and (args.since or args.until):
        print(
            f"{_NAME}: entries {rows[0]['seq']} to {rows[-1]['seq']} "
            "(a segment: its first previous hash is taken as given when verified)",
            file=sys.stderr,
        )
    return 0


async def _verify(args: argparse.Namespace) -> int:
    segment = False
    rows: list[dict[str, Any]]
    if args.file is not None:
        path = Path(args.file)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise _Usage(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            rows = read_export(data, _format(args, path))
        except BadExport as exc:
            raise _Usage(f"{path} is not an audit export ({_format(args, path)}): {exc}") from None
        segment = True
        source = str(path)
    else:
        if args.registration is not None:
            raise _Usage("--registration goes with --file (the database is checked whole)")
        store = await _open(_db(args))
        source = store.where
        try:
            rows = [r async for r in exported(store)]
        finally:
            await store.close()
    verdict = verify(rows, segment=segment, registration=args.registration)
    print(f"{source}:")
    for line in verdict.lines():
        print(f"  {line}")
    return 0 if verdict.whole else 1


def _run(args: argparse.Namespace) -> int:
    work = _export if args.audit == "export" else _verify
    try:
        return asyncio.run(work(args))
    except (_Usage, BadExport) as exc:  # BadExport: an entry its format cannot carry
        print(f"{_NAME} {args.audit}: {exc}", file=sys.stderr)
        return 2


def register_cli(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``audit`` (``export``, ``verify``) to the ``hitl-nb`` command."""
    p = sub.add_parser(
        "audit",
        help="export the gateway's audit trail, or verify its hash chain",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    commands = p.add_subparsers(dest="audit", metavar="ACTION", required=True)

    def database(q: argparse.ArgumentParser) -> None:
        q.add_argument(
            "--db",
            metavar="URL",
            help="the database: a SQLite file, sqlite:///PATH or postgresql://... "
            "(default: HITL_NB_DB_URL, else gateway.sqlite in --state-dir)",
        )
        q.add_argument(
            "--state-dir",
            metavar="DIR",
            help=f"the hub service's state directory (default: {DEFAULT_STATE_DIR})",
        )
        q.add_argument("--format", choices=FORMATS, help="jsonl (default) or csv")
        q.add_argument("--registration", metavar="ID", help="one registration's entries")
        q.set_defaults(func=_run)

    ex = commands.add_parser("export", help="write the entries as JSON Lines or CSV")
    database(ex)
    ex.add_argument("--since", metavar="TIME", help="from this RFC 3339 time or date")
    ex.add_argument("--until", metavar="TIME", help="up to this RFC 3339 time or date")
    ex.add_argument("--out", type=Path, metavar="FILE", help="write here (default: stdout)")
    ve = commands.add_parser(
        "verify",
        help="recompute the chain; exit 0 whole, 1 not, 2 bad usage",
    )
    database(ve)
    ve.add_argument("--file", metavar="FILE", help="an export to verify instead of the database")
