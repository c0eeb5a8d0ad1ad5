"""A real JupyterHub whose hitl service runs as two replicas on one PostgreSQL database.

:func:`running_hub_with` is :func:`tests.helpers.hub.running_hub` with more keyword
arguments for the ``configure(c, ...)`` line (``db_url``, ``replicas``, ``options``), so
the hub is configured exactly as an administrator would write it. The hub then starts
replica ``hitl`` itself (a managed service); :class:`ReplicaProcess` runs an external
one (``hitl-nb hub-service`` with the environment
:func:`hitl_nb.hub.replica_environment` gives), as an administrator runs it on another
machine: started, stopped (SIGTERM) or killed (SIGKILL) by the test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from hitl_nb.hub import replica_environment
from tests.helpers import hub as hub_helper
from tests.helpers.hub import Hub, _wait

_ANCHOR = "    poll_interval={poll_interval!r},\n"


@contextmanager
def running_hub_with(
    root: Path, configure: Mapping[str, Any], *, poll_interval: float = 2.0
) -> Iterator[Hub]:
    """A hub whose ``configure(c, ...)`` line also gets ``configure``'s arguments."""
    extra = "".join(f"    {k}={v!r},\n" for k, v in configure.items())
    original = hub_helper._CONFIG
    assert _ANCHOR in original, "tests/helpers/hub.py's configure line changed"
    escaped = extra.replace("{", "{{").replace("}", "}}")
    hub_helper._CONFIG = original.replace(_ANCHOR, _ANCHOR + escaped)
    try:
        with hub_helper.running_hub(root, poll_interval=poll_interval) as running:
            hub_helper._CONFIG = original  # written: nobody else sees the change
            yield running
    finally:
        hub_helper._CONFIG = original


class ReplicaProcess:
    """An external replica of the hitl service, as its own ``hitl-nb hub-service``."""

    def __init__(
        self,
        hub: Hub,
        name: str,
        api_token: str,
        port: int,
        db_url: str,
        state_dir: Path,
        options: list[str],
    ) -> None:
        self.hub = hub
        self.name = name
        self.url = f"http://127.0.0.1:{port}/services/{name}/"
        env = replica_environment(
            name,
            api_token,
            hub.api.rstrip("/"),
            f"http://127.0.0.1:{port}",
            db_url,
            public_url=hub.url,
        )
        self._env = {**os.environ, **env, "PYTHONPATH": str(Path(__file__).parents[2])}
        for key in ("JUPYTERHUB_USER", "JUPYTERHUB_OAUTH_ACCESS_SCOPES"):
            self._env.pop(key, None)
        self._argv = [
            str(Path(sys.executable).with_name("hitl-nb")),
            "hub-service",
            "--state-dir",
            str(state_dir),
            *options,
        ]
        self.log_path = state_dir.parent / f"{name}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the process and wait until it answers (401 without credentials)."""
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child keeps it
        self.proc = subprocess.Popen(
            self._argv,
            env=self._env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()

        def up() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"replica {self.name} exited:\n{self.log()[-4000:]}")
            return httpx.get(self.url + "api/me", timeout=5).status_code == 401

        try:
            _wait(up, f"replica {self.name}", None)
        except BaseException:
            # Not up (or interrupted while waiting): the caller never gets a process to
            # stop, so it is stopped here rather than left running in its own session.
            self.stop()
            raise

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def kill(self) -> None:
        """``kill -9``: no shutdown, its leases and forwards left as they are."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> None:
        """SIGTERM (a clean stop: leases given back), or SIGKILL after 30 s."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
