"""How a card answers through the Jupyter server's responder gateway (spec S-3).

The server says who is answering; the gateway checks ``allowed_responders``, collects a
``consensus:N`` and forwards one answer to the agent at most once. What the gateway
answers becomes the card's outcome in the words of :mod:`._gateway_answer` (which the
inbox's card shares): an accepted answer then waits for the agent to move on, as always;
a consensus' count goes on the card's responder line; a 409 is told apart by the task
(expired, closed, or answered by someone else). The card never answers the agent
directly instead.

When the agent moves on while this person's consensus answer was held, the gateway is
asked what it forwarded: the agreed answer including ours is ``accepted``; another
agreed answer is a ``conflict``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from hitl_nb.a2a import Task
from hitl_nb.client import GatewayAnswer
from hitl_nb.errors import HitlError, PromptConflict

from ._card_send import CardSending
from ._gateway_answer import NOTHING_SENT, gateway_verdict
from ._gateway_link import GatewayLink
from ._outcome import Outcome, status_html

__all__ = ["ViaGateway"]


class ViaGateway:
    """One card's answers through a gateway (:class:`GatewayLink`).

    ``registration`` is the gateway's id of the card's task (registered on the first
    answer when None); ``ballot`` is this person's answer while a consensus gathers.
    """

    def __init__(
        self, card: CardSending, link: GatewayLink, registration: str | None = None
    ) -> None:
        self.card = card
        self.link = link
        self.registration = registration
        self.ballot: dict[str, Any] | None = None

    @property
    def who(self) -> str:
        """The person as the server names them, for messages."""
        return self.link.display if self.link.name is None else self.link.name

    def local_refusal(self, responder: str | None, override: bool) -> str | None:
        """Why an answer given from code cannot go through the gateway as asked."""
        if override:
            return (
                "the Jupyter server decides who may answer; it cannot be overridden from the "
                f"notebook (answer with gateway=False to send directly); {NOTHING_SENT}"
            )
        if responder is not None and responder != self.link.name:
            return (f"the Jupyter server says you are {self.who!r}; answering as {responder!r} "
                    f"is not possible through it; {NOTHING_SENT}")  # fmt: skip
        return None

    def submit(self, payload: dict[str, Any], responder: str | None, override: bool) -> None:
        """Send a submitted answer through the gateway, in the background."""
        card = self.card
        reason = self.local_refusal(responder, override)
        if reason is not None:
            card._reopen()
            card._record(Outcome("refused", reason))
            return
        if not card._start_sending():
            return
        card.status.value = status_html(
            "info", "sending", "the answer is on its way to the Jupyter server"
        )
        card.link.submit(self.send(payload))

    async def _registration(self) -> str:
        if self.registration is None:
            agent = self.card.link.client.agent
            if not isinstance(agent, str):
                raise HitlError(
                    "the responder gateway needs the agent's URL (this conversation was "
                    "made from an agent card)"
                )
            self.registration = await self.link.register(agent, self.card.task.id)
        return self.registration

    async def send(self, payload: Mapping[str, Any]) -> None:
        """Send one answer to the gateway; record what it did with it on the card."""
        card = self.card
        try:
            reg = await self._registration()
            reply: GatewayAnswer | HitlError = await self.link.answer(reg, card.prompt_id, payload)
        except HitlError as exc:
            reply = exc
        except Exception as exc:  # never leave the card saying "sending" forever
            self._open(Outcome("failed", f"{type(exc).__name__}: {exc}"))
            raise
        verdict = gateway_verdict(reply, self.who, card.who.gate.needed)
        outcome, tally = verdict.outcome, verdict.tally
        if tally is not None:  # held: our ballot, and the count on the responder line
            self.ballot = dict(payload)
            card.who.show_tally(tally.agreeing, tally.needed, tally.answers, tally.disagreement)
        if outcome.status == "accepted":
            await self.refresh()  # a consensus card's count: enough now
            await card._accepted(None, verdict.note, wait=False)
        elif isinstance(outcome.error, PromptConflict):  # the task tells why it was closed
            why = await card._why_conflict(outcome.error)
            card._finish(dataclasses.replace(why, error=outcome.error), state="done")
        elif outcome.status == "invalid":
            card.form.set_errors(outcome.validation_errors)  # opens the form again
            card._finish(outcome, state="open")
        elif verdict.open_again:
            if outcome.status == "refused" and outcome.error is not None:
                card.who.show_refusal(str(outcome.error))
            self._open(outcome)
        else:
            card._finish(outcome, state="done")

    def _open(self, outcome: Outcome) -> None:
        """Record ``outcome`` and open the form again for another answer."""
        self.card._reopen()
        self.card._finish(outcome, state="open")

    async def refresh(self) -> None:
        """Show the gateway's current count of a consensus prompt (best effort)."""
        if self.registration is None or self.card.who.gate.needed <= 1:
            return
        try:
            view = await self.link.view(self.registration, self.card.prompt_id)
        except HitlError:
            return
        if view is not None:
            self._show(view)

    def _show(self, view: Mapping[str, Any]) -> None:
        """Show a consensus count from the gateway's view of the prompt."""
        card = self.card
        if card.who.gate.needed > 1:
            agreeing, answers = int(view.get("agreeing") or 0), int(view.get("answers") or 0)
            card.who.show_tally(
                agreeing, card.who.gate.needed, answers, bool(view.get("disagreement"))
            )

    async def after_close(self, task: Task) -> None:
        """The agent moved on while our consensus answer was held: was it ours?"""
        card = self.card
        view = None
        if self.registration is not None:
            try:
                view = await self.link.view(self.registration, card.prompt_id)
            except HitlError:
                view = None
        if view is not None:
            self._show(view)
        forwarded_for = (view or {}).get("forwarded_for") or []
        state = task.status.state.name
        if view is not None and view.get("state") == "forwarded":
            names = ", ".join(str(n) for n in forwarded_for)
            if self.link.name in forwarded_for:
                agreed = f"{len(forwarded_for)} people agreed: {names}"
                outcome = Outcome("accepted", f"the agent accepted the answer ({agreed}); "
                                  f"the task is now {state}", task)  # fmt: skip
            else:
                outcome = Outcome("conflict", f"{names} agreed on another answer, which the "
                                  "Jupyter server forwarded; yours was not sent", task)  # fmt: skip
        else:
            outcome = card._closing_outcome(task)
        card._finish(outcome, state="done")
