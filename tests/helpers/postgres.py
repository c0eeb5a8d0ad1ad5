"""A throwaway PostgreSQL cluster for tests, from Debian's ``postgresql`` package.

:func:`cluster` starts one per test process (the first caller starts it; the last
:func:`release` stops it): ``initdb`` in a fresh folder with trust authentication and a
superuser ``hitl``, then ``pg_ctl start`` on a free port of 127.0.0.1 with its socket in
that folder. As root (CI) both run as the ``postgres`` user (``runuser``), since they
refuse to run as root, on a folder that user owns. :meth:`Cluster.database` makes a
fresh database (one per test module); :meth:`Cluster.restart` stops and starts the
server on the same port (the outage tests); :meth:`Cluster.stop` ends it.

Without the package the tests that need it skip, except under ``CI=true``, where
nothing may skip: there it is an error (``.ci/run`` installs the package).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers.ports import free_port

USER = "hitl"
_LOCK = threading.Lock()
_CURRENT: Cluster | None = None
_USERS = 0


def binaries() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` that has ``initdb``."""
    root = Path("/usr/lib/postgresql")
    found = sorted(
        (p for p in root.glob("*/bin") if (p / "initdb").exists()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    return found[-1] if found else None


def _as_owner(argv: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *argv]
    return argv


@dataclass
class Cluster:
    """A running throwaway cluster (see the module docstring)."""

    bin: Path
    folder: Path
    port: int
    #: Off in tests (nothing they write must outlive the machine); on for benchmarks.
    fsync: bool = False
    made: list[str] = field(default_factory=list)

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, database: str = "postgres") -> str:
        """The ``postgresql://`` URL of ``database`` (over TCP on 127.0.0.1)."""
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def _ctl(self, *args: str) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1"
        if not self.fsync:
            options += " -c fsync=off"
        argv = [str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "log")]
        subprocess.run(
            _as_owner([*argv, "-o", options, "-w", "-t", "60", *args]),
            check=True,
            capture_output=True,
        )

    def start(self) -> None:
        self._ctl("start")

    def stop(self) -> None:
        """Stop the server (fast shutdown: sessions are cut, as in a real outage)."""
        self._ctl("-m", "fast", "stop")

    def restart(self, down_for: float = 0.0) -> None:
        """Stop the server, stay down ``down_for`` seconds, start it on the same port."""
        self.stop()
        time.sleep(down_for)
        self.start()

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run ``sql`` with ``psql`` (as the cluster's superuser); its output."""
        done = subprocess.run(
            [
                str(self.bin / "psql"),
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                self.url(database),
                "-c",
                sql,
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout.strip()

    def database(self, hint: str) -> str:
        """A fresh, empty database (named after ``hint``); its URL."""
        name = re.sub(r"[^a-z0-9_]", "_", hint.lower())[-40:].strip("_") or "db"
        name = f"t{len(self.made)}_{name}"
        self.psql(f'CREATE DATABASE "{name}"')
        self.made.append(name)
        return self.url(name)


def start_cluster(*, fsync: bool = False) -> Cluster:
    """A new cluster of its own (benchmarks); tests share :func:`cluster`'s."""
    bin_dir = binaries()
    if bin_dir is None:
        message = "PostgreSQL is not installed (Debian package postgresql)"
        if os.environ.get("CI") == "true":
            raise RuntimeError(message + "; .ci/run installs it")
        pytest.skip(message)
    # Not under pytest's tmp folders: those are 0700 root's, out of the postgres user's reach.
    folder = Path(tempfile.mkdtemp(prefix="hitl-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    subprocess.run(
        _as_owner(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(folder / "data"),
                "-A",
                "trust",
                "-U",
                USER,
                "-E",
                "UTF8",
                "--no-instructions",
            ]
        ),
        check=True,
        capture_output=True,
    )
    # A free port may be taken by another process before the server binds it (parallel
    # test runs on one machine): then the next free port, a few times; any other failure
    # is raised with the server's own words.
    tries = 5
    while True:
        tries -= 1
        running = Cluster(bin_dir, folder, free_port(), fsync=fsync)
        try:
            running.start()
        except subprocess.CalledProcessError as exc:
            log = folder / "log"
            said = log.read_text("utf-8", "replace")[-2000:] if log.exists() else ""
            if "already in use" in said and tries:
                continue
            raise RuntimeError(
                f"PostgreSQL did not start on port {running.port}: {exc.stderr!r}\n{said}"
            ) from exc
        return running


def cluster() -> Cluster:
    """This process's cluster (started on first use); pair each call with :func:`release`."""
    global _CURRENT, _USERS
    with _LOCK:
        if _CURRENT is None:
            _CURRENT = start_cluster()
        _USERS += 1
        return _CURRENT


def release() -> None:
    """One user fewer; the last one stops the cluster and removes its folder."""
    global _CURRENT, _USERS
    with _LOCK:
        _USERS -= 1
        if _USERS > 0 or _CURRENT is None:
            return
        running, _CURRENT = _CURRENT, None
    try:
        running.stop()
    finally:
        shutil.rmtree(running.folder, ignore_errors=True)


def with_schema(url: str, schema: str) -> str:
    """``url`` with its tables in ``schema`` (libpq's ``options``: the search path), so
    tests of one module's database each get an empty one cheaply."""
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options=-csearch_path%3D{schema}"


# Fixtures for the conftests that need PostgreSQL (imported there by name).


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """The test process's PostgreSQL cluster."""
    running = cluster()
    yield running
    release()


@pytest.fixture(scope="module")
def pg_url(pg_cluster: Cluster, request: pytest.FixtureRequest) -> str:
    """A fresh database for this test module."""
    return pg_cluster.database(request.module.__name__)
