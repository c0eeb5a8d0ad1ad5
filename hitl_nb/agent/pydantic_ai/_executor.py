"""``DeferredExecutor``: a Pydantic AI agent as an a2a-sdk executor whose deferred tool
calls ask people.

One Pydantic AI run history per A2A task; the A2A side (a task started, an answer kept
until every call is answered, a message that answers nothing) is
:class:`~hitl_nb.agent._pausing.PausingExecutor`'s. A task starts with the agent run on
the message's text, its output type widened with ``DeferredToolRequests``; it resumes
with ``message_history=`` and ``deferred_tool_results=`` (``ToolApproved`` /
``ToolDenied(reason)``, the structured fields, the words: see ``_calls``). The history is
kept as Pydantic AI writes it (``ModelMessagesTypeAdapter``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai import DeferredToolRequests
from pydantic_ai.messages import ModelMessagesTypeAdapter

from .._extension import HitlExtension
from .._pauses import Paused, PauseStore
from .._pausing import Ended, PausingExecutor, Result, default_result
from ._calls import pending_calls, results_for

__all__ = ["DeferredExecutor", "Result", "default_result"]


def _widened(output_type: Any) -> Any:
    """The agent's output type with ``DeferredToolRequests`` among the choices."""
    if isinstance(output_type, Sequence) and not isinstance(output_type, str):
        choices = list(output_type)
    else:
        choices = [output_type]
    if DeferredToolRequests not in choices:
        choices.append(DeferredToolRequests)
    return choices


class DeferredExecutor(PausingExecutor):
    """Serves a Pydantic AI ``Agent`` as an A2A agent whose deferred tool calls ask
    people through hitl-prompt/v1; see the module. ``DeferredExecutor(agent, hitl)`` with
    the agent's :class:`~hitl_nb.agent.HitlExtension`.

    ``pauses``: where a waiting run is kept (default :class:`MemoryPauses`;
    :class:`SqlitePauses` outlives a crash beside a database task store). ``deps``: the
    run's dependencies; ``result``: what a finished run answers with."""

    framework = "Pydantic AI"

    def __init__(
        self,
        agent: Any,
        extension: HitlExtension,
        *,
        pauses: PauseStore | None = None,
        deps: Any = None,
        result: Result = default_result,
    ) -> None:
        super().__init__(extension, pauses=pauses, result=result)
        self.agent = agent
        self.deps = deps
        self._output_type = _widened(agent.output_type)

    async def start(self, text: str) -> Paused | Ended:
        """The agent run on a new task's text."""
        return await self._run(text)

    async def resume(self, paused: Paused) -> Paused | Ended:
        """The agent run again with its history and the answers."""
        return await self._run(
            None,
            message_history=ModelMessagesTypeAdapter.validate_json(paused.run),
            deferred_tool_results=results_for(paused.pending, paused.answers),
        )

    async def _run(self, prompt: str | None, **given: Any) -> Paused | Ended:
        run = await self.agent.run(prompt, output_type=self._output_type, deps=self.deps, **given)
        output = run.output
        if isinstance(output, DeferredToolRequests):
            history = ModelMessagesTypeAdapter.dump_json(run.all_messages()).decode()
            return Paused(history, pending_calls(output))
        return Ended(output)
