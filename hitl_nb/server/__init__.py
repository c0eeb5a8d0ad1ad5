"""hitl-nb inside a Jupyter server: a hosted mock agent and a responder gateway (S-3).

Installed with hitl-nb, the extension is enabled in every Jupyter server of that
environment (``jupyter server extension list`` shows ``hitl_nb.server``). It serves:

- ``{base_url}hitl/mock-agent/``: the bundled mock agent (card, JSON-RPC and HTTP+JSON,
  SSE), behind the server's authentication: send the server's token as
  ``Authorization: token <token>`` (``HitlClient(url, headers=...)``,
  ``hitl-nb conformance URL --header "Authorization: token <token>"``).

- ``{base_url}hitl/api/``: the responder gateway (:mod:`hitl_nb.gateway`, its routes
  in :mod:`hitl_nb.gateway._api`): register a task, list its prompts with policy and
  deadline, answer as the authenticated user; ``allowed_responders`` is enforced here
  (spec S-3), consensus answers are collected, one answer is forwarded at most once,
  deadlines are timed by the gateway (S-4), every answer is in the audit trail
  (``GET hitl/api/audit``), and the state lives in SQLite in the server's data
  directory. On a JupyterHub, :mod:`hitl_nb.hub` runs the same gateway for every user
  of the hub; kernels prefer it.

- ``hitl-nb inbox``: a reviewer page served by Voila (:mod:`hitl_nb.server._reviewer`),
  where a person answers the open prompts of such a server without opening a notebook.

- ``{base_url}hitl/lab/``: what JupyterLab's prompts panel reads (the hitl-nb
  JupyterLab extension, shipped in the wheel): the open prompts the page's user may
  answer, followed by a relay (:mod:`hitl_nb.server._relay`) from the gateway the
  server's kernels use (the hub's hitl service on a hub that runs it, else this
  server's), and an event on jupyter-server's event bus at each change
  (:mod:`hitl_nb.server._lab`).

- ``{base_url}hitl/push/<registration id>``: where agents that advertise push
  notifications POST the updates of registered tasks (the watcher configures them; not
  behind Jupyter's login, each push must carry the task's secret; see
  :mod:`hitl_nb.gateway._push`). Agents must be able to reach it:
  ``c.HitlServer.push_base_url``.

Settings: :class:`HitlServer` (``c.HitlServer.allowed_agent_hosts = [...]``, ...).
"""

from __future__ import annotations

from typing import Any

from hitl_nb.gateway import MAX_REQUEST_BYTES, Gateway
from hitl_nb.server import _extension
from hitl_nb.server._config import HitlServer
from hitl_nb.server._extension import API_PATH, GATEWAY_SETTING, LAB_SETTING, MOCK_AGENT_PATH
from hitl_nb.server._reviewer import register_cli

__all__ = [
    "API_PATH",
    "GATEWAY_SETTING",
    "LAB_SETTING",
    "MAX_REQUEST_BYTES",
    "MOCK_AGENT_PATH",
    "Gateway",
    "HitlServer",
    "register_cli",
]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """Tell jupyter-server which module to load (this one)."""
    return [{"module": "hitl_nb.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Called by jupyter-server at start: mount the routes."""
    _extension.load(serverapp)
