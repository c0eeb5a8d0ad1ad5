"""``DeferredExecutor``: a Pydantic AI agent as an a2a-sdk executor whose deferred tool
calls ask people.

One Pydantic AI run history per A2A task. A request:

- **starts** a task: the agent runs on the message's text, its output type widened with
  ``DeferredToolRequests``;
- **answers** the open prompt (the middleware checked and held the answer, 409 / 422
  before any of this runs): the answer is kept with the paused run; when every call it
  waits on is answered, the task is shown WORKING and the agent runs again with
  ``message_history=`` and ``deferred_tool_results=`` (``ToolApproved`` /
  ``ToolDenied(reason)``, the structured fields, the words: see ``_calls``); if no paused
  run waits on that call (the pauses were kept in memory across a restart), ``AskError``
  fails the task saying what to do;
- **says something else** while the run waits: the message is kept in the history and
  the open prompt is asked again; the agent is not run.

A run that stops on deferred calls is kept (:mod:`._pauses`) before its first prompt is
emitted, then its calls are asked one at a time (an A2A task shows one status at a
time), each with its own prompt_id, the tool call id beside the envelope. A run that
ends completes the task with ``result(output)``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part
from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ModelMessagesTypeAdapter

from hitl_nb.errors import AskError

from .._events import (
    ask_again,
    canceled,
    complete_with,
    first_task,
    prompt_update,
    updater_for,
)
from .._extension import HitlExtension
from .._prompts import Asked, PromptBook
from ._calls import Pending, answer_value, pending_calls, prompt_for, results_for
from ._pauses import MemoryPauses, Paused, PauseStore

__all__ = ["DeferredExecutor", "Result", "default_result"]

log = logging.getLogger(__name__)

#: What a finished run answers with: text, a JSON object (a data artifact), or parts.
Result = Callable[[Any], "str | Mapping[str, Any] | list[Part]"]


def default_result(output: Any) -> str | Mapping[str, Any]:
    """Text as is; a Pydantic model or a dict as a data artifact; anything else as text."""
    if isinstance(output, str):
        return output
    dump = getattr(output, "model_dump", None)
    if callable(dump):
        made: Mapping[str, Any] = dump(mode="json")
        return made
    if isinstance(output, dict):
        plain: Mapping[str, Any] = json.loads(json.dumps(output, default=str))
        return plain
    return str(output)


def _widened(output_type: Any) -> Any:
    """The agent's output type with ``DeferredToolRequests`` among the choices."""
    if isinstance(output_type, Sequence) and not isinstance(output_type, str):
        choices = list(output_type)
    else:
        choices = [output_type]
    if DeferredToolRequests not in choices:
        choices.append(DeferredToolRequests)
    return choices


class DeferredExecutor(AgentExecutor):
    """Serves a Pydantic AI ``Agent`` as an A2A agent whose deferred tool calls ask
    people through hitl-prompt/v1; see the module. ``DeferredExecutor(agent, hitl)`` with
    the agent's :class:`~hitl_nb.agent.HitlExtension`.

    ``pauses``: where a waiting run is kept (default :class:`MemoryPauses`;
    :class:`SqlitePauses` outlives a crash beside a database task store). ``deps``: the
    run's dependencies; ``result``: what a finished run answers with."""

    def __init__(
        self,
        agent: Any,
        extension: HitlExtension,
        *,
        pauses: PauseStore | None = None,
        deps: Any = None,
        result: Result = default_result,
    ) -> None:
        self.agent = agent
        self.book: PromptBook = extension.book
        self.pauses: PauseStore = pauses if pauses is not None else MemoryPauses()
        self.deps = deps
        self.result = result
        self._output_type = _widened(agent.output_type)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run, resume or re-ask, as the module says."""
        updater = updater_for(context, event_queue)
        task_id, context_id, current = updater.task_id, updater.context_id, context.current_task
        message = context.message
        taken = self.book.take(task_id, message.message_id) if message is not None else None
        if current is None:
            await event_queue.enqueue_event(first_task(task_id, context_id, message))
            await self._run(updater, context.get_user_input())
            return
        paused = await self.pauses.get(task_id)
        waits_on = paused.next_call() if paused is not None else None
        if taken is not None and (waits_on is None or waits_on.tool_call_id != taken.asked.tag):
            raise _lost(taken.asked)
        if paused is None or waits_on is None:
            await self._run(updater, context.get_user_input())
            return
        if taken is None:
            await ask_again(self.book, current, updater)
            return
        paused.answers[waits_on.tool_call_id] = answer_value(taken.asked, taken.payload)
        following = paused.next_call()
        if following is not None:
            await self.pauses.put(task_id, paused)
            await self._ask(following, updater)
            return
        await updater.start_work()  # AC-4: the answer is accepted
        await self._run(
            updater,
            None,
            message_history=ModelMessagesTypeAdapter.validate_json(paused.messages),
            deferred_tool_results=results_for(paused.pending, paused.answers),
        )

    async def _run(self, updater: TaskUpdater, prompt: str | None, **given: Any) -> None:
        """One run of the agent: paused on deferred calls (kept, the first asked), or
        ended (the task completed)."""
        run = await self.agent.run(prompt, output_type=self._output_type, deps=self.deps, **given)
        output = run.output
        if isinstance(output, DeferredToolRequests):
            paused = Paused(ModelMessagesTypeAdapter.dump_json(run.all_messages()), [])
            paused.pending = pending_calls(output)
            first = prompt_for(paused.pending[0], updater.task_id)  # checked before it is kept
            await self.pauses.put(updater.task_id, paused)
            await self._emit(first, updater)
            return
        await self.pauses.delete(updater.task_id)
        await complete_with(updater, self.result(output))

    async def _ask(self, pending: Pending, updater: TaskUpdater) -> None:
        await self._emit(prompt_for(pending, updater.task_id), updater)

    async def _emit(self, asked: Asked, updater: TaskUpdater) -> None:
        self.book.record(asked)
        await updater.event_queue.enqueue_event(prompt_update(asked, updater.context_id))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Close the task's prompts, forget its paused run and mark it CANCELED."""
        task_id = context.task_id or ""
        self.book.close_task(task_id)
        await self.pauses.delete(task_id)
        await event_queue.enqueue_event(canceled(task_id, context.context_id or ""))


def _lost(asked: Asked) -> AskError:
    """The task's open prompt stands for a call no paused run waits on: the pauses were
    lost while the task store kept the prompt (in memory across a restart)."""
    return AskError(
        f"task {asked.task_id} waits on prompt {asked.prompt_id}, which stands for the "
        f"tool call {asked.tag}, but no paused Pydantic AI run of task {asked.task_id} "
        "waits on that call: its message history was kept in memory, which does not "
        "outlive a restart. Keep it beside a database task store, e.g. "
        "pauses=SqlitePauses('pauses.sqlite')"
    )
