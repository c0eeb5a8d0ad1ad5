"""An a2a-sdk ``AgentExecutor`` whose ``execute`` can ``await ask(...)``.

The SDK runs ``execute`` once per request and ends the request when it returns; a task
waiting for a person must let its request end. :class:`HitlExecutor` wraps the agent's
own executor and runs each task's ``execute`` as a *body* that outlives its request:

- a request starts the body (or, when the task waits in :func:`~hitl_nb.agent.ask`,
  gives it the answer) and returns as soon as the body asks (the task is INPUT_REQUIRED)
  or ends;
- the body's events go to the current request's event queue through a relay (the
  executor is given the relay, so a ``TaskUpdater`` on it keeps working across
  requests);
- an accepted answer moves the task to WORKING at once (AC-4), before the body goes on;
- a message that does not answer the open prompt is kept in the history and the prompt
  is asked again (same prompt_id): nothing reaches the agent's code;
- after a restart (no body waits any more) the body runs again from the top, and each
  ``ask`` the task asked before returns the answer it had (``_stored.past_prompts``):
  the code before an ``ask`` runs again, as a LangGraph node before ``interrupt()`` does.

``cancel`` stops the task's body and closes its prompts, then calls the agent's own
``cancel``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import Event, EventQueue
from a2a.types import Task, TaskState

from hitl_nb._schema_in import settle_schema
from hitl_nb.errors import AskError

from ._envelope import Deadline, build_envelope
from ._events import first_task, prompt_update, status_update
from ._prompts import Asked, Hold, PromptBook
from ._stored import Past, past_prompts

__all__ = ["HitlExecutor", "Relay", "Run"]

log = logging.getLogger(__name__)


class Relay(EventQueue):
    """The event queue a body is given: each event goes to its run's current request."""

    def __init__(self, run: Run) -> None:
        self.run = run

    async def enqueue_event(self, event: Event) -> None:
        """Send ``event`` on the queue of the request the task is in now."""
        if isinstance(event, Task):
            self.run.task_sent = True
        await self.run.queue.enqueue_event(event)


class Run:
    """One task's body, kept across the requests of the task."""

    def __init__(self, book: PromptBook, context: RequestContext, queue: EventQueue) -> None:
        self.book = book
        self.task_id = context.task_id or ""
        # The task's own context: the SDK gives a message that names a task but no
        # contextId a fresh context id of its own.
        current = context.current_task
        self.context_id = current.context_id if current is not None else context.context_id or ""
        self.first = context
        self.queue = queue
        self.relay = Relay(self)
        self.task_sent = context.current_task is not None
        self.past: list[Past] = past_prompts(context.current_task, book)
        self.asks = 0
        self.taken: Hold | None = None
        self.waiting: Asked | None = None
        self._answer: asyncio.Future[dict[str, Any]] | None = None
        self._parked = asyncio.Event()
        self.body: asyncio.Task[None] | None = None

    def start(self, executor: AgentExecutor, taken: Hold | None) -> None:
        """Run ``executor.execute`` as this task's body."""
        self.taken = taken
        self.body = asyncio.ensure_future(executor.execute(self.first, self.relay))

    async def until_parked(self) -> None:
        """Wait until the body asks (the task is INPUT_REQUIRED) or ends; an error of
        the body is raised here (the SDK then fails the task)."""
        assert self.body is not None
        parked = asyncio.ensure_future(self._parked.wait())
        try:
            await asyncio.wait({self.body, parked}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            parked.cancel()
            await self.stop()
            raise
        parked.cancel()
        self._parked.clear()
        if self.body.done():
            self.body.result()

    async def stop(self) -> None:
        """Cancel the body and wait for it to end."""
        if self.body is not None and not self.body.done():
            self.body.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.body

    async def ask(
        self,
        prompt: str,
        response_schema: Mapping[str, Any] | None,
        deadline: Deadline | None,
        responders: Any,
    ) -> dict[str, Any]:
        """``ask`` for this task: the payload of the accepted answer."""
        # Checked first: a prompt that breaks the spec is an error here, nothing emitted.
        envelope = build_envelope(prompt, response_schema, deadline=deadline, responders=responders)
        index, self.asks = self.asks, self.asks + 1
        if index < len(self.past):
            before = self.past[index]
            _same_question(before.asked, envelope.prompt, envelope.response_schema, index)
            if before.answer is not None:
                return before.answer  # answered before a restart: not asked again
            asked = before.asked
            taken, self.taken = self.taken, None
            if taken is not None and taken.asked.prompt_id == asked.prompt_id:
                await self.working()
                return taken.payload
            self.book.record(asked)
        else:
            asked = Asked(self.task_id, envelope)
            if not self.task_sent:
                await self.relay.enqueue_event(
                    first_task(self.task_id, self.context_id, self.first.message)
                )
            self.book.record(asked)
        return await self._wait(asked)

    async def _wait(self, asked: Asked) -> dict[str, Any]:
        self.waiting = asked
        self._answer = asyncio.get_running_loop().create_future()
        await self.relay.enqueue_event(prompt_update(asked, self.context_id))
        self._parked.set()
        try:
            return await self._answer
        finally:
            self.waiting = None
            self._answer = None

    async def working(self) -> None:
        """WORKING now: the answer was accepted (AC-4: out of INPUT_REQUIRED within 1 s)."""
        await self.relay.enqueue_event(
            status_update(self.task_id, self.context_id, TaskState.TASK_STATE_WORKING)
        )

    async def resume(self, payload: dict[str, Any]) -> None:
        """Give the waiting ``ask`` its answer, the task WORKING first."""
        assert self._answer is not None
        await self.working()
        self._answer.set_result(payload)

    async def ask_again(self) -> None:
        """The message did not answer the open prompt: ask it again (kept open)."""
        assert self.waiting is not None
        await self.relay.enqueue_event(prompt_update(self.waiting, self.context_id))


def _same_question(asked: Asked, prompt: str, schema: Any, index: int) -> None:
    """AskError unless the ``ask`` at ``index`` asks what the task asked there before."""
    if asked.envelope.prompt == prompt and settle_schema(asked.envelope.response_schema) == (
        settle_schema(schema)
    ):
        return
    raise AskError(
        f"ask() number {index + 1} of task {asked.task_id} asks {prompt!r}, but the task "
        f"asked {asked.envelope.prompt!r} there (with its own response_schema) before the "
        "agent restarted: the code before each ask() must ask the same questions in the "
        "same order when a task runs again"
    )


class HitlExecutor(AgentExecutor):
    """Wraps an agent's executor so that its ``execute`` can ``await ask(...)``.

    Build it with :meth:`hitl_nb.agent.HitlExtension.wrap`; hand it to the SDK's request
    handler in place of the agent's own executor.
    """

    def __init__(self, inner: AgentExecutor, book: PromptBook) -> None:
        self.inner = inner
        self.book = book
        self.runs: dict[str, Run] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Start the task's body, or give its waiting ``ask`` the answer this request
        carries; return when the body asks again or ends."""
        task_id = context.task_id or ""
        message = context.message
        taken = self.book.take(task_id, message.message_id) if message is not None else None
        run = self.runs.get(task_id)
        if run is not None and run.waiting is not None:
            run.queue = event_queue
            if taken is None or taken.asked.prompt_id != run.waiting.prompt_id:
                await run.ask_again()
                return
            await run.resume(taken.payload)
        else:
            if run is not None:
                await run.stop()
            run = Run(self.book, context, event_queue)
            self.runs[task_id] = run
            run.start(self.inner, taken)
        try:
            await run.until_parked()
        finally:
            assert run.body is not None
            if run.body.done() and self.runs.get(task_id) is run:
                del self.runs[task_id]

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Stop the task's body, close its prompts, then the agent's own ``cancel``."""
        task_id = context.task_id or ""
        run = self.runs.pop(task_id, None)
        if run is not None:
            await run.stop()
        self.book.close_task(task_id)
        await self.inner.cancel(context, event_queue)

    async def aclose(self) -> None:
        """Stop every body still waiting for an answer (the server is shutting down)."""
        runs, self.runs = list(self.runs.values()), {}
        for run in runs:
            await run.stop()
