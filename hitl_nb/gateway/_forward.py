"""Sending one collected answer to the agent, at most once, even across a crash.

The store's ``forwards`` row is written before anything is sent (write-ahead, with the
``messageId`` the agent will see). The delivery is the client's engine
(:func:`hitl_nb.client.send_answer`, :func:`~hitl_nb.client.settle_answer`): one rule
(:func:`hitl_nb.client.fate`) for a notebook answering its agent and for the gateway.
What is the gateway's own is around it: when the agent's answer is lost (a dropped
connection, a restart mid-send) the row stays ``forwarding``, and :func:`settle` (of
this replica, or of one adopting the forward, :mod:`hitl_nb.gateway._replicas`) asks
the agent whether our message landed before it sends the *same* message again.

:func:`send` and :func:`settle` ask the agent and say how the forward ended (an
:class:`Ending`, nothing written); :func:`conclude` writes that end, and with it what
the task's registrant is told (``tell``: the agent accepted the answer, or refused it)
and the audit entry of the answer that made it, so an answer's forward ends in one
transaction. Every way a forward ends is a :class:`GatewayReply`: the HTTP status and
body the REST API answers with (named apart from the notebook's ``Outcome``, which is
what a person reads about an answer).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hitl_nb._backoff import Backoff
from hitl_nb.a2a import Message, Task
from hitl_nb.client import (
    IN_FLIGHT,
    HitlClient,
    How,
    answer_message,
    send_answer,
    settle_answer,
)
from hitl_nb.errors import (
    A2AError,
    AgentNotAllowed,
    AnswerOutcomeUnknown,
    PromptConflict,
    ResponseInvalid,
)
from hitl_nb.gateway._store import AuditEntry, Forward, GatewayStore
from hitl_nb.notify import Note

__all__ = ["Ending", "GatewayReply", "Tell", "conclude", "message_for", "send", "settle"]

#: The notes that tell a forward's end: (outcome, responders, the agent's words).
Tell = Callable[[str, Sequence[str], "str | None"], Sequence[Note]]

log = logging.getLogger("hitl_nb.gateway")


@dataclass(frozen=True)
class GatewayReply:
    """What the gateway answers about an answer: ``status`` (the HTTP code) and the JSON
    ``body`` (its ``status`` member: collecting, forwarded, forwarding, rejected,
    failed or closed). ``ended_here``: False when the forward had been ended by another
    replica meanwhile (see :meth:`~hitl_nb.gateway.GatewayStore.finish_forward`), so
    there is nothing more to record of it here."""

    status: int
    body: dict[str, Any]
    ended_here: bool = True


@dataclass(frozen=True)
class Ending:
    """How the agent took a forward, before the store is told: the ``reply``, and the
    row's end: ``state`` ``forwarded`` or ``failed`` with ``detail`` (and the prompt
    ``closed`` for that reason), or None: the forward is dropped (the agent refused the
    answer: it may be answered again) or stays in doubt (``in_doubt``). ``told``: what
    the registrant is told (``forwarded``, ``refused``), with the agent's ``words``."""

    reply: GatewayReply
    state: str | None = None
    detail: str = ""
    closed: str | None = None
    told: str | None = None
    words: str | None = None

    @property
    def in_doubt(self) -> bool:
        """The agent's answer was lost: the forward stays ``forwarding``."""
        return self.reply.status == 202


def message_for(fwd: Forward, task_id: str, context_id: str | None) -> Message:
    """The answer Message (§Response Envelope), always with the forward's ``messageId``."""
    who = ", ".join(fwd.responders)
    return answer_message(
        task_id,
        context_id,
        fwd.prompt_id,
        json.loads(fwd.payload),
        f"Response to prompt {fwd.prompt_id} (answered by {who})",
        message_id=fwd.message_id,
    )


#: How the acceptance was learnt (:class:`hitl_nb.client.How`) -> the forward's detail.
_ACCEPTED = {
    How.SENT: "the agent accepted the answer",
    How.FOUND: "the agent had accepted the answer",
    How.CONFIRMED: "the agent had already accepted this answer",
}


def _forwarded(fwd: Forward, result: Any, how: How) -> Ending:
    note = _ACCEPTED[how]
    body = {
        "status": "forwarded",
        "prompt_id": fwd.prompt_id,
        "responders": fwd.responders,
        "task_state": result.status.state.value if isinstance(result, Task) else None,
        "message": note,
    }
    return Ending(GatewayReply(200, body), "forwarded", note, "answered", told="forwarded")


def _refused(fwd: Forward, exc: Exception) -> Ending:
    """The agent's refusal of our message, as the forward's end."""
    body: dict[str, Any]
    if isinstance(exc, PromptConflict):
        note = (
            "the agent had already closed this prompt (answered elsewhere); nothing was forwarded"
        )
        body = {"status": "closed", "prompt_id": fwd.prompt_id, "message": note}
        return Ending(GatewayReply(409, body), "failed", note, "closed by the agent")
    if isinstance(exc, ResponseInvalid):
        body = {
            "status": "rejected",
            "prompt_id": fwd.prompt_id,
            "message": f"the agent refused the answer: {exc}",
            "validation_errors": exc.validation_errors,
        }
        return Ending(GatewayReply(422, body), told="refused", words=str(exc))
    body = {
        "status": "failed",
        "prompt_id": fwd.prompt_id,
        "message": f"the agent refused the answer: {exc}",
    }
    return Ending(GatewayReply(502, body), "failed", str(exc))


_IN_DOUBT = (
    "the agent did not confirm the answer; the gateway checks the task "
    "and sends the same message again only if it did not arrive"
)


async def send(
    client: HitlClient,
    fwd: Forward,
    task_id: str,
    context_id: str | None,
) -> Ending:
    """Send the forward's message once (its first send: the agent's 409 is another's
    answer). A lost reply leaves the forward in doubt (202), for :func:`settle`."""
    message = message_for(fwd, task_id, context_id)
    try:
        result, how = await send_answer(client, message, fwd.prompt_id)
    except IN_FLIGHT as exc:
        log.warning("hitl-nb gateway: answer to %s in doubt (%s); settling", fwd.prompt_id, exc)
        body = {"status": "forwarding", "prompt_id": fwd.prompt_id, "message": _IN_DOUBT}
        return Ending(GatewayReply(202, body))
    except (A2AError, AgentNotAllowed) as exc:
        return _refused(fwd, exc)
    return _forwarded(fwd, result, how)


def _pauses(attempts: int, delay: float) -> Iterator[float]:
    """Before each reading of the task: none at first, then doubling up to 30 s."""
    for attempt in range(attempts):
        yield Backoff(delay, 30.0).delay(attempt) if attempt else 0.0


async def settle(
    client: HitlClient,
    fwd: Forward,
    task_id: str,
    context_id: str | None,
    *,
    attempts: int = 8,
    delay: float = 0.5,
) -> Ending | None:
    """Find out what became of a ``forwarding`` answer; resend it only if it is missing
    (:func:`hitl_nb.client.settle_answer`).

    None when the agent could not be asked ``attempts`` times (the row stays
    ``forwarding``; the next start or replica round tries again).
    """
    message = message_for(fwd, task_id, context_id)
    try:
        result, how = await settle_answer(client, message, fwd.prompt_id, _pauses(attempts, delay))
    except AnswerOutcomeUnknown:
        return None
    except (A2AError, AgentNotAllowed) as exc:
        return _refused(fwd, exc)
    return _forwarded(fwd, result, how)


async def conclude(
    store: GatewayStore,
    fwd: Forward,
    ending: Ending,
    tell: Tell | None = None,
    audit: AuditEntry | None = None,
) -> GatewayReply:
    """Write how the forward ended, in one transaction with the notes that tell it
    (``tell``) and ``audit``, the entry of the answer that ended it. A forward in doubt
    is left as it is (nothing written)."""
    if ending.in_doubt:
        return ending.reply
    told = ending.told
    notes = () if told is None or tell is None else tell(told, fwd.responders, ending.words)
    if ending.state is None:
        await store.drop_forward(fwd.reg_id, fwd.prompt_id, notes=notes, audit=audit)
        return ending.reply
    ended = await store.finish_forward(
        fwd.reg_id,
        fwd.prompt_id,
        ending.state,
        ending.detail,
        closed=ending.closed,
        notes=notes,
        audit=audit,
    )
    if ending.state == "forwarded":
        log.info("hitl-nb gateway: prompt %s answered (%s)", fwd.prompt_id, ending.detail)
    return replace(ending.reply, ended_here=ended)
