"""The extension's settings, as traitlets (``c.HitlServer.<name> = ...`` in a config file).

An administrator sets them in ``jupyter_server_config.py`` or on the command line
(``--HitlServer.mock_agent=False``). They are the gateway's settings, declared once for
both hosts in :class:`hitl_nb.gateway.GatewaySettings`, and the server's own below;
docs/server.md lists them all.
"""

from __future__ import annotations

from traitlets import Unicode

from hitl_nb.gateway import GatewaySettings

__all__ = ["HitlServer"]


class HitlServer(GatewaySettings):
    """Settings of the hitl-nb server extension: the gateway's, and the server's own.

    Every user of the server sees every open prompt (``show_all``): they share the
    server, its files and kernels anyway.
    """

    push_base_url = Unicode(
        "",
        help=(
            "This server's base URL as agents reach it, e.g. 'https://hub.example.org/user/"
            "alice/' (with the base_url path); agents push to URLs under "
            "{push_base_url}hitl/push/. Default: the server's own connection URL, which "
            "only agents on the same host or network can reach."
        ),
    ).tag(config=True)
