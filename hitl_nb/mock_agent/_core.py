"""The mock agent's brain: tasks, prompts, exactly-once acceptance, independent of HTTP.

Everything here runs on the agent's event loop thread and never awaits between reading
and changing state, so two answers racing for one prompt are decided one after the
other: the first valid one is accepted, every later one gets 409 (§Acceptance and
rejection). Each change is written through the store in one transaction before the
reply goes out.

How a task moves through its scenario (prompts, deadlines, the end) is in
:mod:`~hitl_nb.mock_agent._script`, how an answer is accepted in
:mod:`~hitl_nb.mock_agent._acceptance`, push-notification configurations in
:mod:`~hitl_nb.mock_agent._push_configs` (each committed change is handed to their
webhooks). The core always builds the full envelope;
:mod:`~hitl_nb.mock_agent._views` strips it for clients that did not activate the
extension (§Activation).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import uuid
from datetime import datetime, timezone
from typing import Any

from hitl_nb.a2a import (
    CODEC_V1,
    A2AVersion,
    Message,
    PushConfig,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from hitl_nb.errors import (
    InvalidParams,
    MalformedResponse,
    TaskNotCancelable,
    TaskNotFound,
    UnsupportedOperation,
)
from hitl_nb.mock_agent._acceptance import OMIT_ERRORS, AcceptanceSteps
from hitl_nb.mock_agent._faults import Faults
from hitl_nb.mock_agent._outbox import Outbox
from hitl_nb.mock_agent._push_configs import PushSteps
from hitl_nb.mock_agent._push_delivery import PushSender, PushSettings
from hitl_nb.mock_agent._records import OpenPrompt, TaskRecord, record_from_json, record_to_json
from hitl_nb.mock_agent._scenarios import DEFAULT_SCENARIO, DeadlinePolicy, ScenarioRegistry, Step
from hitl_nb.mock_agent._script import TIMEOUT_KEY, now_iso
from hitl_nb.mock_agent._store import Store
from hitl_nb.mock_agent._tck import TCK_SCENARIO, TckSteps, is_tck
from hitl_nb.spec import RESPONSE_KEY, ResponseEnvelope

#: A push configuration that arrived with a send request: (config, version, activated).
IncomingPush = tuple[PushConfig, A2AVersion, bool]

__all__ = ["OMIT_ERRORS", "TIMEOUT_KEY", "AgentCore", "OpenPrompt", "TaskRecord"]

log = logging.getLogger("hitl_nb.mock_agent")

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _status_time(rec: TaskRecord) -> datetime:
    stamp = rec.task.status.timestamp
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else _EPOCH


class AgentCore(AcceptanceSteps, PushSteps, TckSteps):
    """Tasks and prompts of one mock agent. Use only from the agent's event loop."""

    def __init__(
        self,
        *,
        scenarios: ScenarioRegistry,
        store: Store,
        faults: Faults | None = None,
        deadline_seconds: float = 30.0,
        on_deadline: DeadlinePolicy = "keep-open",
        push: PushSettings | None = None,
    ) -> None:
        self.scenarios = scenarios
        self.push = push or PushSettings()
        self.pusher = PushSender(self.push)
        self.store = store
        self.faults = faults or Faults()
        self.defaults = {
            "deadline": {"deadline_seconds": deadline_seconds, "on_deadline": on_deadline}
        }
        self.tasks: dict[str, TaskRecord] = {}
        self.issued: set[str] = set()
        self._reused_id: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._load()

    # -- start-up and shutdown ------------------------------------------------------------

    def _load(self) -> None:
        state = self.store.load()
        self.issued.update(state.prompts)
        for blob in state.tasks:
            events = [
                (seq, CODEC_V1.decode_stream_response(body))
                for seq, body in state.events.get(blob["id"], [])
            ]
            name = blob["scenario"]
            scenario = self.scenarios.get(name)
            steps: list[Step] = []
            if scenario is not None:
                options = blob.get("options") or {}
                steps = scenario.steps_for({**self.defaults.get(name, {}), **options})
            elif name != TCK_SCENARIO:
                log.warning("task %s: scenario %r is not registered here", blob["id"], name)
            rec = record_from_json(blob, Outbox(events), steps)
            self.tasks[rec.id] = rec

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Bind to the loop that serves requests and arm the deadlines of open prompts."""
        if self._loop is loop:
            return
        self._loop = loop
        for rec in self.tasks.values():
            if rec.prompt is not None and not rec.prompt.timed_out:
                self._arm_deadline(rec)
            elif rec.prompt is None and rec.task.status.state is TaskState.WORKING:
                # Stopped between an accepted answer and the next step: carry on.
                rec.pending += 1
                loop.call_soon(self._continue, rec)

    def close(self) -> None:
        """End every subscription, timer and push delivery, and close the store."""
        self.pusher.close()
        for rec in self.tasks.values():
            rec.outbox.close()
            if rec.timer is not None:
                rec.timer.cancel()
            for fut in rec.waiters:
                if not fut.done():
                    fut.set_result(None)
        self.store.close()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The serving loop (bound on first use)."""
        if self._loop is None:
            self.attach(asyncio.get_running_loop())
        assert self._loop is not None
        return self._loop

    # -- requests -------------------------------------------------------------------------

    def get(self, task_id: str) -> TaskRecord:
        """The task record, or raise TaskNotFound (-32001)."""
        rec = self.tasks.get(task_id)
        if rec is None:
            raise TaskNotFound(f"task {task_id!r} not found")
        return rec

    def send(
        self, message: Message, push: IncomingPush | None = None
    ) -> tuple[TaskRecord | Message, int]:
        """Handle a client message; returns the task and the outbox id before the change
        (or, for a TCK ``tck-message-response``, the direct Message reply).

        ``push``: a webhook from the request's configuration (A2A §6.6), in place before
        the task's first update. Raises the A2A error the binding should answer with; on
        error nothing changed.
        """
        if push is not None:
            self.require_push()
        if message.role is not Role.USER:
            raise InvalidParams("/message/role: a client message must have role user")
        if not message.parts:
            raise InvalidParams("/message/parts: a message needs at least one part")
        raw = (message.metadata or {}).get(RESPONSE_KEY)
        if message.task_id is None:
            if raw is not None:
                raise InvalidParams(
                    f"/message/taskId: a message carrying {RESPONSE_KEY} must name the task "
                    "that emitted the prompt (§Response Envelope)"
                )
            if is_tck(message):
                return self._tck_start(message, push)
            return self._new_task(message, push)
        rec = self.get(message.task_id)
        if push is not None:
            self._add_push(rec, *push)
        if message.context_id is not None and message.context_id != rec.task.context_id:
            raise InvalidParams(
                f"/message/contextId: task {rec.id} belongs to context "
                f"{rec.task.context_id!r}, not {message.context_id!r}"
            )
        if raw is not None:
            if not isinstance(raw, dict):  # from_json would read a string as JSON text
                raise InvalidParams(f"/message/metadata/{RESPONSE_KEY}: expected an object")
            try:
                response = ResponseEnvelope.from_json(raw)
            except MalformedResponse as exc:
                raise InvalidParams(f"/message/metadata/{RESPONSE_KEY}: {exc}") from None
            return self._answer(rec, message, response.prompt_id, response.payload)
        state = rec.task.status.state
        if state.is_terminal:
            raise UnsupportedOperation(f"task {rec.id} is {state.value}: it takes no more messages")
        if rec.scenario == TCK_SCENARIO:
            return self._tck_follow_up(rec, message)
        if rec.prompt is None:
            raise UnsupportedOperation(f"task {rec.id} is not waiting for input")
        data = next((p.data for p in message.parts if isinstance(p.data, dict)), None)
        if data is None:
            # A2A lets an agent take more messages on a task that is not terminal: a
            # plain message is kept in the history; it does not answer the prompt,
            # which stays open (only hitl_response_for or a data part answers it).
            return self._keep_message(rec, message)
        return self._answer(rec, message, rec.prompt.prompt_id, data)

    def _keep_message(self, rec: TaskRecord, message: Message) -> tuple[TaskRecord, int]:
        stored = copy.copy(message)
        stored.context_id = rec.task.context_id
        rec.task.history.append(stored)
        self._commit(rec)
        return rec, rec.outbox.last_id

    def cancel(self, task_id: str) -> TaskRecord:
        """Cancel a task (TaskNotCancelable when it is terminal); its prompt closes."""
        rec = self.get(task_id)
        if rec.task.status.state.is_terminal:
            raise TaskNotCancelable(f"task {task_id} is {rec.task.status.state.value}")
        self._close_prompt(rec, "closed")
        self._emit_status(rec, TaskState.CANCELED, "Canceled at the client's request.")
        self._commit(rec)
        return rec

    def list_tasks(
        self,
        *,
        context_id: str | None = None,
        state: TaskState | None = None,
        updated_after: datetime | None = None,
    ) -> list[TaskRecord]:
        """Tasks by status timestamp, newest first (A2A §3.1.4), filtered."""
        chosen = [
            rec
            for rec in reversed(self.tasks.values())
            if (context_id is None or rec.task.context_id == context_id)
            and (state is None or rec.task.status.state is state)
            and (updated_after is None or _status_time(rec) > updated_after)
        ]
        chosen.sort(key=_status_time, reverse=True)  # stable: ties stay newest first
        return chosen

    async def settled(self, rec: TaskRecord) -> None:
        """Wait until no delayed transition of the task is pending."""
        while rec.pending:
            fut: asyncio.Future[None] = self.loop.create_future()
            rec.waiters.append(fut)
            await fut

    # -- the script -----------------------------------------------------------------------

    def _new_task(
        self, message: Message, push: IncomingPush | None = None
    ) -> tuple[TaskRecord, int]:
        name, options = self._pick_scenario(message)
        scenario = self.scenarios.get(name)
        assert scenario is not None
        merged = {**self.defaults.get(name, {}), **options}
        try:
            steps = scenario.steps_for(merged)
        except ValueError as exc:
            raise InvalidParams(f"scenario {name!r}: {exc}") from None
        task_id, context_id = str(uuid.uuid4()), message.context_id or str(uuid.uuid4())
        first = copy.copy(message)
        first.task_id, first.context_id = task_id, context_id
        task = Task(
            task_id,
            context_id,
            TaskStatus(TaskState.SUBMITTED, timestamp=now_iso()),
            history=[first],
            metadata={"scenario": name},
        )
        delay = _start_delay(merged)
        rec = TaskRecord(task, name, options, steps)
        if push is not None:
            self._add_push(rec, *push)  # checked before the task exists: nothing to undo
        self.tasks[task_id] = rec
        try:
            rec.outbox.append(copy.deepcopy(task))
            if delay and self._loop is not None:
                # An agent that thinks before its first question: WORKING with a word
                # about it, the first prompt ``delay`` seconds later.
                self._emit_status(rec, TaskState.WORKING, "Preparing the first question.")
                rec.pending += 1
                self._loop.call_later(delay, self._delayed_start, rec)
            else:
                self._emit_status(rec, TaskState.WORKING, None)
                self._advance(rec)
        except BaseException:
            # A scenario that breaks while starting leaves no half-made task behind.
            del self.tasks[task_id]
            if rec.timer is not None:
                rec.timer.cancel()
            raise
        self._commit(rec)
        return rec, 0

    def _delayed_start(self, rec: TaskRecord) -> None:
        self._run_step(rec, "the first step", first=True)

    def _pick_scenario(self, message: Message) -> tuple[str, dict[str, Any]]:
        for i, part in enumerate(message.parts):
            if isinstance(part.data, dict) and "scenario" in part.data:
                name = part.data["scenario"]
                if not isinstance(name, str) or self.scenarios.get(name) is None:
                    raise InvalidParams(
                        f"/message/parts/{i}/data/scenario: unknown scenario {name!r}; "
                        f"known: {', '.join(self.scenarios.names())}"
                    )
                return name, {k: v for k, v in part.data.items() if k != "scenario"}
        for part in message.parts:
            if part.text is not None and self.scenarios.get(part.text.strip()) is not None:
                return part.text.strip(), {}
        return DEFAULT_SCENARIO, {}

    def _wake(self, rec: TaskRecord) -> None:
        if not rec.pending:
            for fut in rec.waiters:
                if not fut.done():
                    fut.set_result(None)
            rec.waiters.clear()

    # -- persistence ----------------------------------------------------------------------

    def _commit(self, rec: TaskRecord) -> None:
        new = rec.outbox.after(rec.committed)
        if self.store.durable:
            events = [(seq, CODEC_V1.encode_stream_response(ev)) for seq, ev in new]
            self.store.commit(record_to_json(rec), events, rec.prompt_rows)
        rec.committed = rec.outbox.last_id
        rec.prompt_rows.clear()
        # Webhooks hear of a change once it is stored, never before.
        self._publish(rec, new)


def _start_delay(options: dict[str, Any]) -> float:
    """The ``start_delay_seconds`` option (any scenario): 0 when absent."""
    raw = options.get("start_delay_seconds")
    if raw is None:
        return 0.0
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 <= raw <= 3600:
        raise InvalidParams(
            f"start_delay_seconds must be a number of seconds from 0 to 3600; got {raw!r}"
        )
    return float(raw)
