"""The responder gateway: who may answer (S-3), consensus, deadlines (S-4), forwarding.

The orchestrator's duties, done where the identity is: the Jupyter server knows which
user sent a request (its IdentityProvider); a kernel only knows what it is told.

- :meth:`Gateway.register` watches a task (agent URL + task id);
- :meth:`Gateway.prompts` lists its prompts with their policy and deadline;
- :meth:`Gateway.answer` takes one user's answer: ``specific:<id>`` is checked against
  the Jupyter user name, ``consensus:N`` waits for N distinct users whose payloads are
  equal as canonical JSON, then exactly one answer is forwarded; unknown patterns are
  ignored (§Responder policy, via :class:`hitl_nb.policy.ResponderGate`).

The decision and the write-ahead claim of the forward happen with no ``await`` between
them, on the server's single event loop, and the claim is a primary key in SQLite: of
any number of racing submissions, one forwards.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

from hitl_nb._json import dumps_compact
from hitl_nb.a2a import Task
from hitl_nb.client import PromptEvent, prompt_of
from hitl_nb.errors import (
    A2AError,
    AgentNotAllowed,
    HitlError,
    MalformedPrompt,
    TaskNotFound,
    TransportError,
)
from hitl_nb.policy import ResponderGate
from hitl_nb.server._agents import AgentPool, check_agent_url
from hitl_nb.server._config import HitlServer
from hitl_nb.server._forward import Outcome, deliver, settle
from hitl_nb.server._push import PushDesk
from hitl_nb.server._store import Forward, GatewayStore, PromptRow, Registration
from hitl_nb.server._views import Caller, inbox_order, prompt_view, refusal, responder_gate
from hitl_nb.server._watcher import Watchers
from hitl_nb.spec import PromptEnvelope

__all__ = ["Caller", "Gateway", "GatewayError"]

log = logging.getLogger("hitl_nb.server")

MAX_TASK_ID = 256


class GatewayError(Exception):
    """A request the gateway refuses: ``status`` (HTTP) and a plain-language message."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


class Gateway:
    """The gateway's logic, on the server's event loop; state in a :class:`GatewayStore`."""

    def __init__(self, store: GatewayStore, pool: AgentPool, config: HitlServer) -> None:
        self.store = store
        self.pool = pool
        self.config = config
        self._timers: dict[tuple[str, str], asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._envelopes: dict[tuple[str, str], PromptEnvelope] = {}
        #: Push notifications: secrets, configuring agents, receiving (see ``_push.py``).
        self.push = PushDesk(
            store.connection, pool, store.registration, self._see, self._push_url,
            max_bytes=config.max_push_bytes,
        )  # fmt: skip
        #: The receiver's URL for a registration id (set by the extension; None: no push).
        self.push_url: Callable[[str], str | None] | None = None
        self.watchers = Watchers(
            self._refresh_for_watch,
            pool.client,
            poll_interval=config.poll_interval,
            max_streams=config.max_streams,
            arrange_push=self.push.arrange if config.push else None,
        )

    def _push_url(self, reg_id: str) -> str | None:
        return self.push_url(reg_id) if self.push_url is not None else None

    # -- life ------------------------------------------------------------------------

    def start(self) -> None:
        """Arm the deadline timers of open prompts, settle forwards left in doubt, and
        watch every registered task again."""
        for row in self.store.open_prompts():
            self._arm(row)
        for fwd in self.store.unsettled_forwards():
            self._spawn(self._settle(fwd))
        if self.config.watch:
            for reg in self.store.registrations():
                self.watchers.watch(reg)

    async def close(self) -> None:
        """Stop timers and background work; close connections and the store."""
        for handle in self._timers.values():
            handle.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.watchers.close()
        await self.pool.aclose()
        # A closed transport lets go of its socket in a callback on the next loop turns:
        # give them those turns, so nothing is left for a loop that stops right after.
        for _ in range(3):
            await asyncio.sleep(0)
        self.store.close()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _settle(self, fwd: Forward) -> None:
        reg = self.store.registration(fwd.reg_id)
        row = self.store.prompt(fwd.reg_id, fwd.prompt_id)
        if reg is None or row is None:
            return
        client = self.pool.client(reg.agent_url)
        outcome = await settle(self.store, client, fwd, reg.task_id, row.context_id)
        if outcome is None:
            log.warning("hitl-nb gateway: answer to %s still in doubt", fwd.prompt_id)

    # -- deadlines (S-4: the orchestrator keeps its own timer) ----------------------

    def _arm(self, row: PromptRow) -> None:
        key = (row.reg_id, row.prompt_id)
        if row.deadline is None or row.closed is not None or key in self._timers:
            return
        delay = max(0.0, row.deadline - time.time())
        loop = asyncio.get_running_loop()
        self._timers[key] = loop.call_later(delay, self._expire, row.reg_id, row.prompt_id)

    def _expire(self, reg_id: str, prompt_id: str) -> None:
        self._timers.pop((reg_id, prompt_id), None)
        if self.store.forward(reg_id, prompt_id) is not None:
            return  # an answer is on its way or delivered
        if self.config.accept_after_deadline:
            log.info("hitl-nb gateway: deadline of prompt %s passed (still open)", prompt_id)
            return
        if self.store.close_prompt(reg_id, prompt_id, "expired"):
            log.info("hitl-nb gateway: prompt %s closed at its deadline", prompt_id)

    # -- registrations ---------------------------------------------------------------

    async def register(
        self, caller: Caller, agent_url: Any, task_id: Any
    ) -> tuple[bool, dict[str, Any]]:
        """Watch a task. Returns (created, registration with its prompts)."""
        try:
            url = check_agent_url(agent_url, self.config.allowed_agent_hosts)
        except AgentNotAllowed as exc:
            raise GatewayError(403 if isinstance(agent_url, str) else 400, str(exc)) from None
        if not isinstance(task_id, str) or not task_id.strip() or len(task_id) > MAX_TASK_ID:
            raise GatewayError(
                400, f"task_id must be a non-empty string of at most {MAX_TASK_ID} characters"
            )
        existing = self.store.find_registration(url, task_id)
        if existing is not None:
            await self._refresh(existing, quiet=True)
            return False, self._registration_view(existing, caller)
        if self.store.count_registrations() >= self.config.max_registrations:
            limit = self.config.max_registrations
            raise GatewayError(429, f"this server already watches {limit} tasks (its limit)")
        task = await self._get_task(url, task_id)
        reg = self.store.add_registration(
            Registration(uuid.uuid4().hex, url, task_id, caller.display, time.time())
        )
        self._see(reg, task)
        log.info("hitl-nb gateway: %s registered task %s at %s", caller.display, task_id, url)
        if self.config.watch and not task.status.state.is_terminal:
            self.watchers.watch(reg)
        return True, self._registration_view(reg, caller)

    def registrations(self) -> list[dict[str, Any]]:
        """Every registration."""
        return [r.to_json() for r in self.store.registrations()]

    def _registration(self, reg_id: str) -> Registration:
        reg = self.store.registration(reg_id)
        if reg is None:
            raise GatewayError(404, f"no registered task with id {reg_id!r}")
        return reg

    async def registration(self, reg_id: str, caller: Caller) -> dict[str, Any]:
        """One registration with its prompts (fresh from the agent when it answers)."""
        reg = self._registration(reg_id)
        note = await self._refresh(reg, quiet=True)
        view = self._registration_view(reg, caller)
        if note:
            view["agent_error"] = note
        return view

    def _registration_view(self, reg: Registration, caller: Caller) -> dict[str, Any]:
        return {**reg.to_json(), "prompts": [self._prompt_view(reg, row, caller)
                                             for row in self.store.prompts(reg.id)]}  # fmt: skip

    async def _get_task(self, url: str, task_id: str) -> Task:
        try:
            return await self.pool.client(url).get_task(task_id)
        except AgentNotAllowed as exc:
            raise GatewayError(403, str(exc)) from None
        except TaskNotFound:
            raise GatewayError(404, f"the agent at {url} has no task {task_id!r}") from None
        except (TransportError, A2AError, HitlError) as exc:
            raise GatewayError(502, f"could not read task {task_id!r} from {url}: {exc}") from None

    async def _refresh_for_watch(self, reg: Registration) -> Task | None:
        """For the watchers: read the task, record its prompts; None when unreachable."""
        try:
            task = await self._get_task(reg.agent_url, reg.task_id)
        except GatewayError as exc:
            log.info("hitl-nb gateway: task %s: %s", reg.task_id, exc.message)
            return None
        self._see(reg, task)
        return task

    async def _refresh(self, reg: Registration, *, quiet: bool = False) -> str | None:
        """Read the task again and record any new prompt. The error text when quiet."""
        try:
            task = await self._get_task(reg.agent_url, reg.task_id)
        except GatewayError as exc:
            if not quiet:
                raise
            return exc.message
        self._see(reg, task)
        return None

    def _see(self, reg: Registration, task: Task) -> None:
        if not self.push.fresh(reg.id, task.status):
            return  # an older sighting than one recorded (a read crossed a push)
        found = prompt_of(task)
        open_id = None
        if isinstance(found, PromptEvent):
            open_id = found.prompt_id
            deadline = found.envelope.deadline_at
            row = self.store.see_prompt(
                reg.id, found.prompt_id, found.context_id, found.envelope.to_json(),
                deadline.timestamp() if deadline else None,
            )  # fmt: skip
            self._arm(row)
        for row in self.store.prompts(reg.id):
            if row.closed is None and row.prompt_id != open_id:
                fwd = self.store.forward(reg.id, row.prompt_id)
                if fwd is None or fwd.state != "forwarding":
                    self.store.close_prompt(reg.id, row.prompt_id, "closed by the agent")

    # -- prompts ---------------------------------------------------------------------

    def _envelope(self, row: PromptRow) -> PromptEnvelope:
        key = (row.reg_id, row.prompt_id)
        env = self._envelopes.get(key)
        if env is None:
            try:
                env = PromptEnvelope.from_json(row.envelope, mode="orchestrator")
            except MalformedPrompt as exc:  # it was checked when seen; be safe anyway
                raise GatewayError(502, f"the stored prompt is malformed: {exc}") from None
            self._envelopes[key] = env
        return env

    def _prompt_view(self, reg: Registration, row: PromptRow, caller: Caller) -> dict[str, Any]:
        return prompt_view(self.store, reg, row, caller, time.time())

    async def prompts(self, reg_id: str, caller: Caller) -> dict[str, Any]:
        """The registration's prompts, refreshed from the agent when it answers."""
        return await self.registration(reg_id, caller)

    def inbox(
        self,
        caller: Caller,
        *,
        agent: str | None = None,
        responder: str | None = None,
        due_within: float | None = None,
        limit: int = 1000,
    ) -> dict[str, Any]:
        """Open prompts across every registered task, soonest deadline first.

        Read from the store the watchers keep current (no request to any agent).
        ``agent``: only this agent URL; ``responder``: only prompts that user may
        answer (``"me"``: the caller); ``due_within``: only deadlines at most that many
        seconds away; at most ``limit`` prompts (``total`` counts them all).
        """
        regs = {r.id: r for r in self.store.registrations()}
        now = time.time()
        who = caller if responder in (None, "me") else Caller(responder, str(responder))
        rows = []
        for row in self.store.open_prompts():
            reg = regs.get(row.reg_id)
            if reg is None or (agent is not None and reg.agent_url != agent):
                continue
            if due_within is not None and (row.deadline is None or row.deadline - now > due_within):
                continue
            if responder is not None and refusal(responder_gate(row.envelope), who) is not None:
                continue
            rows.append(row)
        rows.sort(key=inbox_order)
        forwards, ballots = self.store.all_forwards(), self.store.all_ballots()
        views = []
        for r in rows[:limit]:
            key = (r.reg_id, r.prompt_id)
            known = (forwards.get(key), ballots.get(key, []))
            views.append(prompt_view(self.store, regs[r.reg_id], r, caller, now, known))
        return {"prompts": views, "total": len(rows)}

    # -- answers ---------------------------------------------------------------------

    async def answer(self, reg_id: str, prompt_id: str, caller: Caller, payload: Any) -> Outcome:
        """One user's answer: refuse, hold (consensus), or forward exactly once."""
        reg = self._registration(reg_id)
        row = self.store.prompt(reg.id, prompt_id)
        if row is None:
            await self._refresh(reg)
            row = self.store.prompt(reg.id, prompt_id)
            if row is None:
                raise GatewayError(404, f"task {reg.task_id!r} has no prompt {prompt_id!r}")
        env = self._envelope(row)
        gate = ResponderGate(env.responders)
        reason = refusal(gate, caller)
        if reason is not None:
            raise GatewayError(403, reason)
        if not isinstance(payload, dict):
            raise GatewayError(400, "payload must be a JSON object (the answer to the prompt)")
        issues = env.validate(payload)
        if issues:
            raise GatewayError(
                422, "the answer does not fit the prompt's form; nothing was sent",
                validation_errors=[i.to_json() for i in issues],
            )  # fmt: skip
        # From here to the claim of the forward: no await (one decision at a time).
        fwd = self.store.forward(reg.id, prompt_id)
        if fwd is not None and fwd.state in ("forwarding", "forwarded"):
            raise GatewayError(409, "this prompt was already answered through this server",
                               state=fwd.state)  # fmt: skip
        fresh = self.store.prompt(reg.id, prompt_id)
        assert fresh is not None
        if fresh.closed is not None or self._past_deadline(fresh):
            if fresh.closed == "expired" or self._past_deadline(fresh):
                self.store.close_prompt(reg.id, prompt_id, "expired")
                raise GatewayError(410, f"the prompt's deadline ({env.deadline}) has passed; "
                                   "nothing was sent")  # fmt: skip
            raise GatewayError(409, "this prompt is closed (the agent no longer asks it)")
        canonical = dumps_compact(payload)
        needed = gate.needed
        responder = caller.name if caller.name is not None else caller.display
        if needed > 1:
            self.store.put_ballot(reg.id, prompt_id, responder, canonical)
            ballots = self.store.ballots(reg.id, prompt_id)
            agreeing = [b.responder for b in ballots if b.payload == canonical]
            tally = Counter(b.payload for b in ballots)
            if len(agreeing) < needed:
                disagree = len(tally) > 1
                message = f"{len(agreeing)} of {needed} answers agree so far"
                if disagree:
                    message += (f"; the {len(ballots)} answers given differ ({len(tally)} "
                                "different answers), so nothing is forwarded until "
                                f"{needed} agree")  # fmt: skip
                return Outcome(202, {
                    "status": "collecting", "prompt_id": prompt_id, "agreeing": len(agreeing),
                    "needed": needed, "answers": len(ballots), "disagreement": disagree,
                    "message": message,
                })  # fmt: skip
            responders = agreeing[:needed]
        else:
            responders = [responder]
        message_id = str(uuid.uuid4())
        if not self.store.begin_forward(reg.id, prompt_id, message_id, canonical, responders):
            raise GatewayError(409, "this prompt was already answered through this server")
        claimed = self.store.forward(reg.id, prompt_id)
        assert claimed is not None
        client = self.pool.client(reg.agent_url)
        outcome = await deliver(self.store, client, claimed, reg.task_id, row.context_id)
        if outcome.status == 202:
            self._spawn(self._settle(claimed))
        self.watchers.poke(reg.id)  # the task moves on: its next prompt comes soon
        return outcome

    def _past_deadline(self, row: PromptRow) -> bool:
        return (
            not self.config.accept_after_deadline
            and row.deadline is not None
            and time.time() >= row.deadline
        )
