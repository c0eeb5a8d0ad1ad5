"""``PausingExecutor``: the A2A side of an agent framework whose runs stop on tool calls
a person decides, one framework run per A2A task (the Pydantic AI and OpenAI Agents
bridges are each a subclass: how a run starts, and how it resumes with the answers).

A request:

- **starts** a task: the framework runs on the message's text (:meth:`start`);
- **answers** the open prompt (the middleware checked and held the answer, 409 / 422
  before any of this runs): the answer is kept with the paused run; when every call it
  waits on is answered, the task is shown WORKING and the run resumes with the answers
  (:meth:`resume`); if no paused run waits on that call (the pauses were kept in memory
  across a restart), ``AskError`` fails the task saying what to do;
- **says something else** while the run waits: the message is kept in the history and
  the open prompt is asked again; the framework is not run.

A run that stops on calls is kept (:mod:`._pauses`) before its first prompt is emitted,
then its calls are asked one at a time (an A2A task shows one status at a time), each
with its own prompt_id, the tool call id beside the envelope. A run that ends completes
the task with ``result(output)``.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part

from hitl_nb.errors import AskError

from ._events import (
    ask,
    ask_again,
    canceled,
    complete_with,
    first_task,
    lost,
    updater_for,
)
from ._extension import HitlExtension
from ._pauses import MemoryPauses, Paused, PauseStore
from ._prompts import Asked, PromptBook
from ._tool_calls import answer_value, prompt_for

__all__ = ["Ended", "PausingExecutor", "Result", "default_result"]

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


@dataclass(frozen=True)
class Ended:
    """A run that ended with ``output`` (no call waits on a person)."""

    output: Any


class PausingExecutor(AgentExecutor):
    """An a2a-sdk executor around a framework whose runs stop on tool calls a person
    decides; see the module. A subclass says how a run starts and resumes."""

    #: The framework's name, in errors.
    framework: ClassVar[str] = "framework"

    def __init__(
        self, extension: HitlExtension, *, pauses: PauseStore | None, result: Result
    ) -> None:
        self.book: PromptBook = extension.book
        self.pauses: PauseStore = pauses if pauses is not None else MemoryPauses()
        self.result = result

    @abstractmethod
    async def start(self, text: str) -> Paused | Ended:
        """Run the framework on a new task's text: paused on calls, or ended."""

    @abstractmethod
    async def resume(self, paused: Paused) -> Paused | Ended:
        """Run the framework again, every call of ``paused`` answered (``answers``)."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run, resume or re-ask, as the module says."""
        updater = updater_for(context, event_queue)
        task_id, context_id, current = updater.task_id, updater.context_id, context.current_task
        message = context.message
        taken = self.book.take(task_id, message.message_id) if message is not None else None
        if current is None:
            await event_queue.enqueue_event(first_task(task_id, context_id, message))
            await self._settle(updater, await self.start(context.get_user_input()))
            return
        paused = await self.pauses.get(task_id)
        waits_on = paused.next_call() if paused is not None else None
        if taken is not None and (waits_on is None or waits_on.tool_call_id != taken.asked.tag):
            raise self._lost(taken.asked)
        if paused is None or waits_on is None:
            await self._settle(updater, await self.start(context.get_user_input()))
            return
        if taken is None:
            await ask_again(self.book, current, updater)
            return
        paused.answers[waits_on.tool_call_id] = answer_value(taken.asked, taken.payload)
        following = paused.next_call()
        if following is not None:
            await self.pauses.put(task_id, paused)
            await ask(self.book, prompt_for(following, task_id), updater)
            return
        await updater.start_work()  # AC-4: the answer is accepted
        await self._settle(updater, await self.resume(paused))

    async def _settle(self, updater: TaskUpdater, stopped: Paused | Ended) -> None:
        """A run paused on calls (kept, the first asked), or ended (the task completed)."""
        if isinstance(stopped, Paused):
            first = prompt_for(stopped.pending[0], updater.task_id)  # checked before it is kept
            await self.pauses.put(updater.task_id, stopped)
            await ask(self.book, first, updater)
            return
        await self.pauses.delete(updater.task_id)
        await complete_with(updater, self.result(stopped.output))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Close the task's prompts, forget its paused run and mark it CANCELED."""
        task_id = context.task_id or ""
        self.book.close_task(task_id)
        await self.pauses.delete(task_id)
        await event_queue.enqueue_event(canceled(task_id, context.context_id or ""))

    def _lost(self, asked: Asked) -> AskError:
        """The task's open prompt stands for a call no paused run waits on: the pauses
        were lost while the task store kept the prompt (in memory across a restart)."""
        run = f"paused {self.framework} run"
        return lost(asked, "tool call", run, "pauses=SqlitePauses('pauses.sqlite')")
