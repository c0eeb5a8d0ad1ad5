"""One prompt the kernel's gateway knows, as a card: what JupyterLab's prompts panel draws.

The panel (hitl-nb's JupyterLab extension) starts a kernel of its own when a person
first clicks "Answer", and runs ``prompt_card(registration, prompt_id)`` in it: the
same :class:`~hitl_nb.notebook.GatewayCard` an :class:`~hitl_nb.notebook.Inbox` opens,
with the same form, checks, 422 on the fields, 409 words and consensus count, answered
through the gateway as the user it vouches for (the kernel's credentials: on a hub the
server owner's token). It works in any notebook too.

The gateway is the one this kernel's cards register their tasks with
(:func:`hitl_nb.client.find_gateway`: the hub's service on a hub that runs it, else the
Jupyter server's), found once per process; its connection is kept for the next card.
"""

from __future__ import annotations

import threading

from hitl_nb.client import GatewayClient, GatewayInfo, find_gateway, find_prompt
from hitl_nb.errors import GatewayUnavailable, HitlError, MalformedPrompt

from ._card import GatewayCard
from ._inbox_sources import GatewaySource, gateway_item
from ._outcomes import HUB, SERVER
from ._senders import GatewaySender
from ._worker import shared_loop

__all__ = ["prompt_card"]

_lock = threading.Lock()
#: The gateway's sources by URL, kept for the next card (its link asks who we are once).
_sources: dict[str, GatewaySource] = {}


def _source(info: GatewayInfo) -> GatewaySource:
    with _lock:
        source = _sources.get(info.api_url)
        if source is None:
            source = _sources[info.api_url] = GatewaySource(info)
        return source


def prompt_card(
    registration: str,
    prompt_id: str,
    *,
    gateway: GatewayInfo | None = None,
    timeout: float = 30.0,
) -> GatewayCard:
    """The card of prompt ``prompt_id`` of the task the gateway registered as
    ``registration``, answered through that gateway.

    ``gateway``: where it is (default: this kernel's, see the module docstring). Raises
    :class:`~hitl_nb.errors.GatewayUnavailable` without one, and
    :class:`~hitl_nb.errors.HitlError` when the gateway shows no such prompt to this
    kernel's user (a prompt that was open and is not any more comes back as a card that
    says so, its form closed).
    """
    info = gateway if gateway is not None else find_gateway(strict=True)
    if info is None:
        raise GatewayUnavailable(
            "this kernel has no responder gateway (it does not run in a Jupyter server with "
            "hitl-nb's extension, nor on a hub with the hitl service)"
        )
    with GatewayClient(info, timeout=timeout) as client:
        view = client.task(registration)
    found = find_prompt(view, prompt_id)
    if found is None:
        raise HitlError(f"the gateway shows no prompt {prompt_id!r} of task {registration!r}")
    try:
        item = gateway_item(found, {})
    except (MalformedPrompt, KeyError, TypeError, ValueError) as exc:
        raise HitlError(f"the gateway's prompt {prompt_id!r} is unreadable: {exc}") from None
    source = _source(info)
    sender = GatewaySender(
        source.gateway,
        item.prompt_id,
        item.needed,
        registration=item.registration,
        host=HUB if info.on_hub else SERVER,
    )
    card = GatewayCard(item, sender, shared_loop().submit, lambda: None)
    if item.state != "open":
        card.gone()
    return card
