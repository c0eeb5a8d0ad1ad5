"""How an answer travels: small senders, each returning a :class:`~._outcomes.Verdict`.

A card hands its answer to its sender and shows what comes back; a sender never
touches a card, and every word of a verdict comes from :mod:`._outcomes`.

- :class:`DirectSender`: straight to the agent (``client.respond``: exactly once, the
  payload checked against the prompt's schema first).
- :class:`GatewaySender`: through the Jupyter server's responder gateway
  (:class:`~hitl_nb.notebook.GatewayLink`, spec S-3): the server says who is answering,
  checks ``allowed_responders``, collects a ``consensus:N`` and forwards one answer to
  the agent at most once. The sender keeps the gateway's registration of the task and
  this person's answer while a consensus gathers, and asks the gateway for its count.
- :class:`TextSender`: a plain-text answer to an agent that asked without an envelope
  (an A2A text message in the task).

They run on the notebook's loop (:mod:`._link`); the gateway's blocking calls run off
it, in a thread. A 409 comes back as a ``conflict`` carrying the error: the card reads
the task to tell why (:func:`~._outcomes.closing`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from hitl_nb.a2a import Task
from hitl_nb.client import AnswerOutcomeUnknown, GatewayAnswer
from hitl_nb.errors import HitlError, PromptConflict, ResponseInvalid
from hitl_nb.policy import Tally
from hitl_nb.spec import PromptEnvelope

from ._gateway_link import GatewayLink
from ._link import Link
from ._outcomes import (
    ACCEPTED,
    SERVER,
    Outcome,
    Verdict,
    accepted_words,
    closing,
    consensus_closed,
    gateway_verdict,
    outcome_unknown,
    refused_by_agent,
    undelivered,
)

__all__ = ["Connect", "DirectSender", "GatewaySender", "TextSender"]

#: Connects to a gateway when first needed (an inbox's, which asks the server who we are).
Connect = Callable[[], Awaitable[GatewayLink]]


class DirectSender:
    """Answers one prompt straight to the agent, on ``link``'s client."""

    def __init__(self, link: Link, envelope: PromptEnvelope) -> None:
        self.link = link
        self.envelope = envelope

    async def send(
        self,
        task: Task,
        payload: Mapping[str, Any],
        *,
        note: str = "",
        wait: bool = False,
        validate: bool = True,
    ) -> Verdict:
        """Answer the prompt of ``task``; ``note`` goes with an accepted answer's words (an
        override, S-3). ``wait``: return once the agent moved on (nobody follows the
        task). ``validate=False`` sends past the local schema check."""
        try:
            result = await self.link.client.respond(
                task.id,
                self.envelope.prompt_id,
                payload,
                prompt=self.envelope,
                context_id=task.context_id,
                wait=wait,
                validate=validate,
            )
        except ResponseInvalid as exc:
            return Verdict(refused_by_agent(exc), True)
        except PromptConflict as exc:
            return Verdict(closing(None, self.envelope, conflict=exc), False)
        except AnswerOutcomeUnknown as exc:
            return Verdict(outcome_unknown(exc), False)
        except HitlError as exc:
            return Verdict(undelivered(exc), True)
        found = result if isinstance(result, Task) else None
        receipt = self.link.client.receipt(self.envelope.prompt_id)
        words = accepted_words(note, receipt)
        return Verdict(Outcome("accepted", words, found), False, None, note, receipt, found)


class TextSender:
    """Answers a plain-text question with text, on ``link``'s client (the A2A way)."""

    def __init__(self, link: Link) -> None:
        self.link = link

    async def send(self, task: Task, text: str, *, following: bool) -> Verdict:
        """Send ``text`` in ``task``; ``following``: someone follows the task, so the
        agent need not finish before it answers."""
        try:
            result = await self.link.client.send(
                text,
                task_id=task.id,
                context_id=task.context_id,
                return_immediately=following,
            )
        except HitlError as exc:
            return Verdict(undelivered(exc), True)
        found = result if isinstance(result, Task) else None
        return Verdict(Outcome("accepted", ACCEPTED, found), False, task=found)


class GatewaySender:
    """Answers one prompt through a responder gateway.

    ``gateway``: the :class:`~hitl_nb.notebook.GatewayLink`, or a coroutine function
    that connects to it when first needed. ``needed``: how many must agree (the
    prompt's ``consensus:N``; 1 otherwise). ``registration``: the gateway's id of the
    task; without one, ``task`` (agent URL, task id) is registered at the first answer.

    ``ballot`` is this person's answer while a consensus gathers (None otherwise).
    """

    def __init__(
        self,
        gateway: GatewayLink | Connect,
        prompt_id: str,
        needed: int = 1,
        *,
        registration: str | None = None,
        task: tuple[object, str] | None = None,
        host: str | None = None,
    ) -> None:
        self._gateway = gateway
        #: What the words call the gateway's host (None: the link's own, once connected).
        self._host = host
        self.prompt_id = prompt_id
        self.needed = needed
        self.registration = registration
        self._task = task
        self.ballot: dict[str, Any] | None = None

    async def link(self) -> GatewayLink:
        """The gateway (connected on first use)."""
        if isinstance(self._gateway, GatewayLink):
            return self._gateway
        self._gateway = await self._gateway()
        return self._gateway

    @property
    def host(self) -> str:
        """What the words call the gateway's host ("the hub", "the Jupyter server")."""
        if self._host is not None:
            return self._host
        return self._gateway.host if isinstance(self._gateway, GatewayLink) else SERVER

    async def _registration(self, gateway: GatewayLink) -> str:
        if self.registration is None:
            agent, task_id = self._task if self._task is not None else (None, "")
            if not isinstance(agent, str):
                raise HitlError(
                    "the responder gateway needs the agent's URL (this conversation was "
                    "made from an agent card)"
                )
            self.registration = await gateway.register(agent, task_id)
        return self.registration

    async def send(self, payload: Mapping[str, Any]) -> Verdict:
        """Send one answer to the gateway: what it did with it (an accepted consensus
        answer brings the gateway's count, enough now)."""
        name = ""
        try:
            gateway = await self.link()
            name = gateway.name or gateway.display
            registration = await self._registration(gateway)
            reply: GatewayAnswer | HitlError = await gateway.answer(
                registration, self.prompt_id, payload
            )
        except HitlError as exc:
            reply = exc
        verdict = gateway_verdict(reply, name, self.needed, self.host)
        if verdict.tally is not None:  # held: ours, until the consensus is reached
            self.ballot = dict(payload)
        if verdict.outcome.accepted:
            count = await self.count()
            if count is not None:
                verdict = replace(verdict, tally=count)
        return verdict

    async def _view(self) -> dict[str, Any] | None:
        if self.registration is None:
            return None
        try:
            return await (await self.link()).view(self.registration, self.prompt_id)
        except HitlError:
            return None

    def _tally(self, view: Mapping[str, Any] | None) -> Tally | None:
        if view is None or self.needed <= 1:
            return None
        return Tally(
            _number(view.get("agreeing")),
            self.needed,
            _number(view.get("answers")),
            bool(view.get("disagreement")),
        )

    async def count(self) -> Tally | None:
        """The gateway's count of this consensus prompt now (None: one answer settles
        it, the task is not registered yet, or the gateway could not say)."""
        if self.registration is None or self.needed <= 1:
            return None
        return self._tally(await self._view())

    async def closed(self, task: Task) -> tuple[Outcome | None, Tally | None]:
        """The agent moved on while our consensus answer was held here: the outcome if
        the gateway forwarded an agreed answer (ours among them, or not), and its count.
        ``(None, ...)``: it forwarded nothing; the prompt closed for another reason."""
        view = await self._view()
        name = self._gateway.name if isinstance(self._gateway, GatewayLink) else None
        return consensus_closed(view, name, task, self.host), self._tally(view)


def _number(value: Any) -> int:
    """A count from the gateway's JSON (0 for anything that is not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value)
