"""The gate: an answer is checked, and held for its prompt, before the SDK sees it.

:class:`Gate` is given one send request (its message decoded, the task it names read from
the SDK's task store) and decides, before anything changes (§Acceptance and rejection):

- not an answer (a new task, a plain message, a message to a task that waits on no
  prompt of ours): let it through, the SDK and the executor take it as usual;
- an answer to a prompt that is not the task's open one, or is answered or held already:
  :class:`~hitl_nb.errors.PromptConflict` (409 / -32010);
- a payload that does not validate: :class:`~hitl_nb.errors.ResponseInvalid` (422 /
  -32011, with ``validation_errors``); the task stays INPUT_REQUIRED;
- a ``hitl_response_for`` that is not the spec's shape, or that names no task:
  :class:`~hitl_nb.errors.InvalidParams` (-32602 / 400) naming the member;
- otherwise the answer is held (:class:`~hitl_nb.agent._prompts.Hold`) and the request
  goes on to the SDK; the executor takes the held answer when the SDK runs it.

A task the store does not have, or a ``contextId`` that is not the task's, is let through
too: the SDK answers those with its own errors (TaskNotFound, InvalidParams).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from hitl_nb.a2a import Message
from hitl_nb.errors import InvalidParams
from hitl_nb.spec import read_response

from ._answers import check_payload, conflict, plain_answer, response_in
from ._prompts import Asked, Hold, PromptBook, StoredTask

__all__ = ["Gate", "TaskReader"]


#: Reads a task from the SDK's store for the request at hand (None: no such task).
TaskReader = Callable[[str], Awaitable[StoredTask | None]]


class Gate:
    """Checks answers against the open prompt of their task and holds those that pass."""

    def __init__(self, book: PromptBook) -> None:
        self.book = book

    async def check(self, message: Message, read_task: TaskReader) -> Hold | None:
        """The answer ``message`` carries, held; None when it is not an answer.

        Raises PromptConflict, ResponseInvalid or InvalidParams with nothing changed.
        """
        raw = response_in(message)
        if raw is not None:
            prompt_id, payload = read_response(raw)  # InvalidParams naming the member
            if message.task_id is None:
                raise InvalidParams("/message/taskId: an answer names the task it answers")
        elif message.task_id is None:
            return None  # a new task
        task = await read_task(message.task_id)
        if task is None or (message.context_id not in (None, task.context_id)):
            return None  # the SDK's own answer: TaskNotFound, or InvalidParams
        asked = self.book.open_prompt(message.task_id, task)
        if raw is None:
            if asked is None:
                return None
            offered = plain_answer(message, asked)
            if offered is None:
                return None  # a plain message: kept in the history, the prompt stays open
            prompt_id, payload = asked.prompt_id, offered
        if asked is None or asked.prompt_id != prompt_id or self.book.is_held(prompt_id):
            raise conflict(message.task_id, prompt_id)
        return self._hold(asked, message, payload)

    def _hold(self, asked: Asked, message: Message, payload: dict[str, Any]) -> Hold:
        check_payload(asked, payload)  # ResponseInvalid, nothing held
        return self.book.hold(asked, message.message_id, payload)
