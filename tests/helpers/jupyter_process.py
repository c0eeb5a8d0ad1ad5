"""A real ``jupyter server`` process with the hitl-nb extension, for end-to-end tests.

Isolated config, data and runtime directories under ``tmp``; 127.0.0.1 only; stopped
(SIGTERM, then waited for) when the ``with`` block ends. ``started`` is given the
process (a test that kills it with ``-9``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.helpers.ports import free_port
from tests.helpers.until import until

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def jupyter_server(
    tmp: Path,
    *,
    identity_provider: str | None = "tests.helpers.jupyter_users.NamedTokens",
    token: str = "",
    ready_headers: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    extra_config: Mapping[str, Any] | None = None,
    started: Callable[[subprocess.Popen[bytes]], None] | None = None,
) -> Iterator[str]:
    """Start a server; yields its base URL (``http://127.0.0.1:<port>/``)."""
    port = free_port()
    config = tmp / "config"
    config.mkdir(exist_ok=True)
    server: dict[str, Any] = {
        # Only what the tests need: the other extensions of the environment cost seconds.
        "jpserver_extensions": {
            "hitl_nb.server": True,
            "jupyterlab": False,
            "jupyter_lsp": False,
            "notebook_shim": False,
            "jupyter_server_terminals": False,
        },
        "ip": "127.0.0.1",
        "port": port,
        "port_retries": 0,
        "open_browser": False,
        "root_dir": str(tmp),
        "allow_root": True,
    }
    if identity_provider:
        server["identity_provider_class"] = identity_provider
    settings: dict[str, Any] = {
        "ServerApp": server,
        "HitlServer": {"state_dir": str(tmp / "state")},
        "IdentityProvider": {"token": token},
        # Restarted on new ports when one was taken meanwhile (see tests/helpers/lab.py).
        "KernelManager": {"cache_ports": False},
        **(extra_config or {}),
    }
    (config / "jupyter_server_config.json").write_text(json.dumps(settings))
    full_env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_DATA_DIR": str(tmp / "data"),
        "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"),
        **(env or {}),
    }
    full_env["PYTHONPATH"] = os.pathsep.join([str(ROOT), full_env.get("PYTHONPATH", "")])
    log_path = tmp / f"server-{port}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter_server"],
            env=full_env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    if started is not None:
        started(proc)
    url = f"http://127.0.0.1:{port}/"

    def ready() -> bool:
        assert proc.poll() is None, "the server exited: " + log_path.read_text()
        r = httpx.get(url + "api/status", headers=dict(ready_headers or {}), timeout=2)
        return r.status_code == 200

    try:
        until(
            ready,
            timeout=60,
            what="the Jupyter server to answer",
            interval=0.2,
            ignore=httpx.TransportError,
            detail=log_path.read_text,
        )
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
