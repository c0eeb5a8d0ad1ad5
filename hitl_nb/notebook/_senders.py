"""How an answer travels: small senders, each returning a :class:`~._outcomes.Verdict`.

A card hands its answer to its sender and shows what comes back; a sender never
touches a card, and every word of a verdict comes from :mod:`._outcomes`.

- :class:`DirectSender`: straight to the agent (``client.respond``: exactly once, the
  payload checked against the prompt's schema first). The kernel's gateway may watch
  the task all the same (:mod:`._announce`: JupyterLab's prompts panel lists it); the
  sender keeps which gateway and its id of the task, tells it of each answer sent, and
  asks it whose answer went when the task moved on without ours.
- :class:`GatewaySender`: through the Jupyter server's responder gateway
  (:class:`~hitl_nb.notebook.GatewayLink`, spec S-3): the server says who is answering,
  checks ``allowed_responders``, collects a ``consensus:N`` and forwards one answer to
  the agent at most once. The sender keeps the gateway's registration of the task and
  this person's answer while a consensus gathers, and asks the gateway for its count
  and, when the task moved on without our answer, whose answer it forwarded.
- :class:`TextSender`: a plain-text answer to an agent that asked without an envelope
  (an A2A text message in the task).

They run on the notebook's loop (:mod:`._link`); the gateway's blocking calls run off
it, in a thread. A 409 comes back as a ``conflict`` carrying the error: the card reads
the task to tell why (:func:`~._outcomes.closing`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from hitl_nb.a2a import Task
from hitl_nb.client import AnswerOutcomeUnknown, GatewayAnswer
from hitl_nb.errors import HitlError, PromptConflict, ResponseInvalid
from hitl_nb.policy import Tally
from hitl_nb.spec import PromptEnvelope

from ._announce import announce
from ._gateway_link import GatewayLink
from ._link import Link
from ._outcomes import (
    ACCEPTED,
    SERVER,
    Outcome,
    Verdict,
    accepted_words,
    answered_elsewhere,
    closing,
    consensus_closed,
    gateway_refusal,
    gateway_verdict,
    outcome_unknown,
    refused_by_agent,
    undelivered,
)

__all__ = ["Connect", "DirectSender", "GatewaySender", "TextSender"]

#: Connects to a gateway when first needed (an inbox's, which asks the server who we are).
Connect = Callable[[], Awaitable[GatewayLink]]
#: Reads a gateway's view of one prompt (None: it could not say).
View = Callable[[], Awaitable[dict[str, Any] | None]]
#: The pauses between looks at a prompt whose forward the gateway has on its way (its
#: view says ``forwarding``), before saying whose answer went.
_FORWARD_PAUSES = (0.1, 0.2, 0.4, 0.8, 0.0)


async def _after_forwarding(view: View) -> dict[str, Any] | None:
    """The gateway's view of a prompt whose task moved on, once a forward still on its
    way has gone (waited for a moment: :data:`_FORWARD_PAUSES`)."""
    found = None
    for pause in _FORWARD_PAUSES:
        found = await view()
        if found is None or found.get("state") != "forwarding" or not pause:
            break
        await asyncio.sleep(pause)
    return found


class DirectSender:
    """Answers one prompt straight to the agent, on ``link``'s client.

    ``watched``: the kernel's gateway watching the task all the same, and its id of the
    task (None: none, or not yet; set by :meth:`watch` or :meth:`announce`).
    """

    def __init__(self, link: Link, envelope: PromptEnvelope) -> None:
        self.link = link
        self.envelope = envelope
        self.watched: tuple[GatewayLink, str] | None = None

    def watch(self, gateway: GatewayLink, registration: str) -> None:
        """The kernel's gateway watches the task, as ``registration``."""
        self.watched = (gateway, registration)

    async def announce(self, task_id: str) -> None:
        """Have the kernel's gateway watch the task (a card shown alone: no conversation
        does it); a gateway watching it already is kept."""
        found = await announce(self.link.client.agent, task_id)
        if found is not None and self.watched is None:
            self.watched = found

    @property
    def knows(self) -> bool:
        """Does a gateway know the task (it watches it)?"""
        return self.watched is not None

    async def view(self) -> dict[str, Any] | None:
        """The watching gateway's view of the prompt (None: not watched, or it could
        not say)."""
        if self.watched is None:
            return None
        gateway, registration = self.watched
        try:
            return await gateway.view(registration, self.envelope.prompt_id)
        except HitlError:
            return None

    async def answered_elsewhere(self, task: Task, responder: str | None) -> Outcome | None:
        """The task moved on without our answer: the watching gateway says whether it
        forwarded one (given in the prompts panel; a forward on its way is waited for a
        moment) and whose; ``responder`` is who the card answers as. None: the gateway
        forwarded nothing (the prompt closed for another reason)."""
        view = await _after_forwarding(self.view)
        watched = self.watched
        host = watched[0].host if watched is not None else SERVER
        # the server's one user: the panel's answer was theirs
        name = None if watched is not None and not watched[0].identified else responder
        return answered_elsewhere(view, name, task, host)

    async def moved_on(
        self, task: Task, responder: str | None
    ) -> tuple[Outcome | None, Tally | None]:
        """The task left the prompt without our answer: what the watching gateway says
        of it (:meth:`answered_elsewhere`; no count: the card answers directly)."""
        return await self.answered_elsewhere(task, responder), None

    async def _tell(self, gateway: GatewayLink, registration: str) -> None:
        """An answer went to the agent directly: the gateway watching the task reads it
        now (the prompts panel drops the prompt at once, not at its next look)."""
        try:
            await gateway.view(registration, self.envelope.prompt_id)
        except HitlError:
            pass  # it reads the task again at its next look anyway

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
        task). ``validate=False`` sends past the local schema check. A gateway
        watching the task is told, in the background."""
        verdict = await self._send(task, payload, note=note, wait=wait, validate=validate)
        if self.watched is not None:
            self.link.submit(self._tell(*self.watched))
        return verdict

    async def _send(
        self, task: Task, payload: Mapping[str, Any], *, note: str, wait: bool, validate: bool
    ) -> Verdict:
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

    @property
    def knows(self) -> bool:
        """Does the gateway know the task (registered)?"""
        return self.registration is not None

    def registered(self, registration: str) -> bool:
        """The task was registered with the gateway as ``registration`` (by the
        conversation): answers use it. False when the sender had an id already."""
        if self.registration is not None:
            return False
        self.registration = registration
        return True

    def refusal(self, responder: str | None, override: bool) -> str | None:
        """Why an answer as ``responder`` is not sent: the gateway says who is answering
        (S-3), so answering as someone else, or overriding, is refused here. None: send
        (also while not connected yet: the gateway's reply then speaks)."""
        gateway = self._gateway
        if not isinstance(gateway, GatewayLink):
            return None
        return gateway_refusal(gateway.name, gateway.display, responder, override, gateway.host)

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

    async def view(self) -> dict[str, Any] | None:
        """The gateway's view of the prompt (None: not registered yet, or it could not
        say)."""
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
        return self._tally(await self.view())

    async def closed(self, task: Task) -> tuple[Outcome | None, Tally | None]:
        """The agent moved on while our consensus answer was held here: the outcome if
        the gateway forwarded an agreed answer (ours among them, or not), and its count.
        ``(None, ...)``: it forwarded nothing; the prompt closed for another reason."""
        view = await self.view()
        return consensus_closed(view, self._name, task, self.host), self._tally(view)

    async def answered_elsewhere(self, task: Task, responder: str | None = None) -> Outcome | None:
        """The task moved on without our answer: the gateway says whether it forwarded
        one (a forward on its way is waited for a moment) and whose. ``responder`` is
        not used: the gateway says who we are. None: it forwarded nothing."""
        view = await _after_forwarding(self.view)
        return answered_elsewhere(view, self._name, task, self.host)

    async def moved_on(
        self, task: Task, responder: str | None = None
    ) -> tuple[Outcome | None, Tally | None]:
        """The task left the prompt without an answer of ours accepted: with our
        consensus answer held here, whether the agreed answer was ours, and the count
        (:meth:`closed`); else whose answer the gateway forwarded, if any
        (:meth:`answered_elsewhere`)."""
        if self.ballot is not None:
            return await self.closed(task)
        return await self.answered_elsewhere(task, responder), None

    @property
    def _name(self) -> str | None:
        """Who the gateway says we are (None: it cannot tell, or not connected yet)."""
        return self._gateway.name if isinstance(self._gateway, GatewayLink) else None


def _number(value: Any) -> int:
    """A count from the gateway's JSON (0 for anything that is not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value)
