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
from tornado.ioloop import IOLoop

from hitl_nb.gateway import (
    PUSH_PATH,
    AgentPool,
    ConfirmDesk,
    Gateway,
    GatewayAPI,
    InternalCaller,
    Notifier,
    open_store,
    push_handlers,
    slack_handlers,
)
from hitl_nb.mock_agent import mock_agent_handlers
from hitl_nb.server._answer import ANSWER_PATH, answer_handlers
from hitl_nb.server._config import HitlServer
from hitl_nb.server._handlers import gateway_handlers
from hitl_nb.server._hosted import INTERNAL_SETTING, host_handlers
from hitl_nb.server._lab import LabFeeds, lab_handlers

__all__ = ["API_PATH", "GATEWAY_SETTING", "LAB_SETTING", "MOCK_AGENT_PATH", "load", "state_dir"]

#: Where the hosted mock agent lives, relative to the server's base URL.
MOCK_AGENT_PATH = "hitl/mock-agent"
#: Where the gateway's REST API lives, relative to the server's base URL.
API_PATH = "hitl/api"
#: Where the extension's routes live, relative to the server's base URL.
MOUNT = "hitl/"
#: The web_app setting holding the :class:`~hitl_nb.gateway.Gateway`.
GATEWAY_SETTING = "hitl_nb_gateway"
#: The web_app setting holding the prompts panel's relays (:class:`LabFeeds`).
LAB_SETTING = "hitl_nb_lab"


def state_dir(serverapp: Any, config: HitlServer) -> Path:
    """The directory of the extension's SQLite files (created, private to the user)."""
    path = Path(config.state_dir or os.path.join(serverapp.data_dir, "hitl_nb"))
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def load(serverapp: Any) -> Gateway:
    """Add the extension's handlers to ``serverapp.web_app``; returns the gateway."""
    config = HitlServer(parent=serverapp)
    web_app = serverapp.web_app
    base_url = web_app.settings.get("base_url", "/")
    folder = state_dir(serverapp, config)
    handlers: list[tuple[str, type, dict[str, Any]]] = []
    internal = None
    if config.mock_agent:
        prefix = url_path_join(base_url, MOCK_AGENT_PATH)
        internal = InternalCaller(serverapp.port, prefix)
        web_app.settings[INTERNAL_SETTING] = internal
        handlers += host_handlers(mock_agent_handlers(prefix, store=folder / "mock-agent.sqlite"))
        serverapp.log.info("hitl-nb: mock agent hosted at %s", prefix)
    pool = AgentPool(
        config.allowed_agent_hosts, config.agent_timeout, internal, streams=config.max_streams
    )
    notify = None
    if config.notifying:

        def link_base() -> str:
            # Read when the gateway starts: the server's port is known by then.
            return config.notify_link_url or url_path_join(serverapp.connection_url, "/")

        def notify(gateway: Gateway) -> Notifier:
            return Notifier(
                config,
                gateway.store,
                link_base,
                hub=False,
                owner=gateway.replica,
                page=ANSWER_PATH,
            )

    gateway = Gateway(open_store(None, folder), pool, config, notify=notify)
    web_app.settings[GATEWAY_SETTING] = gateway
    # jupyter-server's /metrics (behind its own login) serves the global registry.
    gateway.metrics.join_global()
    handlers += gateway_handlers(url_path_join(base_url, API_PATH), GatewayAPI(gateway))
    # JupyterLab's prompts panel: its relays, and the event its pages listen for.
    feeds = LabFeeds(serverapp, gateway)
    web_app.settings[LAB_SETTING] = feeds
    handlers += lab_handlers(base_url, feeds)
    # The answer page: the prompts a person may answer, and one-click confirm pages.
    handlers += answer_handlers(
        base_url, ConfirmDesk(gateway, url_path_join(base_url, ANSWER_PATH))
    )
    if config.push:

        def push_url(reg_id: str) -> str:
            # Read when a task is registered: the server's port is known by then.
            base = config.push_base_url or serverapp.connection_url
            return url_path_join(base, MOUNT, PUSH_PATH, reg_id)

        gateway.push_url = push_url
        handlers += push_handlers(url_path_join(base_url, MOUNT), gateway.push)
    # A Slack app's clicks (when a team channel is one): signed by Slack, no login.
    handlers += slack_handlers(url_path_join(base_url, MOUNT), gateway)
    web_app.add_handlers(".*$", handlers)
    # Deadline timers and forwards left in doubt resume once the loop runs.
    IOLoop.current().add_callback(gateway.start)
    return gateway
