"""Loading the extension into a Jupyter server: routes under ``{base_url}hitl/``.

Enabled on install: the wheel ships ``etc/jupyter/jupyter_server_config.d/hitl_nb.json``
(``ServerApp.jpserver_extensions = {"hitl_nb.server": true}``), which jupyter-server reads
from ``{sys.prefix}/etc/jupyter``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jupyter_server.utils import url_path_join

from hitl_nb.mock_agent import mock_agent_handlers
from hitl_nb.server._config import HitlServer
from hitl_nb.server._hosted import host_handlers

__all__ = ["MOCK_AGENT_PATH", "load", "state_dir"]

#: Where the hosted mock agent lives, relative to the server's base URL.
MOCK_AGENT_PATH = "hitl/mock-agent"


def state_dir(serverapp: Any, config: HitlServer) -> Path:
    """The directory of the extension's SQLite files (created, private to the user)."""
    path = Path(config.state_dir or os.path.join(serverapp.data_dir, "hitl_nb"))
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def load(serverapp: Any) -> HitlServer:
    """Add the extension's handlers to ``serverapp.web_app``; returns its settings."""
    config = HitlServer(parent=serverapp)
    web_app = serverapp.web_app
    base_url = web_app.settings.get("base_url", "/")
    handlers: list[tuple[str, type, dict[str, Any]]] = []
    if config.mock_agent:
        prefix = url_path_join(base_url, MOCK_AGENT_PATH)
        store = state_dir(serverapp, config) / "mock-agent.sqlite"
        handlers += host_handlers(mock_agent_handlers(prefix, store=store))
        serverapp.log.info("hitl-nb: mock agent hosted at %s", prefix)
    web_app.add_handlers(".*$", handlers)
    return config
