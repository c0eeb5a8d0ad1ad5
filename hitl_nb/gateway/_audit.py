"""The audit trail's entries: who answered what, and what the gateway and the agent did.

An entry never holds the answer itself, only the SHA-256 of its canonical JSON (the
key-sorted compact form the gateway compares consensus answers in) and of the prompt's
``response_schema``: a team can show which answer was given to which question without
the trail becoming a copy of every answer. Exported as JSON lines (one entry a line,
oldest first), the format log tools read. Each entry is appended as the next link of the
trail's hash chain (:mod:`hitl_nb.gateway._chain`; ``hitl-nb audit verify`` checks it).

:class:`Audit` is the one place the gateway's entries are made: an answer's outcome
(:meth:`Audit.outcome`, written by the store in the transaction of the change it
records, or on its own by :meth:`Audit.add_outcome`), a refusal, and the end of a
forward the gateway settled by itself.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hitl_nb._json import dumps_compact
from hitl_nb.gateway._forward import GatewayReply
from hitl_nb.gateway._store import AuditEntry, Forward, GatewayStore, PromptRow, Registration
from hitl_nb.gateway._views import Caller

__all__ = [
    "Answer",
    "Audit",
    "action_of",
    "answer_entry",
    "forward_entry",
    "json_lines",
    "sha256_of",
]

#: The reply's ``status`` member -> the entry's ``action``.
_ACTIONS = {
    "collecting": "held",
    "forwarded": "forwarded",
    "forwarding": "forwarding",
    "rejected": "rejected",
    "failed": "failed",
    "closed": "closed",
}


def sha256_of(value: Any) -> str | None:
    """The SHA-256 (hex) of ``value`` as canonical JSON; None for a value JSON cannot
    hold (NaN) or for None (nothing was given)."""
    if value is None:
        return None
    try:
        text = dumps_compact(value)
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def action_of(reply: GatewayReply) -> str:
    """What the gateway did, in the trail's words."""
    return _ACTIONS.get(str(reply.body.get("status")), "failed")


def _agent_reply(reply: GatewayReply) -> dict[str, Any] | None:
    body = reply.body
    if body.get("status") == "collecting":
        return None  # the agent was not asked
    out = {"message": body.get("message")}
    for key in ("task_state", "validation_errors"):
        if key in body:
            out[key] = body[key]
    return out


def _entry(
    reg: Registration,
    row: PromptRow,
    who: Caller | None,
    payload: Any,
    *,
    status: int,
    action: str,
    reason: str | None,
    responders: list[str],
    reply: GatewayReply | None,
) -> AuditEntry:
    """An entry about ``row``'s prompt (``who``: None for what the gateway did itself)."""
    return AuditEntry(
        at=time.time(),
        reg_id=reg.id,
        task_id=reg.task_id,
        agent_url=reg.agent_url,
        prompt_id=row.prompt_id,
        responder=None if who is None else who.name,
        display=None if who is None else who.display,
        action=action,
        status=status,
        reason=reason,
        payload_sha256=sha256_of(payload),
        schema_sha256=sha256_of(row.envelope.get("response_schema")),
        responders=responders,
        agent_reply=None if reply is None else _agent_reply(reply),
    )


def answer_entry(
    reg: Registration,
    row: PromptRow,
    caller: Caller,
    payload: Any,
    *,
    status: int,
    action: str,
    reason: str | None = None,
    reply: GatewayReply | None = None,
) -> AuditEntry:
    """The entry for one answer ``caller`` gave (refused: ``reason``; else the reply)."""
    responders = []
    if reply is not None and isinstance(reply.body.get("responders"), list):
        responders = [str(r) for r in reply.body["responders"]]
    if reason is None and reply is not None:
        reason = reply.body.get("message")
    return _entry(
        reg,
        row,
        caller,
        payload,
        status=status,
        action=action,
        reason=reason,
        responders=responders,
        reply=reply,
    )


def forward_entry(
    reg: Registration, row: PromptRow, fwd: Forward, reply: GatewayReply
) -> AuditEntry:
    """The entry for a forward the gateway finished by itself (after a lost reply or a
    restart): no one answered just now, so no responder; the forward's own responders."""
    return _entry(
        reg,
        row,
        None,
        json.loads(fwd.payload),
        status=reply.status,
        action=action_of(reply),
        reason=str(reply.body.get("message") or "") or None,
        responders=list(fwd.responders),
        reply=reply,
    )


@dataclass(frozen=True)
class Answer:
    """One answer as the trail names it: the task (``reg``), the prompt (``row``), who
    gave it (``caller``) and what (``payload``, kept as its hash)."""

    reg: Registration
    row: PromptRow
    caller: Caller
    payload: Any


class Audit:
    """The audit trail's entries, made in one place and appended to ``store``'s trail."""

    def __init__(self, store: GatewayStore) -> None:
        self.store = store

    def outcome(self, answer: Answer, reply: GatewayReply) -> AuditEntry:
        """The entry of what became of ``answer`` (``reply``), for the store to append in
        the transaction of the change it records (a ballot counted, a forward ended)."""
        a = answer
        return answer_entry(
            a.reg,
            a.row,
            a.caller,
            a.payload,
            status=reply.status,
            action=action_of(reply),
            reply=reply,
        )

    async def add_outcome(self, answer: Answer, reply: GatewayReply) -> None:
        """Append the entry of an outcome that changed nothing here (a forward in doubt,
        an answer another's forward carries)."""
        await self.store.add_audit(self.outcome(answer, reply))

    async def refusal(self, answer: Answer, status: int, reason: str) -> None:
        """Append the entry of an answer the gateway refused (``status``, ``reason``)."""
        a = answer
        await self.store.add_audit(
            answer_entry(
                a.reg, a.row, a.caller, a.payload, status=status, action="refused", reason=reason
            )
        )

    def at_deadline(
        self,
        reg: Registration,
        row: PromptRow,
        *,
        action: str,
        display: str,
        status: int,
        reason: str,
        payload: Any = None,
        responder: str | None = None,
        reply: GatewayReply | None = None,
    ) -> AuditEntry:
        """The entry of what a registration's deadline policy did (``action``:
        ``escalated``, ``forwarded``, ``cancelled``, ``failed``...; ``display``: the
        name shown, e.g. "default at deadline"), for the store to append with the
        action's end."""
        return AuditEntry(
            at=time.time(),
            reg_id=reg.id,
            task_id=reg.task_id,
            agent_url=reg.agent_url,
            prompt_id=row.prompt_id,
            responder=responder,
            display=display,
            action=action,
            status=status,
            reason=reason,
            payload_sha256=sha256_of(payload),
            schema_sha256=sha256_of(row.envelope.get("response_schema")),
            responders=[] if responder is None else [responder],
            agent_reply=None if reply is None else _agent_reply(reply),
        )

    async def settled(
        self, reg: Registration, row: PromptRow, fwd: Forward, reply: GatewayReply
    ) -> None:
        """Append the entry of a forward the gateway ended by itself (:func:`forward_entry`)."""
        await self.store.add_audit(forward_entry(reg, row, fwd, reply))


def json_lines(entries: Iterable[AuditEntry]) -> str:
    """The entries as JSON lines (each ends with a newline)."""
    return "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in entries)
