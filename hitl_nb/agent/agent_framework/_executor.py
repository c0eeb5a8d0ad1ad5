"""``ApprovalExecutor``: a Microsoft Agent Framework agent as an a2a-sdk executor whose
tool approvals ask people.

One agent session per A2A task; the A2A side (a task started, an answer kept until every
call is answered, a message that answers nothing) is
:class:`~hitl_nb.agent._pausing.PausingExecutor`'s. A task starts with
``agent.run(text, session=session)`` on a new ``AgentSession``; a run whose response has
``function_approval_request``\\ s among its ``user_input_requests`` is kept as the
session's own serialization (``session.to_dict()``: its history, and the approval
requests the framework recorded, which an approval must match) beside the requests, each
request a prompt (see ``_calls``). Once all are answered the session is read back
(``AgentSession.from_dict``) and the run resumed with one user message holding each
request's ``function_approval_response``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agent_framework import AgentSession, Content, FunctionMiddleware, Message

from hitl_nb.errors import AskError

from .._extension import HitlExtension
from .._pauses import Paused, PauseStore
from .._pausing import Ended, PausingExecutor, Result, default_result
from ._calls import decide, pending_calls

__all__ = ["ApprovalExecutor"]


class _CarriesTheAnswer(FunctionMiddleware):
    """Passes every call through. With a function middleware in the run the framework
    hands the tool a context whose ``metadata`` holds the approval response (the person's
    answer, which ``approval_answer`` reads); without one it does not.

    A subclass rather than a ``@function_middleware`` function: the framework sorts a
    subclass by its class, and reads a function's signature (``inspect.signature``) on
    every run, which here would delay the resumed run on each answer."""

    async def process(self, context: Any, call_next: Callable[[], Awaitable[None]]) -> None:
        await call_next()


class ApprovalExecutor(PausingExecutor):
    """Serves a Microsoft Agent Framework ``Agent`` as an A2A agent whose tool approvals
    ask people through hitl-prompt/v1; see the module. ``ApprovalExecutor(agent, hitl)``
    with the agent's :class:`~hitl_nb.agent.HitlExtension`.

    ``schemas``: a tool's name to the response_schema its approval asks for (a Pydantic
    model or a JSON Schema; default: yes or no with a reason). ``pauses``: where a waiting
    run's session is kept (default :class:`MemoryPauses`; :class:`SqlitePauses` outlives a
    crash beside a database task store). ``run_kwargs``: given to every ``agent.run``
    (``options``, ``function_invocation_kwargs``...); ``result``: what a finished run
    answers with (its structured ``value``, else its text)."""

    framework = "Microsoft Agent Framework"

    def __init__(
        self,
        agent: Any,
        extension: HitlExtension,
        *,
        schemas: Mapping[str, Any] | None = None,
        pauses: PauseStore | None = None,
        run_kwargs: Mapping[str, Any] | None = None,
        result: Result = default_result,
    ) -> None:
        super().__init__(extension, pauses=pauses, result=result)
        self.agent = agent
        self.schemas: Mapping[str, Any] = dict(schemas or {})
        self.run_kwargs: dict[str, Any] = dict(run_kwargs or {})
        middleware = list(self.run_kwargs.pop("middleware", None) or [])
        self._middleware = [*middleware, _CarriesTheAnswer()]

    async def _run(self, messages: Any, session: AgentSession) -> Paused | Ended:
        response = await self.agent.run(
            messages, session=session, middleware=self._middleware, **self.run_kwargs
        )
        return self._stopped(response, session)

    async def start(self, text: str) -> Paused | Ended:
        """``agent.run`` on a new task's text, in a new session."""
        return await self._run(text, self.agent.create_session())

    async def resume(self, paused: Paused) -> Paused | Ended:
        """The kept session read back, and the run resumed with each request's response
        (approved or rejected by its answer)."""
        kept = json.loads(paused.run)
        session = AgentSession.from_dict(kept["session"])
        requests = [Content.from_dict(raw) for raw in kept["requests"]]
        responses = decide(requests, paused.answers)
        return await self._run(Message(role="user", contents=responses), session)

    def _stopped(self, response: Any, session: AgentSession) -> Paused | Ended:
        asked = list(response.user_input_requests)
        requests = [c for c in asked if c.type == "function_approval_request"]
        if len(requests) != len(asked):
            kinds = sorted({c.type for c in asked if c.type != "function_approval_request"})
            raise AskError(
                f"the run waits on {', '.join(kinds)}, which this bridge does not ask: only "
                "tool approvals (function_approval_request) become prompts"
            )
        if not requests:
            value = response.value
            return Ended(value if value is not None else response.text)
        run = {"session": session.to_dict(), "requests": [r.to_dict() for r in requests]}
        return Paused(json.dumps(run, ensure_ascii=False), pending_calls(requests, self.schemas))
