"""``ConfirmationExecutor``: an ADK runner as an a2a-sdk executor whose tool
confirmations ask people.

One ADK session per A2A task (its id is the task id), in the runner's session service.
A request:

- **starts** a task: the session is created and the agent runs on the message's text;
- **answers** the open prompt (the middleware checked and held the answer, 409 / 422
  before any of this runs): when every confirmation the session waits on is answered,
  the task is shown WORKING and the agent runs on one user message carrying a function
  response per confirmation, each ADK's ``ToolConfirmation`` (see ``_confirmations``);
  until then each answer is kept in the session's state and the next confirmation is
  asked. If the session waits on no such confirmation (it was kept in memory across a
  restart, the task store was not), ``AskError`` fails the task saying what to do;
- **says something else**: while the session waits, the message is kept in the task's
  history and the open prompt is asked again (the agent is not run); otherwise the
  agent runs on it in the same session (a next turn of the conversation).

What the session waits on is read from its events each time (the calls to
``adk_request_confirmation`` with no function response after them), so a prompt outlives
a restart with the session service (``DatabaseSessionService`` on SQLite, say) beside a
database task store. Confirmations are asked one at a time (an A2A task shows one status
at a time), each with its own prompt_id, the confirmation call's id beside the envelope.
A run that ends completes the task with ``result(events)``; one that stops on a
long-running call that is not a confirmation fails the task, naming it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part
from google.adk.events import Event, EventActions
from google.adk.runners import Runner
from google.genai import types

from hitl_nb.errors import AskError

from .._events import ask, ask_again, canceled, complete_with, first_task, lost, updater_for
from .._extension import HitlExtension
from .._prompts import Asked, PromptBook
from ._confirmations import (
    PayloadSchemas,
    Pending,
    other_waits,
    pending_confirmations,
    prompt_for,
    response_for,
)

__all__ = ["ANSWERS_KEY", "ConfirmationExecutor", "Result", "default_result"]

log = logging.getLogger(__name__)

#: The session state key of the answers given so far while several confirmations wait.
ANSWERS_KEY = "hitl_nb_answers"

#: What a finished run answers with, from the run's events: text, a JSON object (a data
#: artifact), or parts.
Result = Callable[[Sequence[Event]], "str | Mapping[str, Any] | list[Part]"]


def default_result(events: Sequence[Event]) -> str:
    """The text of the run's final response (the last event that is one and has text),
    else "Done."."""
    for event in reversed(events):
        if event.is_final_response() and event.content is not None:
            text = "".join(p.text or "" for p in event.content.parts or [] if not p.thought)
            if text:
                return text
    return "Done."


class ConfirmationExecutor(AgentExecutor):
    """Serves an ADK ``Runner`` as an A2A agent whose tool confirmations ask people
    through hitl-prompt/v1; see the module. ``ConfirmationExecutor(runner, hitl)`` with
    the agent's :class:`~hitl_nb.agent.HitlExtension`.

    ``user_id``: the ADK user the sessions belong to; ``payload_schemas``: a payload's
    schema by tool name (a Pydantic model or a JSON Schema; see
    :mod:`hitl_nb.agent.adk`); ``result``: what a finished run answers with."""

    def __init__(
        self,
        runner: Runner,
        extension: HitlExtension,
        *,
        user_id: str = "a2a",
        payload_schemas: PayloadSchemas | None = None,
        result: Result = default_result,
    ) -> None:
        self.runner = runner
        self.book: PromptBook = extension.book
        self.user_id = user_id
        self.payload_schemas: PayloadSchemas = dict(payload_schemas or {})
        self.result = result

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run, resume or re-ask, as the module says."""
        updater = updater_for(context, event_queue)
        task_id, context_id, current = updater.task_id, updater.context_id, context.current_task
        message = context.message
        taken = self.book.take(task_id, message.message_id) if message is not None else None
        said = types.Content(role="user", parts=[types.Part(text=context.get_user_input())])
        if current is None:
            await event_queue.enqueue_event(first_task(task_id, context_id, message))
            await self.runner.session_service.create_session(
                app_name=self.runner.app_name, user_id=self.user_id, session_id=task_id
            )
            await self._run(updater, said)
            return
        session = await self.runner.session_service.get_session(
            app_name=self.runner.app_name, user_id=self.user_id, session_id=task_id
        )
        pending = pending_confirmations(session.events) if session is not None else []
        answers: dict[str, Any] = dict(session.state.get(ANSWERS_KEY) or {}) if session else {}
        waits_on = next((p for p in pending if p.confirmation_id not in answers), None)
        if taken is not None and (waits_on is None or waits_on.confirmation_id != taken.asked.tag):
            raise _lost(taken.asked)
        if session is None or waits_on is None:
            if session is None:
                await self.runner.session_service.create_session(
                    app_name=self.runner.app_name, user_id=self.user_id, session_id=task_id
                )
            await self._run(updater, said)
            return
        if taken is None:
            await ask_again(self.book, current, updater)
            return
        answers[waits_on.confirmation_id] = taken.payload
        following = next((p for p in pending if p.confirmation_id not in answers), None)
        if following is not None:
            # Kept in the session (JSON: whole numbers of any size stay exact) before
            # the next prompt is emitted, so both outlive a restart together.
            kept = Event(author="hitl-nb", actions=EventActions(state_delta={ANSWERS_KEY: answers}))
            await self.runner.session_service.append_event(session, kept)
            await self._ask(following, updater)
            return
        await updater.start_work()  # AC-4: the answer is accepted
        await self._run(updater, response_for(pending, answers), {ANSWERS_KEY: None})

    async def _run(
        self,
        updater: TaskUpdater,
        message: types.Content,
        state_delta: dict[str, Any] | None = None,
    ) -> None:
        """One run of the agent: stopped on confirmations (the first asked; the
        session keeps them), or ended (the task completed)."""
        events = []
        async for event in self.runner.run_async(
            user_id=self.user_id,
            session_id=updater.task_id,
            new_message=message,
            state_delta=state_delta,
        ):
            events.append(event)
        pending = pending_confirmations(events)
        if pending:
            await self._ask(pending[0], updater)
            return
        others = other_waits(events)
        if others:
            raise AskError(
                f"the agent waits on the long-running call(s) {', '.join(others)}: only "
                "tool confirmations (require_confirmation, tool_context."
                "request_confirmation) are asked through hitl-prompt/v1"
            )
        await complete_with(updater, self.result(events))

    async def _ask(self, pending: Pending, updater: TaskUpdater) -> None:
        await ask(self.book, prompt_for(pending, updater.task_id, self.payload_schemas), updater)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Close the task's prompts and mark it CANCELED (the session stays as is)."""
        task_id = context.task_id or ""
        self.book.close_task(task_id)
        await event_queue.enqueue_event(canceled(task_id, context.context_id or ""))


def _lost(asked: Asked) -> AskError:
    """The task's open prompt stands for a confirmation its session does not wait on:
    the session was lost while the task store kept the prompt (in memory across a
    restart)."""
    sessions = "session_service=DatabaseSessionService('sqlite+aiosqlite:///sessions.sqlite')"
    return lost(asked, "ADK confirmation", "ADK session", sessions)
