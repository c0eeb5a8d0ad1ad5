"""Every task a card shows is made known where JupyterLab's prompts panel looks.

The panel (hitl-nb's JupyterLab extension) lists what the kernel's responder gateway
knows and shows where each prompt's card is. So, whoever answers:

- :func:`announce` registers a task that a :class:`~hitl_nb.notebook.Conversation`, a
  :class:`~hitl_nb.notebook.PromptCard` or a kernel :class:`~hitl_nb.notebook.Inbox`
  shows with the kernel's gateway (the hub's service, or the Jupyter server's; named
  users or not) *to be watched*. On a plain ``jupyter lab`` with a token the cards
  answer the agent directly (the server cannot tell its users apart, S-3), and that
  stays so: the gateway only lists the prompt, times its deadline and tells the panel,
  and an answer given in the panel goes through the gateway as the server's user, by
  the gateway's rules. (A conversation that answers through the gateway registers its
  task itself.)
- :func:`place` tells the Jupyter server that started this kernel which notebook cell
  shows a task's cards (this kernel's id, and the cell's id as JupyterLab and Notebook 7
  send it with each execution): the panel's "Show card".

Both run in the background, once per task (and cell) in a process, and never fail a
card: what went wrong is logged.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import httpx

from hitl_nb._lab_contract import PLACES_ROUTE
from hitl_nb.client import GatewayInfo, kernel_server, sync_http_client
from hitl_nb.errors import HitlError

from ._gateway_link import GatewayLink, discovered
from ._worker import current_cell_id, shared_loop

__all__ = ["PLACES_PATH", "announce", "place"]

log = logging.getLogger("hitl_nb.notebook")

#: Where a kernel tells its server which cell shows a task's cards (see hitl_nb.server):
#: the contract's route (:mod:`hitl_nb._lab_contract`).
PLACES_PATH = PLACES_ROUTE

_lock = threading.Lock()
_placed: set[tuple[str, str, str]] = set()
#: This kernel's server and id, found once (absent: not looked for yet).
_server: dict[str, tuple[GatewayInfo, str] | None] = {}


async def announce(agent: object, task_id: str) -> tuple[GatewayLink, str] | None:
    """Register the task with the kernel's gateway to be watched; the gateway and its id
    of the task, or None (no gateway, an agent known only by its card, a refusal)."""
    if not isinstance(agent, str):
        return None
    link = await asyncio.to_thread(discovered)
    if link is None:
        return None
    try:
        registration = await link.register(agent, task_id)
    except HitlError as exc:
        log.info("hitl-nb: task %s is not watched by the gateway: %s", task_id, exc)
        return None
    return link, registration


def _kernel_server() -> tuple[GatewayInfo, str] | None:
    with _lock:
        if "found" not in _server:
            _server["found"] = kernel_server()
        return _server["found"]


def place(agent: object, task_id: str | None) -> None:
    """Tell the kernel's Jupyter server that the cell running now shows the cards of
    this task (in the background; once per task and cell)."""
    cell = current_cell_id()
    if not isinstance(agent, str) or not task_id or cell is None or len(cell) > 256:
        return
    key = (agent, task_id, cell)
    with _lock:
        if key in _placed:
            return
        _placed.add(key)
    shared_loop().submit(asyncio.to_thread(_post, agent, task_id, cell))


def _post(agent: str, task_id: str, cell: str) -> None:
    found = _kernel_server()
    if found is None:
        return
    info, kernel_id = found
    body: dict[str, Any] = {
        "agent_url": agent,
        "task_id": task_id,
        "kernel_id": kernel_id,
        "cell_id": cell,
    }
    headers = {"Authorization": f"token {info.token}"} if info.token else {}
    try:
        with sync_http_client(timeout=10) as http:
            r = http.post(info.url + PLACES_PATH, json=body, headers=headers)
    except httpx.HTTPError as exc:
        log.info("hitl-nb: could not tell the server where the card is: %s", exc)
        return
    if r.status_code >= 400:
        log.info("hitl-nb: the server did not take where the card is (HTTP %s)", r.status_code)
