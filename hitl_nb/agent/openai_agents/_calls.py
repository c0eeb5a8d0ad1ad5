"""An OpenAI Agents SDK interruption as a hitl-prompt/v1 prompt, and the answers as the
SDK's own ``RunState.approve`` and ``RunState.reject``.

A run whose ``interruptions`` hold ``ToolApprovalItem``\\ s waits on calls a person
decides (a function tool with ``needs_approval=True``, or a ``needs_approval`` callable
that said yes for this call; the SDK's other tools that ask for approval alike). Each is
asked yes or no with a reason, :data:`~hitl_nb.agent.openai_agents.APPROVAL_SCHEMA`;
a tool named in ``schemas`` asks for that schema's fields instead (a Pydantic model, or a
JSON Schema as a dict), which the tool reads with :func:`approval_answer`. An answer
with ``approved: false`` rejects the call, the person's reason the message the model is
told (``rejection_message``); any other answer approves it.

The tool's name and its arguments follow the question as plain text, so a person sees
what would run (S-1).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from hitl_nb.errors import AskError

from .._tool_calls import APPROVAL, APPROVAL_SCHEMA, Pending, refusal, schema_of

__all__ = ["answers_given", "approval_answer", "decide", "pending_calls"]

#: The answers of the run resuming now, by tool call id (what approval_answer reads).
_ANSWERS: ContextVar[Mapping[str, Any] | None] = ContextVar("hitl_nb_openai_answers", default=None)


def _call_id(item: Any, index: int) -> str:
    """The call's id as the model wrote it (a position for an item without one)."""
    found = item.call_id
    return found if isinstance(found, str) and found else f"call-{index}"


def _arguments(item: Any) -> dict[str, Any]:
    """The call's arguments as an object (whole numbers of any size exact), else the text
    as the model wrote it."""
    text = item.arguments
    if text is None:
        return {}
    try:
        parsed = json.loads(text)
    except ValueError:
        return {"arguments": text}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}


def pending_calls(interruptions: Iterable[Any], schemas: Mapping[str, Any]) -> list[Pending]:
    """The calls the run waits on (its ``ToolApprovalItem``\\ s), in the SDK's order."""
    out = []
    for index, item in enumerate(interruptions):
        name = item.qualified_name or item.name or "tool"
        declared = schemas.get(name, schemas.get(item.name or ""))
        schema = schema_of(declared, name) or APPROVAL_SCHEMA
        question = f"Approve the call to {name}?"
        call_id = _call_id(item, index)
        out.append(Pending(call_id, name, _arguments(item), APPROVAL, question, schema))
    return out


def decide(state: Any, answers: Mapping[str, Any]) -> None:
    """Each interruption of ``state`` approved or rejected by its answer (by call id)."""
    for index, item in enumerate(state.get_interruptions()):
        call_id = _call_id(item, index)
        if call_id not in answers:
            raise AskError(
                f"the run waits on the call {call_id} to {item.name!r}, which no answer "
                "decides: the paused run and its prompts do not match"
            )
        denied = refusal(answers[call_id])
        if denied is None:
            state.approve(item)
        else:
            state.reject(item, rejection_message=denied)


@contextmanager
def answers_given(answers: Mapping[str, Any]) -> Iterator[None]:
    """The answers readable by :func:`approval_answer` while the run resumes."""
    token = _ANSWERS.set(dict(answers))
    try:
        yield
    finally:
        _ANSWERS.reset(token)


def approval_answer(context: Any) -> dict[str, Any] | None:
    """Inside a tool: the person's answer that approved this call (the fields of its
    ``schemas`` entry, or ``{"approved": true, ...}``), or None when the call was not
    asked. ``context`` is the tool's ``ToolContext`` (its first parameter)."""
    found = (_ANSWERS.get() or {}).get(getattr(context, "tool_call_id", ""))
    return dict(found) if isinstance(found, dict) else None
