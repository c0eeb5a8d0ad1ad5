"""A registration's deadline policy carried out, once across replicas and restarts.

What each policy does is :mod:`hitl_nb.gateway._deadline`'s docstring; here is how.
Every action (an escalation, the act of ``default`` or ``cancel`` at the deadline) is
claimed in the store before it is done (a ``deadline_actions`` row, in a transaction:
:meth:`~hitl_nb.gateway._deadline_store.DeadlineRecords.claim`), as an answer's forward
is. Of two replicas whose timers both run, one acts; an action claimed by a replica
that died before finishing it is adopted by another at its next round
(:meth:`DeadlineDesk.round`), and by the same database's next process after a
restart; a prompt whose deadline passed while no gateway ran is found by the first
round after the start. Each action is done so that doing it again does nothing twice:

- ``escalate``: the notes (outbox keys of their own: written twice, kept once) and the
  audit entry are written in the transaction that marks the action done;
- ``default``: the answer goes through the forward path (a ``forwards`` row claimed
  first, :func:`hitl_nb.gateway._forward.send`, a forward in doubt settled as any
  other); adopted, the action finds its forward and leaves it to that path;
- ``cancel``: A2A ``CancelTask`` with the shared :class:`~hitl_nb._backoff.Backoff`
  between tries; a task found cancelled already counts as cancelled.

Every outcome lands in the audit trail (responder ``deadline default`` for a default
answer); an agent that refuses or cannot be reached is an entry ``failed``, never a
crash, and the prompt then closes as with ``remind``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from hitl_nb._backoff import Backoff
from hitl_nb._json import dumps_compact
from hitl_nb.a2a import TaskState
from hitl_nb.errors import AgentNotAllowed, HitlError
from hitl_nb.gateway._agents import AgentPool
from hitl_nb.gateway._audit import Audit
from hitl_nb.gateway._deadline import DeadlinePolicy, answer_issues
from hitl_nb.gateway._deadline_store import ActionRow
from hitl_nb.gateway._forward import Tell, conclude, send
from hitl_nb.gateway._notify import Notifier
from hitl_nb.gateway._outbox import write_notes
from hitl_nb.gateway._sql import Statement
from hitl_nb.gateway._store import (
    Forward,
    GatewayStore,
    PromptRow,
    Registration,
    StoreUnavailable,
)
from hitl_nb.gateway._traces import GatewayTraces
from hitl_nb.gateway._wall_timers import WallTimers
from hitl_nb.notify import person, team
from hitl_nb.spec import PromptEnvelope

__all__ = ["DEFAULT_RESPONDER", "DeadlineDesk", "DeskHooks"]

log = logging.getLogger("hitl_nb.gateway")

#: The pauses between CancelTask tries (0.5 s, doubling, at most 10 s).
_CANCEL_BACKOFF = Backoff(0.5, 10.0)
#: The responder a default answer's forward and audit entry name.
DEFAULT_RESPONDER = "deadline default"


@dataclass(frozen=True)
class DeskHooks:
    """What the desk asks of its gateway: ``envelope`` (a stored prompt's parsed
    envelope), ``tell`` (the notes that tell a forward's end), ``settle`` (a forward in
    doubt, settled in the background), ``close`` (the prompt closed as ``remind``
    does; its span's outcome, ``expired`` unless said), ``changed`` (the feed told a
    registration's prompts changed), ``wake`` (the notifications' sender woken),
    ``notifier`` (None: no notifications), ``traces`` (the gateway's spans)."""

    envelope: Callable[[PromptRow], PromptEnvelope]
    tell: Callable[[Registration, PromptRow], Tell | None]
    settle: Callable[[Forward], None]
    close: Callable[..., Awaitable[None]]
    changed: Callable[[str], None]
    wake: Callable[[], None]
    notifier: Callable[[], Notifier | None]
    traces: GatewayTraces


class DeadlineDesk:
    """Carries out registrations' deadline policies (see the module docstring).
    ``cancel_tries`` CancelTask requests at most, ``cancel_backoff`` apart."""

    def __init__(
        self,
        store: GatewayStore,
        pool: AgentPool,
        trail: Audit,
        replica: str,
        hooks: DeskHooks,
        spawn: Callable[[Coroutine[Any, Any, Any]], None],
        *,
        cancel_tries: int = 5,
        cancel_backoff: Backoff = _CANCEL_BACKOFF,
    ) -> None:
        self.store = store
        self.pool = pool
        self.trail = trail
        self.replica = replica
        self.hooks = hooks
        self._spawn = spawn
        self.cancel_tries = cancel_tries
        self.cancel_backoff = cancel_backoff
        self.timers = WallTimers(spawn)
        #: Actions this process is firing now (not to be adopted twice).
        self._busy: set[tuple[str, str, str]] = set()

    # -- timing ----------------------------------------------------------------------

    def arm(self, reg_id: str, prompt_id: str, action: str, at: float) -> None:
        """Fire ``action`` of this prompt at ``at`` (wall clock)."""
        self.timers.arm(
            (reg_id, prompt_id, action), at, lambda: self.fire(reg_id, prompt_id, action)
        )

    async def round(self, horizon: float) -> None:
        """A replica round's part: arm every action due before ``horizon`` not fired
        yet; adopt the actions claimed by replicas that stopped (and this one's own
        that nobody works on) and fire them."""
        for due in await self.store.deadlines.due(horizon):
            self.arm(due.reg_id, due.prompt_id, due.action, due.at)
        for row in await self.store.deadlines.adopt(self.replica):
            if (row.reg_id, row.prompt_id, row.action) not in self._busy:
                self._spawn(self.fire(row.reg_id, row.prompt_id, row.action, adopted=row))

    async def seen(self, reg: Registration, row: PromptRow) -> None:
        """A prompt seen for the first time: its escalation timed; a default answer
        checked against its form (one that does not fit is audited now, and at the
        deadline the prompt closes as with ``remind``)."""
        policy = await self.store.deadlines.policy(reg.id)
        if policy is None or row.deadline is None:
            return
        if policy.policy == "escalate":
            self.arm(reg.id, row.prompt_id, "escalate", row.deadline - policy.before)
        elif policy.policy == "default":
            why = answer_issues(self.hooks.envelope(row).validate, policy.answer)
            if why is not None:
                entry = self.trail.at_deadline(
                    reg,
                    row,
                    action="refused",
                    display="default at deadline",
                    status=422,
                    reason=f"{why}; at the deadline the prompt closes instead",
                    payload=policy.answer,
                    responder=DEFAULT_RESPONDER,
                )
                await self.store.add_audit(entry)

    # -- firing ----------------------------------------------------------------------

    async def fire(
        self, reg_id: str, prompt_id: str, action: str, *, adopted: ActionRow | None = None
    ) -> None:
        """Claim and do one action (``adopted``: claimed already, by this replica or
        one whose heartbeat stopped); nothing when another claimed it or it is moot
        (the prompt answered, or closed by the agent)."""
        key = (reg_id, prompt_id, action)
        if key in self._busy:
            return
        self._busy.add(key)
        try:
            reg = await self.store.registration(reg_id)
            row, fwd = await self.store.prompt_and_forward(reg_id, prompt_id)
            policy = await self.store.deadlines.policy(reg_id)
            if reg is None or row is None or policy is None:
                return
            if adopted is None:
                if not _still_due(row, fwd, action):
                    return
                if not await self.store.deadlines.claim(reg_id, prompt_id, action, self.replica):
                    return  # another replica (or an earlier timer here) fires it
            if action == "escalate":
                await self._escalate(reg, row, policy)
            elif policy.policy == "default":
                await self._default(reg, row, policy)
            elif policy.policy == "cancel":
                await self._cancel(reg, row)
        except StoreUnavailable as exc:
            # Claimed and not done: this replica's next round adopts it again.
            log.warning(
                "hitl-nb gateway: the deadline's %s of %s waits: %s", action, prompt_id, exc
            )
        finally:
            self._busy.discard(key)

    async def _finish(
        self,
        reg: Registration,
        row: PromptRow,
        action: str,
        state: str,
        detail: str,
        entry_args: dict[str, Any],
        notes_steps: Sequence[Statement] = (),
    ) -> bool:
        entry = self.trail.at_deadline(reg, row, reason=detail, **entry_args)
        steps = [*notes_steps, *self.store.appending(entry)]
        return await self.store.deadlines.finish(
            reg.id, row.prompt_id, action, state, detail, steps
        )

    async def _escalate(self, reg: Registration, row: PromptRow, policy: DeadlinePolicy) -> None:
        notifier = self.hooks.notifier()
        notes = [] if notifier is None else notifier.escalated(reg, row, policy.to, policy.channel)
        told, missed = _audience(policy, {n.recipient for n in notes})
        if notes:
            detail = f"told {told} that the prompt still waits (who may answer is unchanged)"
            if missed:
                detail += f"; no notification reaches {missed}"
            state, status = "done", 200
        else:
            detail = f"nobody could be told ({missed}): no notification reaches them"
            state, status = "failed", 503
        args = {
            "action": "escalated" if notes else "failed",
            "display": "escalation before deadline",
            "status": status,
        }
        if await self._finish(reg, row, "escalate", state, detail, args, write_notes(notes)):
            self.hooks.wake()
            log.info("hitl-nb gateway: prompt %s escalated: %s", row.prompt_id, detail)

    async def _default(self, reg: Registration, row: PromptRow, policy: DeadlinePolicy) -> None:
        answer = policy.answer
        args: dict[str, Any] = {
            "display": "default at deadline",
            "payload": answer,
            "responder": DEFAULT_RESPONDER,
        }
        why = answer_issues(self.hooks.envelope(row).validate, answer)
        if why is not None:
            detail = f"default at deadline not sent: {why}"
            await self._finish(
                reg, row, "deadline", "failed", detail, {**args, "action": "failed", "status": 422}
            )
            await self.hooks.close(reg.id, row.prompt_id)
            return
        fwd = await self.store.begin_forward(
            reg.id,
            row.prompt_id,
            str(uuid.uuid4()),
            dumps_compact(answer),
            [DEFAULT_RESPONDER],
            owner=self.replica,
        )
        if fwd is None:  # a person's answer was first, or this action's own before a crash
            had = await self.store.forward(reg.id, row.prompt_id)
            ours = had is not None and had.responders == [DEFAULT_RESPONDER]
            detail = (
                "default at deadline: its forward was under way already (the forward path ends it)"
                if ours
                else "default at deadline not sent: the prompt was answered first"
            )
            await self._finish(
                reg, row, "deadline", "done", detail, {**args, "action": "closed", "status": 409}
            )
            return
        traces = self.hooks.traces
        parent = await traces.parent(reg, row)
        with traces.forward(parent, reg, row, fwd, settling=False) as span:
            ending = await send(self.pool.client(reg.agent_url), fwd, reg.task_id, row.context_id)
            reply = ending.reply
            span.ended("in_doubt" if ending.in_doubt else str(reply.body.get("status")))
        message = str(reply.body.get("message") or "")
        if ending.in_doubt:
            self._spawn_settle(fwd)
            detail = f"default at deadline sent; {message}"
            await self._finish(
                reg,
                row,
                "deadline",
                "done",
                detail,
                {**args, "action": "forwarding", "status": 202, "reply": reply},
            )
            return
        ok = reply.body.get("status") == "forwarded"
        detail = f"default at deadline {'accepted' if ok else 'refused'}: {message}"
        entry = self.trail.at_deadline(
            reg,
            row,
            action="forwarded" if ok else "failed",
            status=reply.status,
            reason=detail,
            reply=reply,
            **args,
        )
        ended = await conclude(self.store, fwd, ending, self.hooks.tell(reg, row), entry)
        await traces.concluded(reg, row, ending.closed, ended.ended_here, default=True)
        await self.store.deadlines.finish(
            reg.id, row.prompt_id, "deadline", "done" if ok else "failed", detail
        )
        self.hooks.wake()
        self.hooks.changed(reg.id)
        if not ok:
            await self.hooks.close(reg.id, row.prompt_id)

    def _spawn_settle(self, fwd: Forward) -> None:
        self.hooks.settle(fwd)

    async def _cancel(self, reg: Registration, row: PromptRow) -> None:
        client = self.pool.client(reg.agent_url)
        error: Exception | None = None
        for attempt in range(1, self.cancel_tries + 1):
            try:
                task = await client.cancel(reg.task_id)
            except (HitlError, AgentNotAllowed) as exc:
                error = exc
                log.info(
                    "hitl-nb gateway: cancelling task %s (try %d): %s", reg.task_id, attempt, exc
                )
            else:
                state = task.status.state.value
                detail = f"the task was cancelled at the prompt's deadline (the agent says {state})"
                await self._cancelled(reg, row, "done", detail, 200, "cancelled")
                return
            if attempt < self.cancel_tries:
                await asyncio.sleep(self.cancel_backoff.delay(attempt))
        if await self._already_cancelled(reg):
            detail = "the task had been cancelled already (a cancel sent before a restart)"
            await self._cancelled(reg, row, "done", detail, 200, "cancelled")
            return
        detail = (
            f"the task could not be cancelled at the prompt's deadline "
            f"({self.cancel_tries} tries): {error}"
        )
        await self._cancelled(reg, row, "failed", detail, 502, "failed")

    async def _already_cancelled(self, reg: Registration) -> bool:
        try:
            task = await self.pool.client(reg.agent_url).get_task(reg.task_id)
        except (HitlError, AgentNotAllowed):
            return False
        return task.status.state is TaskState.CANCELED

    async def _cancelled(
        self, reg: Registration, row: PromptRow, state: str, detail: str, status: int, action: str
    ) -> None:
        args = {"action": action, "display": "cancel at deadline", "status": status}
        await self._finish(reg, row, "deadline", state, detail, args)
        log.info("hitl-nb gateway: task %s: %s", reg.task_id, detail)
        await self.hooks.close(reg.id, row.prompt_id, "cancelled" if state == "done" else "expired")


def _audience(policy: DeadlinePolicy, reached: set[str]) -> tuple[str, str]:
    """Whom an escalation's notes reach, and whom it names that none reaches, in words
    (a person without a way to be told, a team channel the administrator removed)."""
    named = [(person(n), n) for n in policy.to]
    if policy.channel is not None:
        named.append((team(policy.channel), f"team channel {policy.channel}"))
    told = [words for key, words in named if key in reached]
    missed = [words for key, words in named if key not in reached]
    return ", ".join(told), ", ".join(missed)


def _still_due(row: PromptRow, fwd: Forward | None, action: str) -> bool:
    """Is the action still to be done: nobody answered, the agent did not close the
    prompt (at the deadline, one a late answer closed as expired still is)."""
    if fwd is not None and fwd.state != "failed":
        return False
    if action == "escalate":
        return row.closed is None
    return fwd is None and row.closed in (None, "expired")
