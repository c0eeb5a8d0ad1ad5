"""Sending one collected answer to the agent, at most once, even across a crash.

The store's ``forwards`` row is written before anything is sent (write-ahead, with the
``messageId`` the agent will see). When the agent's answer is lost (a dropped connection,
a restart mid-send) the row stays ``forwarding``; :func:`settle` then asks the agent
(GetTask) whether a history message has our ``messageId`` before it sends the *same*
message again, the model of :mod:`hitl_nb.client`'s exactly-once answers.

Every way a forward ends is a :class:`GatewayReply`: the HTTP status and body the REST
API answers with (named apart from the notebook's ``Outcome``, which is what a person
reads about an answer). What the task's registrant is to be told of it (``tell``: the
agent accepted the answer, or refused it) is written in the transaction that records
the end, and so is the audit entry of the answer that made it (``record``), so an
answer's forward ends in one transaction.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hitl_nb._backoff import Backoff
from hitl_nb.a2a import Message, Part, Role, Task, TaskState
from hitl_nb.client import HitlClient, PromptEvent, prompt_of
from hitl_nb.errors import (
    A2AError,
    AgentNotAllowed,
    AgentTimeout,
    AgentUnreachable,
    PromptConflict,
    ProtocolViolation,
    ResponseInvalid,
)
from hitl_nb.gateway._store import AuditEntry, Forward, GatewayStore
from hitl_nb.notify import Note
from hitl_nb.spec import ResponseEnvelope

__all__ = ["GatewayReply", "Record", "Tell", "deliver", "message_for", "settle"]

#: The notes that tell a forward's end: (outcome, responders, the agent's words).
Tell = Callable[[str, Sequence[str], "str | None"], Sequence[Note]]
#: The audit entry of the answer a reply is about (written with the forward's end).
Record = Callable[["GatewayReply"], AuditEntry]


def _told(tell: Tell | None, outcome: str, fwd: Forward, detail: str | None) -> Sequence[Note]:
    return tell(outcome, fwd.responders, detail) if tell is not None else ()


log = logging.getLogger("hitl_nb.gateway")

IN_FLIGHT = (AgentUnreachable, AgentTimeout, ProtocolViolation)


@dataclass(frozen=True)
class GatewayReply:
    """What the gateway answers about an answer: ``status`` (the HTTP code) and the JSON
    ``body`` (its ``status`` member: collecting, forwarded, forwarding, rejected,
    failed or closed). ``ended_here``: False when the forward had been ended by another
    replica meanwhile (see :meth:`~hitl_nb.gateway.GatewayStore.finish_forward`), so
    there is nothing more to record of it here. ``audited``: the answer's audit entry
    was written with it (``record`` of :func:`deliver`)."""

    status: int
    body: dict[str, Any]
    ended_here: bool = True
    audited: bool = False


def _entry(record: Record | None, status: int, body: dict[str, Any]) -> AuditEntry | None:
    return None if record is None else record(GatewayReply(status, body))


def message_for(fwd: Forward, task_id: str, context_id: str | None) -> Message:
    """The answer Message (§Response Envelope), always with the forward's ``messageId``."""
    payload = json.loads(fwd.payload)
    response = ResponseEnvelope.from_json(
        {"prompt_id": fwd.prompt_id, "payload": payload}, mode="orchestrator"
    )
    who = ", ".join(fwd.responders)
    return Message(
        message_id=fwd.message_id,
        role=Role.USER,
        parts=[Part(text=f"Response to prompt {fwd.prompt_id} (answered by {who})")],
        task_id=task_id,
        context_id=context_id,
        metadata={"hitl_response_for": response.to_json()},
    )


def _state(result: Any) -> str | None:
    return result.status.state.value if isinstance(result, Task) else None


def _ours_landed(task: Task, fwd: Forward) -> bool | None:
    """True: our message is in the history; False: another answer closed the prompt;
    None: the prompt is still open (send again)."""
    if any(m.message_id == fwd.message_id for m in task.history):
        return True
    found = prompt_of(task)
    if (
        task.status.state is TaskState.INPUT_REQUIRED
        and isinstance(found, PromptEvent)
        and found.prompt_id == fwd.prompt_id
    ):
        return None
    # The prompt is closed and our message is not in the history. An agent that keeps
    # no history cannot tell us; the prompt closed after our send: count it as ours.
    return not task.history


async def _done(
    store: GatewayStore,
    fwd: Forward,
    result: Any,
    note: str,
    tell: Tell | None,
    record: Record | None = None,
) -> GatewayReply:
    body = {
        "status": "forwarded",
        "prompt_id": fwd.prompt_id,
        "responders": fwd.responders,
        "task_state": _state(result),
        "message": note,
    }
    ended = await store.finish_forward(
        fwd.reg_id,
        fwd.prompt_id,
        "forwarded",
        note,
        closed="answered",
        notes=_told(tell, "forwarded", fwd, None),
        audit=_entry(record, 200, body),
    )
    log.info("hitl-nb gateway: prompt %s answered (%s)", fwd.prompt_id, note)
    return GatewayReply(200, body, ended_here=ended, audited=record is not None)


async def _closed_elsewhere(
    store: GatewayStore, fwd: Forward, record: Record | None = None
) -> GatewayReply:
    note = "the agent had already closed this prompt (answered elsewhere); nothing was forwarded"
    body = {"status": "closed", "prompt_id": fwd.prompt_id, "message": note}
    ended = await store.finish_forward(
        fwd.reg_id,
        fwd.prompt_id,
        "failed",
        note,
        closed="closed by the agent",
        audit=_entry(record, 409, body),
    )
    return GatewayReply(409, body, ended_here=ended, audited=record is not None)


async def deliver(
    store: GatewayStore,
    client: HitlClient,
    fwd: Forward,
    task_id: str,
    context_id: str | None,
    tell: Tell | None = None,
    record: Record | None = None,
) -> GatewayReply:
    """Send the forward's message once; on a lost answer, leave it ``forwarding``.
    ``record``: the answer's audit entry, written with the forward's end when it ends
    here (the reply says so: ``audited``)."""
    message = message_for(fwd, task_id, context_id)
    try:
        result = await client.send(message, return_immediately=True)
    except PromptConflict:
        return await _check(store, client, fwd, task_id, tell, record)
    except ResponseInvalid as exc:
        body = {
            "status": "rejected",
            "prompt_id": fwd.prompt_id,
            "message": f"the agent refused the answer: {exc}",
            "validation_errors": exc.validation_errors,
        }
        await store.drop_forward(
            fwd.reg_id,
            fwd.prompt_id,
            notes=_told(tell, "refused", fwd, str(exc)),
            audit=_entry(record, 422, body),
        )
        return GatewayReply(422, body, audited=record is not None)
    except IN_FLIGHT as exc:
        log.warning("hitl-nb gateway: answer to %s in doubt (%s); settling", fwd.prompt_id, exc)
        return GatewayReply(
            202,
            {
                "status": "forwarding",
                "prompt_id": fwd.prompt_id,
                "message": "the agent did not confirm the answer; the gateway checks the task "
                "and sends the same message again only if it did not arrive",
            },
        )
    except (A2AError, AgentNotAllowed) as exc:
        body = {
            "status": "failed",
            "prompt_id": fwd.prompt_id,
            "message": f"the agent refused the answer: {exc}",
        }
        ended = await store.finish_forward(
            fwd.reg_id, fwd.prompt_id, "failed", str(exc), audit=_entry(record, 502, body)
        )
        return GatewayReply(502, body, ended_here=ended, audited=record is not None)
    return await _done(store, fwd, result, "the agent accepted the answer", tell, record)


async def _check(
    store: GatewayStore,
    client: HitlClient,
    fwd: Forward,
    task_id: str,
    tell: Tell | None,
    record: Record | None,
) -> GatewayReply:
    """After a 409: did *our* message land (a resend), or did someone else answer?"""
    for _ in range(10):  # AC-4: an accepted answer leaves INPUT_REQUIRED within 1 s
        task = await client.get_task(task_id)
        ours = _ours_landed(task, fwd)
        if ours is True:
            note = "the agent had already accepted this answer"
            return await _done(store, fwd, task, note, tell, record)
        if ours is False:
            return await _closed_elsewhere(store, fwd, record)
        await asyncio.sleep(0.15)
    return await _closed_elsewhere(store, fwd, record)


async def settle(
    store: GatewayStore,
    client: HitlClient,
    fwd: Forward,
    task_id: str,
    context_id: str | None,
    *,
    attempts: int = 8,
    delay: float = 0.5,
    tell: Tell | None = None,
) -> GatewayReply | None:
    """Find out what became of a ``forwarding`` answer; resend it only if it is missing.

    None when the agent could not be asked ``attempts`` times (the row stays
    ``forwarding``; the next start tries again).
    """
    for attempt in range(attempts):
        if attempt:
            await asyncio.sleep(Backoff(delay, 30.0).delay(attempt))
        try:
            task = await client.get_task(task_id)
        except IN_FLIGHT:
            continue
        except (A2AError, AgentNotAllowed) as exc:
            ended = await store.finish_forward(fwd.reg_id, fwd.prompt_id, "failed", str(exc))
            return GatewayReply(502, {"status": "failed", "message": str(exc)}, ended_here=ended)
        ours = _ours_landed(task, fwd)
        if ours is True:
            return await _done(store, fwd, task, "the agent had accepted the answer", tell)
        if ours is False:
            return await _closed_elsewhere(store, fwd)
        outcome = await deliver(store, client, fwd, task_id, context_id, tell)
        if outcome.status != 202:
            return outcome
    return None
