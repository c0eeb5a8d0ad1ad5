"""The mock agent's brain, independent of HTTP: the task book and the parts acting on it.

:class:`AgentCore` composes one :class:`~hitl_nb.mock_agent._task_book.TaskBook` (the
tasks, the store, commit and wake) with the parts that change tasks, each given the
book through a narrow protocol of its own:

==========================  ===========================================================
``script``                  :class:`~hitl_nb.mock_agent._script.Script`: new tasks of
                            the scenarios, their prompts, deadlines and end
``acceptance``              :class:`~hitl_nb.mock_agent._acceptance.Acceptance`:
                            exactly-once answers (409 / 422 before any change)
``push``                    :class:`~hitl_nb.mock_agent._push_configs.PushConfigs`:
                            webhooks of a task; it watches the book's commits
``tck``                     :class:`~hitl_nb.mock_agent._tck.TckContract`: the tasks
                            the A2A TCK's ``messageId`` prefixes ask for
==========================  ===========================================================

The core routes each request to them: :meth:`AgentCore.send` picks who plans and
starts a new task (the TCK contract or the script) and who takes a message on an
existing one; the bindings call :meth:`get`, :meth:`cancel`, :meth:`list_tasks`,
:meth:`settled` and ``core.push`` for the push-notification methods. The core always
builds the full envelope; :mod:`~hitl_nb.mock_agent._views` strips it for clients that
did not activate the extension (§Activation).
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any, Protocol

from hitl_nb.a2a import Message, Role, TaskState
from hitl_nb.errors import InvalidParams, TaskNotCancelable, UnsupportedOperation
from hitl_nb.mock_agent._acceptance import Acceptance
from hitl_nb.mock_agent._faults import Faults
from hitl_nb.mock_agent._push_configs import IncomingPush, PushConfigs
from hitl_nb.mock_agent._push_delivery import PushSettings
from hitl_nb.mock_agent._records import Plan, TaskRecord
from hitl_nb.mock_agent._scenarios import DeadlinePolicy, ScenarioRegistry, Step
from hitl_nb.mock_agent._script import Script
from hitl_nb.mock_agent._store import TaskStore
from hitl_nb.mock_agent._task_book import TaskBook
from hitl_nb.mock_agent._tck import TCK_SCENARIO, TckContract, is_tck
from hitl_nb.spec import RESPONSE_KEY, read_response

__all__ = ["AgentCore", "Opener"]


class Opener(Protocol):
    """A part that starts new tasks: it plans one from the first message (refusing
    before anything exists), then begins it once the book opened it."""

    def plan(self, message: Message) -> Plan:
        """The task ``message`` asks for."""

    def begin(self, rec: TaskRecord, message: Message) -> None:
        """Its first events."""


class AgentCore:
    """Tasks and prompts of one mock agent. Use only from the agent's event loop."""

    def __init__(
        self,
        *,
        scenarios: ScenarioRegistry,
        store: TaskStore,
        faults: Faults | None = None,
        deadline_seconds: float = 30.0,
        on_deadline: DeadlinePolicy = "keep-open",
        push: PushSettings | None = None,
    ) -> None:
        self.scenarios = scenarios
        self.faults = faults or Faults()
        self.book = TaskBook(store)
        defaults = {"deadline": {"deadline_seconds": deadline_seconds, "on_deadline": on_deadline}}
        self.script = Script(self.book, scenarios, self.faults, defaults)
        self.acceptance = Acceptance(self.book, self.script, self.faults)
        self.push = PushConfigs(self.book, push or PushSettings(), self.faults)
        self.tck = TckContract(self.book)
        self.book.watch(self.push.publish)
        self.script.remember(self.book.load(self._stored_steps))

    def _stored_steps(self, scenario: str, options: dict[str, Any]) -> list[Step]:
        return [] if scenario == TCK_SCENARIO else self.script.steps_of(scenario, options)

    # -- start-up and shutdown ------------------------------------------------------------

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Bind to the loop that serves requests; stored tasks carry on there."""
        if self.book.attach(loop):
            for rec in self.book:
                self.script.pick_up(rec)

    def close(self) -> None:
        """End every subscription, timer and push delivery, and close the store."""
        self.push.close()
        self.book.close()

    # -- requests -------------------------------------------------------------------------

    def get(self, task_id: str) -> TaskRecord:
        """The task record, or raise TaskNotFound (-32001)."""
        return self.book.get(task_id)

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
            self.push.require()
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
            return self._start(message, push)
        rec = self.get(message.task_id)
        if push is None:
            return self._follow_up(rec, message, raw)
        # The webhook is in place before the update this message causes, so it sees it;
        # a message refused after that takes its webhook back (nothing changed).
        before = dict(rec.push)
        self.push.add(rec, *push)
        try:
            return self._follow_up(rec, message, raw)
        except BaseException:
            rec.push.clear()
            rec.push.update(before)
            raise

    def _follow_up(
        self, rec: TaskRecord, message: Message, raw: Any
    ) -> tuple[TaskRecord | Message, int]:
        """A message on an existing task: an answer, a TCK follow-up, or a plain message."""
        if message.context_id is not None and message.context_id != rec.task.context_id:
            raise InvalidParams(
                f"/message/contextId: task {rec.id} belongs to context "
                f"{rec.task.context_id!r}, not {message.context_id!r}"
            )
        if raw is not None:
            prompt_id, payload = read_response(raw)
            return self.acceptance.answer(rec, message, prompt_id, payload)
        state = rec.task.status.state
        if state.is_terminal:
            raise UnsupportedOperation(f"task {rec.id} is {state.value}: it takes no more messages")
        if rec.scenario == TCK_SCENARIO:
            return self.tck.follow_up(rec, message)
        if rec.prompt is None:
            raise UnsupportedOperation(f"task {rec.id} is not waiting for input")
        data = next((p.data for p in message.parts if isinstance(p.data, dict)), None)
        if data is not None:
            return self.acceptance.answer(rec, message, rec.prompt.prompt_id, data)
        # A2A lets an agent take more messages on a task that is not terminal: a plain
        # message is kept in the history; it does not answer the prompt, which stays
        # open (only hitl_response_for or a data part answers it).
        self.book.keep(rec, message)
        self.book.commit(rec)
        return rec, rec.outbox.last_id

    def _start(
        self, message: Message, push: IncomingPush | None
    ) -> tuple[TaskRecord | Message, int]:
        opener: Opener = self.script
        if is_tck(message):
            reply = self.tck.direct_reply(message)
            if reply is not None:
                return reply, 0
            opener = self.tck
        plan = opener.plan(message)
        with self.book.open(message, plan) as rec:
            if push is not None:
                self.push.add(rec, *push)
            opener.begin(rec, message)
        return rec, 0

    def cancel(self, task_id: str) -> TaskRecord:
        """Cancel a task (TaskNotCancelable when it is terminal); its prompt closes."""
        rec = self.get(task_id)
        if rec.task.status.state.is_terminal:
            raise TaskNotCancelable(f"task {task_id} is {rec.task.status.state.value}")
        self.script.close_prompt(rec, "closed")
        self.book.emit_status(rec, TaskState.CANCELED, "Canceled at the client's request.")
        self.book.commit(rec)
        return rec

    def list_tasks(
        self,
        *,
        context_id: str | None = None,
        state: TaskState | None = None,
        updated_after: datetime | None = None,
    ) -> list[TaskRecord]:
        """Tasks by status timestamp, newest first (A2A §3.1.4), filtered."""
        return self.book.select(context_id=context_id, state=state, updated_after=updated_after)

    async def settled(self, rec: TaskRecord) -> None:
        """Wait until no delayed transition of the task is pending."""
        await self.book.settled(rec)
