"""``ApprovalExecutor``: an OpenAI Agents SDK agent as an a2a-sdk executor whose tool
approvals ask people.

One SDK run per A2A task; the A2A side (a task started, an answer kept until every
interruption is answered, a message that answers nothing) is
:class:`~hitl_nb.agent._pausing.PausingExecutor`'s. A task starts with
``Runner.run(agent, text)``; a run that ends with ``interruptions`` is kept as its
``RunState`` (``result.to_state().to_json()``), each interruption a prompt (see
``_calls``); once all are answered the state is read back (``RunState.from_json``), each
call approved or rejected (the person's reason as the ``rejection_message``) and the run
resumed with ``Runner.run(agent, state)``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agents import Runner, RunState

from .._extension import HitlExtension
from .._pauses import Paused, PauseStore
from .._pausing import Ended, PausingExecutor, Result, default_result
from ._calls import answers_given, decide, pending_calls

__all__ = ["ApprovalExecutor"]


def _nothing(_: Any) -> Mapping[str, Any]:
    """A live context is not stored: it is given again when the run resumes."""
    return {}


class ApprovalExecutor(PausingExecutor):
    """Serves an OpenAI Agents SDK ``Agent`` as an A2A agent whose tool approvals ask
    people through hitl-prompt/v1; see the module. ``ApprovalExecutor(agent, hitl)`` with
    the agent's :class:`~hitl_nb.agent.HitlExtension`.

    ``schemas``: a tool's name to the response_schema its approval asks for (a Pydantic
    model or a JSON Schema; default: yes or no with a reason). ``pauses``: where a waiting
    run's ``RunState`` is kept (default :class:`MemoryPauses`; :class:`SqlitePauses`
    outlives a crash beside a database task store). ``context``, ``max_turns``,
    ``run_config``: given to ``Runner.run`` (the context is given again on resuming, not
    stored); ``result``: what a finished run answers with (its ``final_output``)."""

    framework = "OpenAI Agents SDK"

    def __init__(
        self,
        agent: Any,
        extension: HitlExtension,
        *,
        schemas: Mapping[str, Any] | None = None,
        pauses: PauseStore | None = None,
        context: Any = None,
        max_turns: int | None = None,
        run_config: Any = None,
        result: Result = default_result,
    ) -> None:
        super().__init__(extension, pauses=pauses, result=result)
        self.agent = agent
        self.schemas: Mapping[str, Any] = dict(schemas or {})
        self.context = context
        self._options: dict[str, Any] = {"context": context, "run_config": run_config}
        if max_turns is not None:
            self._options["max_turns"] = max_turns

    async def start(self, text: str) -> Paused | Ended:
        """``Runner.run`` on a new task's text."""
        return self._stopped(await Runner.run(self.agent, text, **self._options))

    async def resume(self, paused: Paused) -> Paused | Ended:
        """The kept ``RunState``, each call decided by its answer, run again."""
        state = await RunState.from_json(
            self.agent,
            json.loads(paused.run),
            context_override=self.context,
        )
        decide(state, paused.answers)
        with answers_given(paused.answers):
            return self._stopped(await Runner.run(self.agent, state, **self._options))

    def _stopped(self, result: Any) -> Paused | Ended:
        if not result.interruptions:
            return Ended(result.final_output)
        serializer = _nothing if self.context is not None else None
        state = result.to_state().to_json(context_serializer=serializer)
        run = json.dumps(state, ensure_ascii=False)
        return Paused(run, pending_calls(result.interruptions, self.schemas))
