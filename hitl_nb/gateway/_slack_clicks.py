"""A Slack app's clicks taken, answered after Slack was told they were: nothing lost.

The desk (:mod:`hitl_nb.gateway._slack_desk`) keeps each click it takes in the
database (:meth:`SlackRecords.accept`, in the transaction that marks its request seen)
before it answers Slack, and hands it to :class:`SlackClerk`, which answers it in the
background and marks it done. A process that dies in between (a ``kill -9`` after
Slack's acknowledgement, before the forward) leaves the click pending under its
replica's name; once that replica's heartbeat has stopped, a live replica adopts it
in its next round (:meth:`~hitl_nb.gateway._replicas.Duties.also`, as it adopts
forwards in doubt; a restarted server is such a replica) and answers it. The answer
goes through :meth:`Gateway.answer`, whose claim forwards at most once: a click
answered again after a death that came after its forward is refused there (409), and
the agent gets one answer.

An answer, as before it was kept: who clicked (:class:`~hitl_nb.notify.SlackPeople`:
a Slack user counts only once mapped to a user here) answers with that user as the
:class:`Caller` (spec S-3: the gateway's own rules decide); the audit entry's
``display`` names the Slack user beside the user (``bob (Slack U0123ABCD)``). Anyone
refused (not mapped, not allowed, the prompt closed) is told so by an ephemeral message
(``response_url``) only they see; nothing reaches the agent. The messages about the
prompt are then brought up to date (:class:`~hitl_nb.gateway._slack_board.SlackBoard`).
A click whose answer could not be given because the database could not be reached
stays pending and is tried again at the next round.
"""

from __future__ import annotations

import logging

from hitl_nb.errors import DeliveryFailed
from hitl_nb.gateway._gateway import Gateway, GatewayError
from hitl_nb.gateway._slack_board import SlackBoard
from hitl_nb.gateway._slack_store import SlackClick
from hitl_nb.gateway._store import StoreUnavailable
from hitl_nb.gateway._views import Caller
from hitl_nb.notify import SlackApi, SlackPeople

__all__ = ["CANNOT", "SlackClerk"]

log = logging.getLogger("hitl_nb.gateway")

CANNOT = "You cannot answer this"


class SlackClerk:
    """Answers the clicks the desk took (see the module docstring)."""

    def __init__(
        self, gateway: Gateway, api: SlackApi, people: SlackPeople, board: SlackBoard
    ) -> None:
        self.gateway = gateway
        self.api = api
        self.people = people
        self.board = board
        #: The clicks this process is answering now (not to be taken twice).
        self._working: set[str] = set()
        gateway.duties.also(self.adopt)

    def take(self, click: SlackClick) -> None:
        """Answer ``click`` (kept in the database, this replica's) in the background."""
        if click.signature in self._working:
            return
        self._working.add(click.signature)
        self.gateway.background(self._run(click))

    async def adopt(self) -> None:
        """The pending clicks of replicas that stopped become this one's; every pending
        click of this replica that nobody here works on is answered (a replica round)."""
        for click in await self.gateway.store.slack.adopt_clicks(self.gateway.replica):
            self.take(click)

    async def _run(self, click: SlackClick) -> None:
        try:
            await self.answer(click)
            await self.gateway.store.slack.click_done(click.signature)
        except StoreUnavailable as exc:
            log.warning("hitl-nb slack: a click is kept, to be answered later: %s", exc)
        finally:
            self._working.discard(click.signature)

    async def answer(self, click: SlackClick) -> None:
        """Give ``click``'s answer as its user (see the module docstring); raises
        :class:`StoreUnavailable` only, when the click must be tried again."""
        name = click.name or await self.people.user_of(click.slack_user)
        if name is None:
            await self.tell(
                click.response_url,
                f"{CANNOT}: your Slack account is not linked to a user here. Ask an "
                "administrator, or answer on the answer page.",
            )
            return
        caller = Caller(name, f"{name} (Slack {click.slack_user})")
        try:
            reply = await self.gateway.answer(click.reg_id, click.prompt_id, caller, click.payload)
        except GatewayError as exc:
            lead = CANNOT if exc.status == 403 else "Your answer was not taken"
            await self.tell(click.response_url, f"{lead}: {exc.message}")
            self.board.wake()
            return
        except StoreUnavailable:
            raise
        except Exception:
            log.exception("hitl-nb slack: %s's answer failed", name)
            await self.tell(click.response_url, "Your answer could not be taken now; try again.")
            return
        self.board.wake()
        said = reply.body.get("message") if isinstance(reply.body, dict) else None
        if said:
            await self.tell(click.response_url, f"Thanks, {name}: {said}.")

    async def tell(self, response_url: str | None, text: str) -> None:
        """An ephemeral message to the one who clicked."""
        if response_url is None:
            return
        body = {"response_type": "ephemeral", "replace_original": False, "text": text}
        try:
            await self.api.respond(response_url, body)
        except DeliveryFailed as exc:
            log.info("hitl-nb slack: could not tell the clicker: %s", exc)
