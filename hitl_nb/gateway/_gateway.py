"""The responder gateway: who may answer (S-3), consensus, deadlines (S-4), forwarding.

The orchestrator's duties, done where the identity is: the host (a Jupyter server, or
the hub service) knows which user sent a request; a kernel only knows what it is told.

- :meth:`Gateway.register` watches a task (agent URL + task id);
- :meth:`Gateway.registration` shows its prompts with their policy and deadline;
- :meth:`Gateway.answer` takes one user's answer: ``specific:<id>`` is checked against
  the user name the host vouches for, ``consensus:N`` waits for N distinct users whose
  payloads are equal as canonical JSON, then exactly one answer is forwarded; unknown
  patterns are ignored (§Responder policy, via :class:`hitl_nb.policy.ResponderGate`);
- every answer, and what became of it, goes into the audit trail (:meth:`Gateway.audit`);
- what changes about open prompts is told to the feed's followers (:attr:`Gateway.feed`,
  :mod:`hitl_nb.gateway._feed`: JupyterLab's prompts panel);
- with a :class:`~hitl_nb.gateway._notify.Notifier`, people are told: the notes a prompt
  opening, its forward's end or its expiry cause are written in the transaction that
  records it, and sent by the notifier's sender in the background (docs/notify.md).

At most one forward per prompt: the claim is a unique row in the store
(:meth:`~hitl_nb.gateway.GatewayStore.begin_forward`), written before anything is sent,
so of any number of racing submissions, on one loop or in several processes sharing the
database, exactly one forwards. A consensus ballot is cast and the prompt's ballots read
in one store transaction, so each answer is counted (:func:`hitl_nb.policy.tally`) with
every answer given before it.

Several gateway processes (replicas) on one database act as one: each is a replica with
its own id; which of them watches a task, takes over a forward another left in doubt,
and times every deadline is :mod:`hitl_nb.gateway._replicas`. What a replica keeps in
memory is a cache of the database or a timer any replica also arms: envelopes parsed
once (a stored envelope never changes), deadline timers, push sightings.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from prometheus_client import CollectorRegistry

from hitl_nb._json import dumps_compact
from hitl_nb._stopping import stop_tasks
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
from hitl_nb.gateway._agents import AgentPool, check_agent_url
from hitl_nb.gateway._audit import Answer, Audit
from hitl_nb.gateway._deadline import DeadlinePolicy, PolicyRefused, answer_issues, parse_policy
from hitl_nb.gateway._deadline_desk import DEFAULT_RESPONDER, DeadlineDesk, DeskHooks
from hitl_nb.gateway._feed import FeedScope, PromptFeed
from hitl_nb.gateway._forward import GatewayReply, Tell, conclude, send, settle
from hitl_nb.gateway._metrics import GatewayMetrics, Readings, outcome_of
from hitl_nb.gateway._notify import Notifier
from hitl_nb.gateway._push import PushDesk, Refused
from hitl_nb.gateway._replicas import Duties
from hitl_nb.gateway._schema import audience
from hitl_nb.gateway._settings import GatewaySettings
from hitl_nb.gateway._store import (
    AuditEntry,
    Ballot,
    Forward,
    GatewayStore,
    OpenQuery,
    PromptRow,
    Registration,
    StoreUnavailable,
    unstorable,
)
from hitl_nb.gateway._traces import GatewayTraces
from hitl_nb.gateway._views import (
    Caller,
    PromptItem,
    PromptState,
    feed_item,
    prompt_view,
    refusal,
    shown_to,
    two_person_refusal,
)
from hitl_nb.gateway._wall_timers import WallTimers
from hitl_nb.gateway._watcher import Watchers
from hitl_nb.notify import Note
from hitl_nb.policy import ResponderGate, tally
from hitl_nb.spec import PromptEnvelope

__all__ = ["Gateway", "GatewayError"]

log = logging.getLogger("hitl_nb.gateway")

MAX_TASK_ID = 256


class GatewayError(Exception):
    """A request the gateway refuses: ``status`` (HTTP) and a plain-language message."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


class Gateway:
    """The gateway's logic, on the host's event loop; state in a :class:`GatewayStore`."""

    def __init__(
        self,
        store: GatewayStore,
        pool: AgentPool,
        settings: GatewaySettings,
        *,
        replica: str | None = None,
        notify: Callable[[Gateway], Notifier] | None = None,
        metrics: bool = True,
    ) -> None:
        self.store = store
        #: The audit trail's entries, made in one place (:class:`~hitl_nb.gateway._audit.Audit`).
        self.trail = Audit(store)
        self.pool = pool
        self.settings = settings
        #: This process's name among the replicas on its database (random per start).
        self.replica = replica or uuid.uuid4().hex
        #: Notifications (None: off); made by the host's ``notify`` from this gateway.
        self.notify = notify(self) if notify is not None else None
        #: Its metrics (:mod:`hitl_nb.gateway._metrics`), on a registry of its own
        #: (``metrics=False``: nothing is counted).
        self.metrics = GatewayMetrics(CollectorRegistry() if metrics else None, self._readings)
        #: Its traces (:mod:`hitl_nb.gateway._traces`): nothing without OpenTelemetry's
        #: API or with the setting ``traces`` off.
        self.traces = GatewayTraces(settings.traces, self._policy_name)
        if self.notify is not None:
            self.notify.delivered = self._delivered
        store.notes_on = self.notify is not None
        self._timers = WallTimers(self._spawn)
        #: Forwards this process is sending or settling now (not to be adopted twice).
        self._in_flight: set[tuple[str, str]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._envelopes: dict[tuple[str, str], PromptEnvelope] = {}
        #: Push notifications: secrets, configuring agents, receiving (see ``_push.py``).
        self.push = PushDesk(
            store, pool, self._see_pushed, self._push_url, max_bytes=settings.max_push_bytes
        )
        #: The receiver's URL for a registration id (set by the host; None: no push).
        self.push_url: Callable[[str], str | None] | None = None
        self.watchers = Watchers(
            self._refresh_for_watch,
            pool.client,
            poll_interval=settings.poll_interval,
            max_streams=settings.max_streams,
            arrange_push=self.push.arrange if settings.push else None,
            ended=self._ended,
        )
        #: The open prompts each person may answer, followed (JupyterLab's panel). Another
        #: replica's changes are read at its next recheck.
        self.feed = PromptFeed(self._feed_listing, recheck=settings.lease_seconds)
        #: Registrations' deadline policies carried out (``_deadline_desk.py``).
        self.deadlines = DeadlineDesk(
            store,
            pool,
            self.trail,
            self.replica,
            DeskHooks(
                envelope=self._envelope,
                tell=self._tell,
                settle=lambda fwd: self._spawn(self._settle(fwd)),
                close=self._close_at_deadline,
                changed=self.feed.changed,
                wake=self._wake,
                notifier=lambda: self.notify,
                traces=self.traces,
            ),
            self._spawn,
        )
        self.duties = Duties(
            store,
            self.replica,
            settings.lease_seconds,
            watch=self._watch if settings.watch else None,
            unwatch=self.watchers.unwatch,
            settle=lambda fwd: self._spawn(self._settle(fwd)),
            arm=self._arm,
            actions=self.deadlines.round,
        )

    async def _readings(self) -> Readings:
        """What the metrics read from the store: open prompts, the outbox's depth."""
        depth, oldest = await self.store.outbox.depth()
        return await self.store.open_by_kind(), depth, oldest

    async def _policy_name(self, reg_id: str) -> str | None:
        """A registration's deadline policy's name, for its prompts' spans."""
        policy = await self.store.deadlines.policy(reg_id)
        return None if policy is None else policy.policy

    def _delivered(self, channel: str, result: str, notes: Sequence[Note]) -> None:
        """The sender handled a message (``notes`` among those it told): counted, and an
        event on the spans of the prompts it was about."""
        self.metrics.notified(channel, result)
        if self.traces.on:
            keys = [(n.facts.reg_id, n.facts.prompt_id) for n in notes]
            self.traces.notified(channel, result, keys)

    def _push_url(self, reg_id: str) -> str | None:
        return self.push_url(reg_id) if self.push_url is not None else None

    # -- life ------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the store (its schema brought up to date), then the first replica round:
        watch the tasks this replica leases, settle forwards left in doubt (this
        process's before a restart, or a stopped replica's), arm the deadlines due soon;
        then a round every ``lease_seconds / 3`` (:mod:`hitl_nb.gateway._replicas`)."""
        await self.store.open()
        await self.metrics.refresh()  # the gauges' first reading (and their loop)
        await self.duties.start()
        if self.notify is not None:
            self.notify.start()

    async def _watch(self, reg_id: str) -> None:
        if self.watchers.watching(reg_id):
            return
        reg = await self.store.registration(reg_id)
        if reg is not None:
            self.watchers.watch(reg)

    async def _ended(self, reg: Registration) -> None:
        await self.store.end_watch(reg.id)
        self.duties.held = self.duties.held - {reg.id}

    async def close(self) -> None:
        """Stop timers and background work; give back leases; close connections and
        the store. Each wait for background work to stop is bounded
        (:func:`~hitl_nb._stopping.stop_tasks`), so a close cannot hang."""
        await self.duties.stop()
        if self.notify is not None:
            await self.notify.stop()
        self._timers.cancel_all()
        self.deadlines.timers.cancel_all()
        self.traces.close()
        await stop_tasks(list(self._tasks), what="a gateway's background work")
        await self.watchers.close()
        await self.pool.aclose()
        # A closed transport lets go of its socket in a callback on the next loop turns:
        # give them those turns, so nothing is left for a loop that stops right after.
        for _ in range(3):
            await asyncio.sleep(0)
        await self.store.close()

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def background(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run ``coro`` in the background, stopped (at most) by :meth:`close`: work a
        host acknowledged before doing (a Slack click's answer)."""
        self._spawn(coro)

    async def _settle(self, fwd: Forward, *, taken: bool = False) -> None:
        """Find out what became of a forward in doubt (``taken``: the caller already
        marked it in flight)."""
        key = (fwd.reg_id, fwd.prompt_id)
        if not taken:
            if key in self._in_flight:
                return  # this process is sending or settling it now
            self._in_flight.add(key)
        try:
            reg = await self.store.registration(fwd.reg_id)
            row = await self.store.prompt(fwd.reg_id, fwd.prompt_id)
            if reg is None or row is None:
                return
            client = self.pool.client(reg.agent_url)
            parent = await self.traces.parent(reg, row)
            with self.traces.forward(parent, reg, row, fwd, settling=True) as span:
                ending = await settle(client, fwd, reg.task_id, row.context_id)
                span.ended("in_doubt" if ending is None else _result(ending.reply))
            if ending is None:
                log.warning("hitl-nb gateway: answer to %s still in doubt", fwd.prompt_id)
                return
            reply = await conclude(self.store, fwd, ending, self._tell(reg, row))
            await self.traces.concluded(
                reg,
                row,
                ending.closed,
                reply.ended_here,
                default=fwd.responders == [DEFAULT_RESPONDER],
            )
            self._wake()
            if not reply.ended_here:
                # Its owner was slow, not gone: it ended the forward, and its answer's
                # entry says so; one forward, one record of how it ended.
                log.info("hitl-nb gateway: answer to %s was settled by another", fwd.prompt_id)
                return
            self.metrics.forward_ended(str(reply.body.get("status")), row.first_seen)
            await self.trail.settled(reg, row, fwd, reply)
        except StoreUnavailable as exc:
            log.warning("hitl-nb gateway: settling %s waits: %s", fwd.prompt_id, exc)
        finally:
            self._in_flight.discard(key)
            self.feed.changed(fwd.reg_id)

    # -- notifications -------------------------------------------------------------

    def _tell(self, reg: Registration, row: PromptRow) -> Tell | None:
        """What tells ``row``'s registrant of its forward's end (None: nobody is told)."""
        notify = self.notify
        if notify is None:
            return None
        return lambda outcome, responders, detail: notify.outcome(
            reg, row, outcome, responders, detail
        )

    def _expiry(self, reg: Registration | None, row: PromptRow | None) -> list[Note]:
        if self.notify is None or reg is None or row is None:
            return []
        return self.notify.outcome(reg, row, "expired")

    def _wake(self) -> None:
        if self.notify is not None:
            self.notify.wake()

    # -- deadlines (S-4: the orchestrator keeps its own timer) ----------------------

    def _arm(self, row: PromptRow) -> None:
        """Time ``row``'s deadline: an absolute time, fired once the wall clock reaches
        it (:class:`~hitl_nb.gateway._wall_timers.WallTimers`: a clock set back delays
        it, one set forward fires it at the next round)."""
        if row.deadline is None or row.closed is not None:
            return
        reg_id, prompt_id = row.reg_id, row.prompt_id
        self._timers.arm((reg_id, prompt_id), row.deadline, lambda: self._expire(reg_id, prompt_id))

    async def _expire(self, reg_id: str, prompt_id: str) -> None:
        """The deadline passed: the registration's policy decides (spec §State
        Transitions, "INPUT_REQUIRED -- deadline elapsed --> orchestrator-decided").
        ``default`` and ``cancel`` act (:class:`~hitl_nb.gateway._deadline_desk.DeadlineDesk`);
        ``remind``, ``escalate`` and registrations older than policies close the prompt."""
        try:
            policy = await self.store.deadlines.policy(reg_id)
        except StoreUnavailable as exc:
            log.warning("hitl-nb gateway: the deadline of %s waits: %s", prompt_id, exc)
            return
        if policy is not None and policy.acts_at_deadline:
            await self.deadlines.fire(reg_id, prompt_id, "deadline")
        else:
            await self._close_at_deadline(reg_id, prompt_id)

    async def _close_at_deadline(
        self, reg_id: str, prompt_id: str, outcome: str = "expired"
    ) -> None:
        """Close the prompt as expired and tell the registrant (``remind``); its span's
        ``outcome``: ``cancelled`` where the task was cancelled at the deadline."""
        try:
            if await self.store.forward(reg_id, prompt_id) is not None:
                self.metrics.deadline("answered")
                self.traces.deadline(reg_id, prompt_id, "answered")
                return  # an answer is on its way or delivered
            if self.settings.accept_after_deadline:
                self.metrics.deadline("kept_open")
                self.traces.deadline(reg_id, prompt_id, "kept_open")
                log.info("hitl-nb gateway: deadline of prompt %s passed (still open)", prompt_id)
                return
            notes: list[Note] = []
            reg = row = None
            if self.notify is not None or self.traces.on:
                reg = await self.store.registration(reg_id)
                row = await self.store.prompt(reg_id, prompt_id)
                notes = self._expiry(reg, row)
            if await self.store.close_prompt(reg_id, prompt_id, "expired", notes):
                log.info("hitl-nb gateway: prompt %s closed at its deadline", prompt_id)
                self.metrics.deadline("closed")
                self.traces.deadline(reg_id, prompt_id, "closed")
                if reg is not None and row is not None:
                    await self.traces.ended(reg, row, outcome)
                self._wake()
                self.feed.changed(reg_id)
        except StoreUnavailable as exc:
            # The next replica round arms it again (a due prompt still open).
            log.warning("hitl-nb gateway: closing %s at its deadline waits: %s", prompt_id, exc)

    # -- registrations ---------------------------------------------------------------

    async def register(
        self,
        caller: Caller,
        agent_url: Any,
        task_id: Any,
        deadline: Any = None,
        *,
        two_person: Any = None,
    ) -> tuple[bool, dict[str, Any]]:
        """Watch a task. Returns (created, registration with its prompts).

        ``deadline``: the registration's deadline policy (``{"policy": ...}``,
        :func:`~hitl_nb.gateway._deadline.parse_policy`; None: the administrator's
        default), refused (400, 422) naming what is wrong; a ``default`` answer that does
        not fit the prompt the task shows now is refused here (422). ``two_person``: True
        turns the two-person rule on for this task (None: as the setting says; False is
        refused where the setting turns it on for every task)."""
        policy = self._policy(deadline)
        try:
            url = check_agent_url(agent_url, self.settings.allowed_agent_hosts)
        except AgentNotAllowed as exc:
            raise GatewayError(403 if isinstance(agent_url, str) else 400, str(exc)) from None
        if not isinstance(task_id, str) or not task_id.strip() or len(task_id) > MAX_TASK_ID:
            raise GatewayError(
                400, f"task_id must be a non-empty string of at most {MAX_TASK_ID} characters"
            )
        for name, text in (("agent_url", url), ("task_id", task_id)):
            why = unstorable(text)
            if why is not None:
                raise GatewayError(400, f"{name} holds {why}, which the gateway cannot keep")
        self._check_two_person(two_person)
        existing = await self.store.find_registration(url, task_id)
        if existing is not None:
            kept = await self.store.deadlines.policy(existing.id)
            if deadline is not None and kept is not None and kept != policy:
                raise GatewayError(
                    409,
                    f"this task is registered already, with the deadline policy "
                    f"{kept.policy!r}; a registration's policy does not change",
                )
            if two_person and not self.two_person(existing):
                raise GatewayError(
                    409,
                    f"task {task_id!r} is registered already, without the two-person rule; "
                    "the rule is chosen when a task is first registered",
                )
            await self._refresh(existing, quiet=True)
            return False, await self._registration_view(existing, caller)
        if await self.store.count_registrations() >= self.settings.max_registrations:
            limit = self.settings.max_registrations
            raise GatewayError(
                429, f"{self.settings.where} already watches {limit} tasks (its limit)"
            )
        task = await self._get_task(url, task_id)
        found = prompt_of(task)
        self._check_storable(found)  # before anything is written
        if policy.policy == "default" and isinstance(found, PromptEvent):
            why = answer_issues(found.envelope.validate, policy.answer)
            if why is not None:
                raise GatewayError(422, f"deadline.answer: {why}; nothing was registered")
        reg = await self.store.add_registration(
            Registration(
                uuid.uuid4().hex,
                url,
                task_id,
                caller.display,
                time.time(),
                caller.name,
                two_person=bool(two_person),
            )
        )
        await self.store.deadlines.set_policy(reg.id, policy)
        await self._see(reg, task)
        log.info("hitl-nb gateway: %s registered task %s at %s", caller.display, task_id, url)
        if self.settings.watch and not task.status.state.is_terminal:
            # Watched here at once when no replica holds it (a replica's next round
            # balances the leases).
            if await self.store.take_lease(reg.id, self.replica, self.settings.lease_seconds):
                self.duties.lease_taken(reg.id)
                self.watchers.watch(reg)
        return True, await self._registration_view(reg, caller)

    def _policy(self, given: Any) -> DeadlinePolicy:
        """A registration's deadline policy from its request, within the settings."""
        teams = None if self.notify is None else list(self.notify.teams.targets)
        try:
            return parse_policy(
                given,
                admin_default=self.settings.deadline_policy,
                allowed=self.settings.deadline_policies_allowed,
                channels=teams,
            )
        except PolicyRefused as exc:
            raise GatewayError(exc.status, exc.message) from None

    def _check_two_person(self, two_person: Any) -> None:
        """A registration's ``two_person``: a boolean, never False where the setting
        turns the rule on for every task."""
        if two_person is None:
            return
        if not isinstance(two_person, bool):
            raise GatewayError(400, "two_person must be true or false")
        if not two_person and self.settings.two_person_rule:
            raise GatewayError(
                403,
                f"the two-person rule is on for every task on {self.settings.where} "
                "(its administrator's setting); a registration cannot turn it off",
            )

    def two_person(self, reg: Registration) -> bool:
        """Does the two-person rule apply to ``reg``'s prompts: the setting turns it on
        for every task, or its registrant did for theirs."""
        return reg.two_person or self.settings.two_person_rule

    def _owns(self, caller: Caller, reg: Registration) -> bool:
        return caller.admin or reg.registrant == caller.name

    async def registrations(self, caller: Caller) -> list[dict[str, Any]]:
        """The registrations ``caller`` sees: every one where everyone sees everything
        (a Jupyter server), else those they registered (hub admins: all)."""
        regs = await self.store.registrations()
        if not self.settings.show_all:
            regs = [r for r in regs if self._owns(caller, r)]
        return [{**r.to_json(), "two_person": self.two_person(r)} for r in regs]

    async def _registration(self, reg_id: str) -> Registration:
        reg = await self.store.registration(reg_id)
        if reg is None:
            raise GatewayError(404, f"no registered task with id {reg_id!r}")
        return reg

    async def registration(self, reg_id: str, caller: Caller) -> dict[str, Any]:
        """One registration with the prompts ``caller`` sees (fresh from the agent when
        it answers)."""
        reg = await self._registration(reg_id)
        if not self.settings.show_all and not await self._visible(reg, caller):
            # Where not everyone sees everything (the hub), a task with nothing for the
            # caller is not theirs to know of: the same 404 as an unknown id, and no
            # request to its agent on their behalf.
            raise GatewayError(404, f"no registered task with id {reg_id!r}")
        note = await self._refresh(reg, quiet=True)
        view = await self._registration_view(reg, caller)
        if note:
            view["agent_error"] = note
        return view

    async def _visible(self, reg: Registration, caller: Caller) -> bool:
        """Does ``caller`` see this task: its registrant, an administrator, or someone
        who may answer one of its prompts."""
        if self._owns(caller, reg):
            return True
        return any(shown_to(caller, reg, row) for row in await self.store.prompts(reg.id))

    async def _registration_view(self, reg: Registration, caller: Caller) -> dict[str, Any]:
        now = time.time()
        views = []
        for row in await self.store.prompts(reg.id):
            if self.settings.show_all or shown_to(caller, reg, row):
                fwd = await self.store.forward(reg.id, row.prompt_id)
                ballots = await self.store.ballots(reg.id, row.prompt_id)
                two = self.two_person(reg)
                views.append(prompt_view(reg, row, caller, now, fwd, ballots, two_person=two))
        policy = await self.store.deadlines.policy(reg.id)
        shown = {}
        if policy is not None:  # whom it escalates to and its answer: for its registrant
            full = self._owns(caller, reg) or self.settings.show_all
            shown = {"deadline": policy.to_json() if full else {"policy": policy.policy}}
        return {**reg.to_json(), "two_person": self.two_person(reg), **shown, "prompts": views}

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
        try:
            await self._see(reg, task)
        except StoreUnavailable as exc:
            log.info("hitl-nb gateway: task %s not recorded: %s", reg.task_id, exc)
            return None
        except GatewayError as exc:
            log.warning("hitl-nb gateway: task %s not recorded: %s", reg.task_id, exc.message)
            return None
        return task

    async def _refresh(self, reg: Registration, *, quiet: bool = False) -> str | None:
        """Read the task again and record any new prompt. The error text when quiet."""
        try:
            task = await self._get_task(reg.agent_url, reg.task_id)
            await self._see(reg, task)
        except GatewayError as exc:
            if not quiet:
                raise
            return exc.message
        return None

    @staticmethod
    def _check_storable(found: object) -> None:
        """Refuse (502, the agent's malformed output) a prompt whose text kept in a
        column of its own holds what no store keeps (:func:`~hitl_nb.gateway._store.unstorable`):
        the task's context id, a ``specific:<id>`` name (§Responder policy). Checked
        before anything of it is written, so both databases refuse the same prompts
        and nothing is half-written. The envelope itself is kept as JSON text, where a
        NUL is escaped (``\\u0000``)."""
        if not isinstance(found, PromptEvent):
            return
        why = unstorable(found.context_id)
        if why is not None:
            raise GatewayError(
                502,
                f"the agent's task is malformed: its context id holds {why}, which the "
                "gateway cannot keep; nothing of this prompt was recorded",
            )
        for name in audience(found.envelope.to_json())[0]:
            why = unstorable(name)
            if why is not None:
                raise GatewayError(
                    502,
                    f"the agent's prompt is malformed: allowed_responders names "
                    f"specific:{name!r}, which holds {why}; no person can be named so "
                    "(§Responder policy); nothing of this prompt was recorded",
                )

    async def _see_pushed(self, reg: Registration, task: Task) -> None:
        """:meth:`_see` for a push notification: a malformed prompt turned away (400)."""
        try:
            await self._see(reg, task)
        except GatewayError as exc:
            raise Refused(400, exc.message) from None

    async def _see(self, reg: Registration, task: Task) -> None:
        """Record what ``task`` shows: its open prompt (a GatewayError, 502, when it
        cannot be kept: :meth:`_check_storable`), and the prompts it no longer shows
        closed."""
        found = prompt_of(task)
        self._check_storable(found)
        if not self.push.fresh(reg.id, task.status):
            return  # an older sighting than one recorded (a read crossed a push)
        open_id = None
        if isinstance(found, PromptEvent):
            open_id = found.prompt_id
            deadline = found.envelope.deadline_at
            envelope = found.envelope.to_json()
            due = deadline.timestamp() if deadline else None
            notes = self.notify.opened(reg, envelope, due) if self.notify is not None else None
            new = await self.store.prompt(reg.id, found.prompt_id) is None
            row = await self.store.see_prompt(
                reg.id, found.prompt_id, found.context_id, envelope, due, notes
            )
            self._arm(row)
            if new:  # first seen now: its notes were written with it
                await self.traces.opened(reg, row)
                self._spawn(self.deadlines.seen(reg, row))
                self._wake()
                self.feed.changed(reg.id, row.envelope)
        for row in await self.store.prompts(reg.id):
            if row.closed is None and row.prompt_id != open_id:
                fwd = await self.store.forward(reg.id, row.prompt_id)
                if fwd is None or fwd.state != PromptState.FORWARDING:
                    if await self.store.close_prompt(reg.id, row.prompt_id, "closed by the agent"):
                        await self.traces.ended(reg, row, "withdrawn")
                        self.feed.changed(reg.id)
            elif row.closed is not None:
                self.traces.closed_elsewhere(reg.id, row.prompt_id)

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

    async def inbox(
        self,
        caller: Caller,
        *,
        agent: str | None = None,
        responder: str | None = None,
        due_within: float | None = None,
        limit: int = 1000,
    ) -> dict[str, Any]:
        """Open prompts across every registered task that ``caller`` sees, soonest
        deadline first.

        Read from the store the watchers keep current (no request to any agent).
        ``agent``: only this agent URL; ``responder``: only prompts that user may
        answer (``"me"``: the caller); ``due_within``: only deadlines at most that many
        seconds away; at most ``limit`` prompts (``total`` counts them all).
        """
        now = time.time()
        query = OpenQuery(
            viewer=caller.name,
            see_all=self.settings.show_all or caller.admin,
            agent=agent,
            for_responder=responder is not None,
            responder=caller.name if responder == "me" else responder,
            due_before=None if due_within is None else now + due_within,
        )
        listed, total = await self.store.list_open(query, limit)
        views = [
            prompt_view(
                i.reg, i.row, caller, now, i.forward, i.ballots, two_person=self.two_person(i.reg)
            )
            for i in listed
        ]
        return {"prompts": views, "total": total}

    async def _feed_listing(self, scope: FeedScope, limit: int) -> tuple[list[PromptItem], int]:
        """The feed's list for ``scope.caller``: the open prompts they may answer,
        soonest deadline first. A caller the host cannot name (one shared token) is the
        server's one user: every open prompt is theirs to know of, those for named
        people or a consensus with why they cannot answer them here. ``scope.registered``:
        the open prompts of the tasks they registered instead, whoever may answer them
        (S-3: a registrant sees their task's prompts, :func:`shown_to`);
        ``scope.registration``: only that task's."""
        caller = scope.caller
        named = caller.name is not None
        if scope.registered:
            query = OpenQuery(
                viewer=caller.name,
                see_all=named or self.settings.show_all,
                registered=True,
                registration=scope.registration,
            )
        else:
            query = OpenQuery(
                viewer=caller.name,
                see_all=not named and self.settings.show_all,
                for_responder=named or not self.settings.show_all,
                responder=caller.name,
                registration=scope.registration,
            )
        listed, total = await self.store.list_open(query, limit)
        items = [
            feed_item(i.reg, i.row, caller, i.forward, i.ballots, two_person=self.two_person(i.reg))
            for i in listed
        ]
        return items, total

    # -- answers ---------------------------------------------------------------------

    async def response_schema(self, reg_id: str, prompt_id: str) -> Any:
        """The stored ``response_schema`` of one prompt (404 when there is none): what a
        one-click answer's choice is read from, never from the link itself."""
        reg = await self._registration(reg_id)
        row, _ = await self.store.prompt_and_forward(reg.id, prompt_id)
        if row is None:
            raise GatewayError(404, f"task {reg.task_id!r} has no prompt {prompt_id!r}")
        return row.envelope.get("response_schema")

    async def answer(
        self, reg_id: str, prompt_id: str, caller: Caller, payload: Any
    ) -> GatewayReply:
        """One user's answer: refuse, hold (consensus), or forward exactly once. Each
        answer to a known prompt lands in the audit trail, with what became of it."""
        reg = await self._registration(reg_id)
        row, fwd = await self.store.prompt_and_forward(reg.id, prompt_id)
        if row is None:
            await self._refresh(reg)
            row, fwd = await self.store.prompt_and_forward(reg.id, prompt_id)
            if row is None:
                raise GatewayError(404, f"task {reg.task_id!r} has no prompt {prompt_id!r}")
        given = Answer(reg, row, caller, payload)
        try:
            reply = await self._decide(given, fwd)
        except GatewayError as exc:
            self.metrics.answered(outcome_of(exc.status))
            self.feed.changed(reg.id)  # a refusal may have closed it (410)
            await self.trail.refusal(given, exc.status, exc.message)
            raise
        self.metrics.answered(outcome_of(reply.status, reply.body.get("status")))
        self.feed.changed(reg.id)  # a ballot counted, or the answer forwarded
        return reply

    def _vet(
        self, reg: Registration, env: PromptEnvelope, caller: Caller, payload: Any
    ) -> ResponderGate:
        """Who may answer (spec S-3, and the two-person rule where ``reg`` has it) and
        what fits the form: 403, 400 or 422; else the gate."""
        gate = ResponderGate(env.responders)
        reason = refusal(gate, caller)
        if reason is None and self.two_person(reg):
            reason = two_person_refusal(reg, caller, gate.needed)
        if reason is not None:
            raise GatewayError(403, reason)
        if not isinstance(payload, dict):
            raise GatewayError(400, "payload must be a JSON object (the answer to the prompt)")
        issues = env.validate(payload)
        if issues:
            raise GatewayError(
                422,
                "the answer does not fit the prompt's form; nothing was sent",
                validation_errors=[i.to_json() for i in issues],
            )
        return gate

    async def vet(self, reg_id: str, prompt_id: str, caller: Caller, payload: Any) -> None:
        """Check an answer as :meth:`answer` first does (who may answer, spec S-3; the
        form), without taking it: a :class:`GatewayError` (403, 400, 422, 404), written
        to the audit trail as :meth:`answer` writes a refusal. For a host that must say
        at once what is wrong and take the answer after (a Slack modal's fields)."""
        reg = await self._registration(reg_id)
        row = await self.store.prompt(reg.id, prompt_id)
        if row is None:
            raise GatewayError(404, f"task {reg.task_id!r} has no prompt {prompt_id!r}")
        given = Answer(reg, row, caller, payload)
        try:
            self._vet(reg, self._envelope(row), caller, payload)
        except GatewayError as exc:
            await self.trail.refusal(given, exc.status, exc.message)
            raise

    async def _decide(self, given: Answer, fwd: Forward | None) -> GatewayReply:
        """``given.row`` and ``fwd``: the prompt and its forward as read for this
        answer. A change since (another answer's claim, the agent closing the prompt) is
        caught where it matters: by the claim (:meth:`GatewayStore.begin_forward`) and
        by the agent, whose 409 ends the forward. The answer's audit entry is written
        here, with what became of it: in the transaction that counts a held answer or
        ends its forward, else on its own."""
        reg, row, caller, payload = given.reg, given.row, given.caller, given.payload
        prompt_id = row.prompt_id
        env = self._envelope(row)
        gate = self._vet(reg, env, caller, payload)
        where = self.settings.where
        if fwd is not None and fwd.state in (PromptState.FORWARDING, PromptState.FORWARDED):
            raise GatewayError(
                409, f"this prompt was already answered through {where}", state=fwd.state
            )
        if row.closed is not None or self._past_deadline(row):
            if row.closed == "expired" or self._past_deadline(row):
                if await self.store.close_prompt(
                    reg.id, prompt_id, "expired", self._expiry(reg, row)
                ):
                    await self.traces.ended(reg, row, "expired")
                    self._wake()
                raise GatewayError(
                    410, f"the prompt's deadline ({env.deadline}) has passed; nothing was sent"
                )
            raise GatewayError(409, "this prompt is closed (the agent no longer asks it)")
        canonical = dumps_compact(payload)
        needed = gate.needed
        responder = caller.name if caller.name is not None else caller.display
        key = (reg.id, prompt_id)
        # Marked before the claim, so no round of this replica adopts it meanwhile; a
        # forward this process already sends makes the claim fail anyway.
        mine = key not in self._in_flight
        self._in_flight.add(key)
        in_doubt = False
        try:
            claimed = await self._claim(given, needed, responder, canonical)
            if isinstance(claimed, GatewayReply):
                return claimed  # held until enough agree (its entry written with it)
            if claimed is None:
                reply = await self._claimed_by_another(reg, prompt_id, responder, canonical)
                await self.trail.add_outcome(given, reply)
                return reply
            client = self.pool.client(reg.agent_url)
            parent = await self.traces.parent(reg, row)
            with self.traces.forward(parent, reg, row, claimed, settling=False) as span:
                ending = await send(client, claimed, reg.task_id, row.context_id)
                span.ended(_result(ending.reply))
            reply = ending.reply
            if ending.in_doubt:  # the forward stays as it is, settled in the background
                self.metrics.forward_ended("in_doubt")
                await self.trail.add_outcome(given, reply)
                in_doubt = True
                self._spawn(self._settle(claimed, taken=True))
            else:
                entry = self.trail.outcome(given, reply)
                reply = await conclude(self.store, claimed, ending, self._tell(reg, row), entry)
                await self.traces.concluded(reg, row, ending.closed, reply.ended_here)
                if reply.ended_here:
                    self.metrics.forward_ended(str(reply.body.get("status")), row.first_seen)
                self._wake()
        finally:
            if mine and not in_doubt:
                self._in_flight.discard(key)
        self._moved_on(reg)
        return reply

    async def _claim(
        self, given: Answer, needed: int, responder: str, canonical: str
    ) -> Forward | GatewayReply | None:
        """Claim the prompt's forward of this answer: the forward (None: another
        claimed it first). A consensus answer is counted first, in the same
        transaction (:meth:`GatewayStore.cast_and_decide`): while fewer than ``needed``
        agree, the reply that holds it (its audit entry written with the ballot)."""
        reg, prompt_id = given.reg, given.row.prompt_id
        message_id = str(uuid.uuid4())
        if needed <= 1:
            return await self.store.begin_forward(
                reg.id, prompt_id, message_id, canonical, [responder], owner=self.replica
            )
        held: list[GatewayReply] = []

        def decide(ballots: list[Ballot]) -> AuditEntry | Forward:
            reply = _collecting(ballots, needed, canonical, prompt_id)
            held[:] = [] if reply is None else [reply]  # the last run's, if run again
            if reply is not None:
                return self.trail.outcome(given, reply)
            responders = [b.responder for b in ballots if b.payload == canonical][:needed]
            return Forward(
                reg.id,
                prompt_id,
                message_id,
                canonical,
                responders,
                "forwarding",
                None,
                time.time(),
                self.replica,
            )

        _, claimed = await self.store.cast_and_decide(
            reg.id, prompt_id, responder, canonical, decide
        )
        return held[0] if held else claimed

    def _moved_on(self, reg: Registration) -> None:
        """The task moves on after a forward: its next prompt comes soon. The replica
        that watches it reads it at once when that is this one; else this one reads it
        once, so the next prompt is listed without waiting for the watcher's poll."""
        if self.watchers.watching(reg.id):
            self.watchers.poke(reg.id)
        elif self.settings.watch:
            self._spawn(self._refresh_for_watch(reg))

    async def _claimed_by_another(
        self, reg: Registration, prompt_id: str, responder: str, canonical: str
    ) -> GatewayReply:
        """Another submission claimed the forward first (on this replica or another).
        If it carries this very answer, from this responder (a consensus this vote
        helped reach, or the same person's answer sent twice), the answer counted;
        else 409. The reply says where the forward stands now."""
        fwd = await self.store.forward(reg.id, prompt_id)
        where = self.settings.where
        if fwd is None or responder not in fwd.responders or fwd.payload != canonical:
            raise GatewayError(
                409,
                f"this prompt was already answered through {where}",
                state=fwd.state if fwd else None,
            )
        body = {"prompt_id": prompt_id, "responders": fwd.responders}
        if fwd.state == PromptState.FORWARDED:
            message = "your answer counted: the agent has it (sent once, by the gateway)"
            return GatewayReply(200, {"status": "forwarded", **body, "message": message})
        message = "your answer counted: it is on its way to the agent (sent once, by the gateway)"
        return GatewayReply(202, {"status": "forwarding", **body, "message": message})

    def _past_deadline(self, row: PromptRow) -> bool:
        return (
            not self.settings.accept_after_deadline
            and row.deadline is not None
            and time.time() >= row.deadline
        )

    # -- the audit trail -------------------------------------------------------------

    async def audit(
        self,
        caller: Caller,
        reg_id: str | None = None,
        *,
        after: int = 0,
        limit: int = 1000,
    ) -> list[AuditEntry]:
        """The audit trail as ``caller`` may read it: administrators all of it, anyone
        else the entries of tasks they registered. ``reg_id``: one task's (403 when it
        is not theirs); ``after``: entries after this id; at most ``limit``."""
        if reg_id is not None:
            reg = await self._registration(reg_id)
            if not self._owns(caller, reg):
                raise GatewayError(
                    403,
                    "only administrators and whoever registered this task may read its audit trail",
                )
            return await self.store.audit([reg.id], after=after, limit=limit)
        if caller.admin:
            return await self.store.audit(None, after=after, limit=limit)
        mine = [r.id for r in await self.store.registrations() if self._owns(caller, r)]
        return await self.store.audit(mine, after=after, limit=limit)


def _result(reply: GatewayReply) -> str:
    """A forward's result (as the metrics and the traces say it) from its reply."""
    return "in_doubt" if reply.status == 202 else str(reply.body.get("status"))


def _collecting(
    ballots: list[Ballot], needed: int, canonical: str, prompt_id: str
) -> GatewayReply | None:
    """The reply to a consensus answer counted among ``ballots`` (its own among them)
    while fewer than ``needed`` agree; None once they do (it is forwarded)."""
    count = tally([b.payload for b in ballots], needed, of=canonical)
    if count.reached:
        return None
    message = f"{count.agreeing} of {needed} answers agree so far"
    if count.disagreement:
        different = len({b.payload for b in ballots})
        message += (
            f"; the {count.answers} answers given differ ({different} different "
            f"answers), so nothing is forwarded until {needed} agree"
        )
    return GatewayReply(
        202,
        {
            "status": "collecting",
            "prompt_id": prompt_id,
            "agreeing": count.agreeing,
            "needed": count.needed,
            "answers": count.answers,
            "disagreement": count.disagreement,
            "message": message,
        },
    )
