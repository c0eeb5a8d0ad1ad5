"""The responder gateway, as the notebook's cards use it (spec S-3).

"Orchestrators MUST authenticate and authorize the human responder against
``allowed_responders`` before forwarding the response" (§Security Considerations S-3).
A kernel only knows who it is told it is; the JupyterHub, or the Jupyter server that
runs the kernel, knows who is authenticated. Cards answer through a gateway there: the
hub's ``hitl`` service (:mod:`hitl_nb.hub`) or the server's extension
(``{base_url}hitl/api/``). The gateway says who is answering, checks ``specific:<id>``
and collects ``consensus:N``, and forwards one answer to the agent at most once.

Which gateway a conversation uses (its ``gateway=`` argument, see :func:`gateway_link`):

- ``None`` (the default): the gateway :func:`hitl_nb.client.find_gateway` finds (the
  hub's service, else the server that started this kernel), *if it can name its users*
  (JupyterHub, or an IdentityProvider that names people). A plain single-user server
  with one shared token cannot (everyone is "anonymous"): cards then answer the agent
  directly, as outside a server. Discovery is done once per kernel process. Under
  JupyterHub, a gateway that was found but did not answer still gets the answers (each
  answer tries it again and fails, saying so, while it does not answer); so does the
  hub's service when the hub itself did not answer and the kernel's environment says
  the hub runs it (``HITL_NB_HUB_SERVICE``): each answer looks for it again.
- ``False``: never; answer the agent directly (the card checks S-3 itself, as before).
- ``True``: the server's gateway, required: :class:`~hitl_nb.errors.GatewayUnavailable`
  when there is none.
- a :class:`~hitl_nb.client.GatewayClient` or :class:`~hitl_nb.client.GatewayInfo`:
  that gateway, with its credentials (e.g. your own API token on a shared server).

Once a conversation uses a gateway, its answers go nowhere else: a gateway that cannot be
reached at answer time fails the answer, saying so, and nothing is sent to the agent.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

from hitl_nb.client import GatewayAnswer, GatewayClient, GatewayInfo, find_gateway, find_prompt
from hitl_nb.errors import GatewayUnavailable, HitlError

from ._outcomes import HUB, SERVER

__all__ = ["GatewayChoice", "GatewayLink", "connect", "gateway_link"]

log = logging.getLogger("hitl_nb.notebook")

#: What a ``gateway=`` argument may be.
GatewayChoice = bool | GatewayClient | GatewayInfo | None

_lock = threading.Lock()
#: This process's discovery: not yet tried (absent), or its result (a link or None).
_found: dict[str, GatewayLink | None] = {}


class GatewayLink:
    """A responder gateway and who it says we are; the calls a card makes to it.

    The calls are the blocking :class:`~hitl_nb.client.GatewayClient`'s, run off the
    event loop (``await link.answer(...)``), so a card's answer never holds up the
    notebook's background thread. ``name`` is the server's user name (None for a server
    that cannot tell its users apart), ``display`` the name to show.
    """

    def __init__(
        self,
        client: GatewayClient | None,
        me: Mapping[str, Any] | None = None,
        *,
        find: Callable[[], GatewayInfo] | None = None,
    ) -> None:
        if client is None and (find is None or me is None):
            raise TypeError("a GatewayLink without a client needs find= and me=")
        self._client = client
        #: Where the gateway is, asked again at each call until it answers (a link made
        #: while the hub that lists it did not answer).
        self._find = find
        self._find_lock = threading.Lock()
        who = dict(me) if me is not None else self.client.me()
        name = who.get("name")
        self.name: str | None = name if isinstance(name, str) and name else None
        display = who.get("display_name")
        self.display: str = (
            display if isinstance(display, str) and display else (self.name or "the server's user")
        )
        self._registrations: dict[tuple[str, str], str] = {}
        self._reg_lock = threading.Lock()

    @property
    def client(self) -> GatewayClient:
        """The gateway's client. A link whose gateway was not found yet looks for it
        now (:class:`~hitl_nb.errors.GatewayUnavailable` while it cannot be found)."""
        with self._find_lock:
            if self._client is None:
                assert self._find is not None
                self._client = GatewayClient(self._find())
            return self._client

    @property
    def identified(self) -> bool:
        """True when the server names its users (so it can vouch for who answers)."""
        return self.name is not None

    @property
    def host(self) -> str:
        """What the cards' words call the gateway's host: "the hub" for a JupyterHub's
        service (also one not found yet: only a hub's is looked for again), else "the
        Jupyter server"."""
        if self._client is None or self._client.info.on_hub:
            return HUB
        return SERVER

    @property
    def url(self) -> str:
        """The gateway host's URL (a Jupyter server's base URL, or the hub service's);
        empty while a gateway that must be there has not been found yet."""
        return self._client.info.url if self._client is not None else ""

    def registration(self, agent_url: str, task_id: str) -> str | None:
        """The registration id of a task registered through this link, if any."""
        return self._registrations.get((agent_url, task_id))

    def register_now(
        self, agent_url: str, task_id: str, deadline: Mapping[str, Any] | None = None
    ) -> str:
        """Register a task (blocking; idempotent, remembered): its registration id.
        ``deadline``: its deadline policy (:meth:`GatewayClient.register`)."""
        key = (agent_url, task_id)
        known = self._registrations.get(key)
        if known is not None:
            return known
        reg = self.client.register(agent_url, task_id, deadline)
        reg_id = reg.get("id")
        if not isinstance(reg_id, str):
            raise HitlError("the gateway registered the task but named no registration id")
        with self._reg_lock:
            self._registrations[key] = reg_id
        return reg_id

    async def register(
        self, agent_url: str, task_id: str, deadline: Mapping[str, Any] | None = None
    ) -> str:
        """:meth:`register_now`, off the event loop."""
        known = self._registrations.get((agent_url, task_id))
        if known is not None:
            return known
        return await asyncio.to_thread(self.register_now, agent_url, task_id, deadline)

    async def answer(
        self, registration: str, prompt_id: str, payload: Mapping[str, Any]
    ) -> GatewayAnswer:
        """Answer a prompt as the server's user (see :meth:`GatewayClient.answer`)."""
        return await asyncio.to_thread(self.client.answer, registration, prompt_id, payload)

    async def view(self, registration: str, prompt_id: str) -> dict[str, Any] | None:
        """The gateway's view of one prompt (state, tally, ``forwarded_for``), or None."""
        task = await asyncio.to_thread(self.client.task, registration)
        return find_prompt(task, prompt_id)

    def close(self) -> None:
        """Close the connections (a discovered link is shared: it is never closed)."""
        if self._client is not None:
            self._client.close()

    def __repr__(self) -> str:
        where = self.url or "(not found yet)"
        return f"<GatewayLink {where} as {self.display!r}>"


def _discover() -> GatewayLink | None:
    try:
        info = find_gateway(strict=True)
    except GatewayUnavailable as exc:
        return _unanswered(exc)
    if info is None:
        return None
    client = GatewayClient(info)
    try:
        return GatewayLink(client)
    except HitlError as exc:
        client.close()
        return _unanswered(GatewayUnavailable(f"{exc}", info=info))


def _unanswered(exc: GatewayUnavailable) -> GatewayLink | None:
    """The kernel's gateway was looked for and did not answer. Under JupyterHub (a token
    that names a person) a gateway is where answers must go: a link that tries it at
    every answer (and says so when it fails), never a silent answer to the agent. That
    holds when the hub itself did not answer and the hub's admin set the hub up with the
    service (``HITL_NB_HUB_SERVICE`` in the kernel's environment, set by
    :func:`hitl_nb.hub.configure`): the link then looks for the service again at each
    answer. A server that could not have named its users anyway leaves the cards
    direct."""
    named = os.environ.get("JUPYTERHUB_USER")
    expects_names = os.environ.get("JUPYTERHUB_API_TOKEN") or os.environ.get(
        "HITL_NB_GATEWAY_TOKEN"
    )
    if not (named and expects_names):
        log.info("hitl-nb: no responder gateway: %s", exc)
        return None
    me = {"name": named, "display_name": named}
    if isinstance(exc.info, GatewayInfo):
        log.warning(
            "hitl-nb: %s; answers will try it again and never go to the agent directly", exc
        )
        return GatewayLink(GatewayClient(exc.info), me)
    if os.environ.get("HITL_NB_HUB_SERVICE"):
        log.warning(
            "hitl-nb: %s; answers will look for the hub's service again and never go to "
            "the agent directly",
            exc,
        )
        return GatewayLink(None, me, find=_hub_service)
    log.info("hitl-nb: no responder gateway: %s", exc)
    return None


def _hub_service() -> GatewayInfo:
    """The hub's gateway service, found now, or GatewayUnavailable saying why not."""
    info = find_gateway(strict=True)
    if info is None:
        service = os.environ.get("HITL_NB_HUB_SERVICE", "hitl")
        raise GatewayUnavailable(
            f"this kernel's JupyterHub was set up with the {service!r} service, and no "
            "responder gateway answers now"
        )
    return info


def discovered(*, again: bool = False) -> GatewayLink | None:
    """This kernel's server gateway (found once per process; ``again``: look again)."""
    with _lock:
        if again or "link" not in _found:
            _found["link"] = _discover()
        return _found["link"]


def connect(info: GatewayInfo, timeout: float = 30.0) -> GatewayLink:
    """A link to the gateway ``info`` names (it asks the server who we are, a blocking
    call); the client's connections are closed again when that fails."""
    client = GatewayClient(info, timeout=timeout)
    try:
        return GatewayLink(client)
    except BaseException:
        client.close()
        raise


def gateway_link(choice: GatewayChoice | GatewayLink = None) -> GatewayLink | None:
    """The gateway a conversation's cards answer through, or None (directly).

    See the module docstring for ``choice``. Raises
    :class:`~hitl_nb.errors.GatewayUnavailable` for ``True`` without a gateway, and
    ``TypeError`` for anything else than the choices listed there.
    """
    if choice is False:
        return None
    if isinstance(choice, GatewayLink):
        return choice
    if isinstance(choice, GatewayClient):
        return GatewayLink(choice)
    if isinstance(choice, GatewayInfo):
        return connect(choice)
    if choice is None:
        link = discovered()
        return link if link is not None and link.identified else None
    if choice is True:
        link = discovered() or discovered(again=True)
        if link is None:
            raise GatewayUnavailable(
                "gateway=True, but this kernel has no responder gateway: it does not run in "
                "a Jupyter server with the hitl-nb extension, or that server did not answer"
            )
        return link
    raise TypeError(
        "gateway must be None (use the server's gateway when there is one), True, False, "
        f"a GatewayClient or a GatewayInfo, not {type(choice).__name__}"
    )
