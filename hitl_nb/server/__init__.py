"""hitl-nb inside a Jupyter server: a hosted mock agent and a responder gateway (S-3).

Installed with hitl-nb, the extension is enabled in every Jupyter server of that
environment (``jupyter server extension list`` shows ``hitl_nb.server``). It serves:

- ``{base_url}hitl/mock-agent/``: the bundled mock agent (card, JSON-RPC and HTTP+JSON,
  SSE), behind the server's authentication: send the server's token as
  ``Authorization: token <token>`` (``HitlClient(url, headers=...)``,
  ``hitl-nb conformance URL --header "Authorization: token <token>"``).

Settings: :class:`HitlServer` (``c.HitlServer.mock_agent = False``, ...).
"""

from __future__ import annotations

from typing import Any

from hitl_nb.server import _extension
from hitl_nb.server._config import HitlServer
from hitl_nb.server._extension import MOCK_AGENT_PATH

__all__ = ["MOCK_AGENT_PATH", "HitlServer"]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """Tell jupyter-server which module to load (this one)."""
    return [{"module": "hitl_nb.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Called by jupyter-server at start: mount the routes."""
    _extension.load(serverapp)
