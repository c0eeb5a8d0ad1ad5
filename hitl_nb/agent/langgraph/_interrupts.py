"""A LangGraph interrupt as a hitl-prompt/v1 prompt, and an answer as its resume value.

``interrupt(value, response_schema=...)`` (LangGraph 1.2) pauses a node and surfaces an
``Interrupt`` with ``value``, ``id`` and ``response_schema`` (JSON Schema: a Pydantic
model, ``TypedDict`` or dataclass arrives converted). It becomes a prompt:

- the question is ``value`` when it is text, else the text under ``question``,
  ``prompt``, ``message`` or ``text`` of a dict value, else ``value`` as JSON; a dict
  value also travels whole, as a data part beside the question;
- the response_schema is the interrupt's; an interrupt without one asks for words
  (:data:`~hitl_nb.agent.TEXT_SCHEMA`), and the graph is resumed with the text itself;
- the envelope is checked strictly (:func:`~hitl_nb.agent._envelope.build_envelope`): an
  interrupt whose schema breaks the spec (not ``type: "object"``, over 64 KiB, not a valid
  schema) raises :class:`~hitl_nb.errors.MalformedPrompt` (the executor names the node
  that called ``interrupt``), and nothing is emitted.

Pydantic's own ``ValidationError`` on a resume value (LangGraph validates a Pydantic
schema itself, after ours) becomes ``validation_errors`` here (:func:`issues_of`).
"""

from __future__ import annotations

import json
from typing import Any

from hitl_nb import _pointer

from .._envelope import build_envelope
from .._prompts import Asked

__all__ = ["issues_of", "prompt_for", "question_of", "resume_value"]

_QUESTION_KEYS = ("question", "prompt", "message", "text")


def question_of(value: Any) -> str:
    """The question an interrupt's ``value`` asks, as text."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in _QUESTION_KEYS:
            if isinstance(value.get(key), str):
                return str(value[key])
    return json.dumps(value, ensure_ascii=False, default=str)


def prompt_for(interrupt: Any, task_id: str) -> Asked:
    """The prompt standing for ``interrupt``, checked strictly (MalformedPrompt)."""
    envelope = build_envelope(question_of(interrupt.value), interrupt.response_schema)
    return Asked(task_id, envelope, tag=interrupt.id)


def resume_value(asked: Asked, payload: dict[str, Any]) -> Any:
    """What the graph is resumed with: the text for a question asked in words (an
    interrupt without a schema), else the payload."""
    return payload["text"] if asked.text else payload


def issues_of(error: Any) -> list[dict[str, str]]:
    """A Pydantic ``ValidationError`` as the spec's ``validation_errors`` entries."""
    out = []
    for item in error.errors():
        loc = [str(p) for p in item.get("loc", ())]
        out.append(
            {
                "path": _pointer.join("", *loc) if loc else "",
                "keyword": str(item.get("type", "pydantic")),
                "message": str(item.get("msg", "")),
            }
        )
    return out
