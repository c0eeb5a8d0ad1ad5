"""A conversation in gateway mode: its task registered with the responder gateway (S-3).

As soon as the agent names the task, the conversation registers ``(agent URL, task id)``
with the Jupyter server's gateway (:mod:`._gateway_link`), in the background: the cell
goes on. The gateway's registration id then reaches every card (:mod:`._via_gateway`
answers through it); a registration that fails is said on the card at its first answer,
which tries again.
"""

from __future__ import annotations

from hitl_nb.errors import HitlError

from ._card import PromptCard
from ._gateway_link import GatewayLink
from ._link import Link

__all__ = ["GatewayRegistration"]


class GatewayRegistration:
    """The gateway part of :class:`~hitl_nb.notebook.Conversation` (one of its bases).

    The attributes below are set by ``Conversation.__init__``.
    """

    link: Link
    cards: list[PromptCard]
    #: The gateway in use (None: the cards answer the agent directly).
    gateway: GatewayLink | None
    #: The gateway's id of the task, once registered.
    registration: str | None
    #: Why the task could not be registered with the gateway (None: no problem).
    registration_error: str | None
    _registering: bool

    def _register(self, task_id: str) -> None:
        """Register the task with the gateway, in the background (the cell goes on)."""
        agent = self.link.client.agent
        if self._registering or self.gateway is None:
            return
        if not isinstance(agent, str):
            self.registration_error = (
                "the responder gateway needs the agent's URL; this conversation was made "
                "from an agent card, so its task is not registered there"
            )
            return
        self._registering = True
        self.link.submit(self._register_async(self.gateway, agent, task_id))

    async def _register_async(self, gateway: GatewayLink, agent: str, task_id: str) -> None:
        try:
            registration = await gateway.register(agent, task_id)
        except HitlError as exc:
            # Said on the card at the first answer (which tries again), not raised here.
            self.registration_error = f"{exc}"
            return
        finally:
            self._registering = False
        self.registration_error = None
        self.registration = registration
        for card in self.cards:
            if card.via is not None and card.via.registration is None:
                card.via.registration = registration
                await card.via.refresh()

    def _show_count(self, card: PromptCard) -> None:
        """Ask the gateway for a consensus card's count, in the background."""
        if card.via is not None:
            self.link.submit(card.via.refresh())
