"""``ask``: a question to a person from inside an executor, answered by a payload."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater

from hitl_nb.errors import AskError

from ._envelope import Deadline
from ._executor import Relay

__all__ = ["ask"]


async def ask(
    target: TaskUpdater | EventQueue,
    prompt: str,
    response_schema: Mapping[str, Any] | None = None,
    *,
    deadline: Deadline | None = None,
    responders: Iterable[str] | None = None,
) -> dict[str, Any]:
    """Ask a person, and return their answer: a payload valid against ``response_schema``.

    Call it inside the ``execute`` of an executor wrapped by
    :meth:`HitlExtension.wrap <hitl_nb.agent.HitlExtension.wrap>`, with the event queue
    the executor was given (or a ``TaskUpdater`` on it). The task moves to
    INPUT_REQUIRED with a hitl-prompt/v1 envelope: a fresh UUID ``prompt_id``, the
    ``prompt``, the ``response_schema`` (``None``: the question is answered in words, and
    the payload is ``{"text": ...}``), the ``deadline`` (an aware datetime, a timedelta
    from now, or RFC 3339 text) and the ``responders`` (``allowed_responders``: ``"any"``,
    ``"specific:<id>"``, ``"consensus:<N>"``). A client that did not activate the
    extension sees the question as plain text, and may answer with a data part or JSON.

    The answer is checked before this returns it (409 / 422 to anyone who sends a wrong
    one, the task staying INPUT_REQUIRED); when it is accepted the task moves to WORKING
    at once and ``ask`` returns its payload. The deadline is a soft signal (S-4): the
    prompt stays open after it.

    Raises :class:`~hitl_nb.errors.MalformedPrompt` (with ``findings``) when the prompt
    breaks the spec (empty, a schema that is not ``type: "object"``, over 64 KiB or not a
    valid schema, a deadline in the past, an unknown responder pattern): nothing is
    emitted. Raises :class:`~hitl_nb.errors.AskError` outside a wrapped executor, and when
    a task resumed after a restart asks something other than what it asked before.
    """
    queue = getattr(target, "event_queue", target)
    if not isinstance(queue, Relay):
        raise AskError(
            "ask() needs the event queue a wrapped executor is given (or a TaskUpdater on "
            "it): wrap the executor with HitlExtension.wrap(...) and pass execute()'s "
            "event_queue"
        )
    return await queue.run.ask(prompt, response_schema, deadline, responders)
