"""A tool call waiting on a person, as every agent framework bridge asks it: the
hitl-prompt/v1 prompt standing for the call, and what a person's answer decides.

A framework whose run stops on tool calls (Pydantic AI's deferred tools, the OpenAI
Agents SDK's approvals) hands its bridge the calls; the bridge makes a :class:`Pending`
of each (the call id, the tool, its arguments, the question, the response_schema), kept
as JSON with the paused run, and :func:`prompt_for` asks it. A plain approval asks
:data:`APPROVAL_SCHEMA`, yes or no with a reason; :func:`refusal` reads an answer's
``approved: false`` and the reason the model is told.

The tool's name and its arguments follow the question as plain text, so a person sees
what would run (S-1: the orchestrator shows ``prompt`` as text, never as markup).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from hitl_nb.errors import MalformedPrompt

from ._envelope import build_envelope
from ._prompts import Asked

__all__ = [
    "APPROVAL",
    "APPROVAL_SCHEMA",
    "DENIED",
    "Pending",
    "answer_value",
    "asked_for",
    "call_text",
    "prompt_for",
    "refusal",
    "schema_of",
]

#: What a plain approval asks: yes or no, and why (the reason a denial hands the model).
APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Approval",
    "properties": {
        "approved": {"type": "boolean", "title": "Approve"},
        "reason": {"type": "string", "title": "Reason", "maxLength": 2000},
    },
    "required": ["approved"],
    "additionalProperties": False,
}

#: What the model is told of a call denied without a reason.
DENIED = "The person denied the call."

#: The kind of a call a person approves (or denies).
APPROVAL = "approval"


@dataclass(frozen=True)
class Pending:
    """A tool call waiting on a person, as stored between runs (JSON only)."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    kind: str  # "approval", or the framework's own kinds ("question", "external")
    question: str
    #: The response_schema; None: the call is answered in words.
    schema: dict[str, Any] | None

    @property
    def text(self) -> str:
        """The prompt's text: the question, then the tool and its arguments."""
        return call_text(self.question, self.tool_name, self.args)

    def to_json(self) -> dict[str, Any]:
        """As stored."""
        return asdict(self)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Pending:
        """As :meth:`to_json` wrote it."""
        return cls(**raw)


def call_text(question: str, tool_name: str, args: Mapping[str, Any]) -> str:
    """A tool call's prompt text: the question, then the tool's name and its arguments as
    plain text (what would run)."""
    shown = json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
    return f"{question}\n\nTool: {tool_name}\nArguments: {shown}"


def schema_of(declared: Any, tool_name: str) -> dict[str, Any] | None:
    """The response_schema a tool declared: a Pydantic model's JSON Schema, a JSON Schema
    object as is, None for none (MalformedPrompt naming the tool for anything else)."""
    if declared is None:
        return None
    made = getattr(declared, "model_json_schema", None)
    if isinstance(declared, type) and callable(made):
        schema: dict[str, Any] = made()
        return schema
    if isinstance(declared, Mapping):
        return dict(declared)
    raise MalformedPrompt(
        f"the schema given for the tool {tool_name!r} is neither a Pydantic model nor a "
        f"JSON Schema object: {declared!r}"
    )


def prompt_for(pending: Pending, task_id: str) -> Asked:
    """The prompt standing for ``pending``, checked strictly (MalformedPrompt naming the
    tool); its tag is the tool call id, found again after a restart."""
    return asked_for(task_id, pending.text, pending.schema, pending.tool_call_id, pending.tool_name)


def asked_for(
    task_id: str, text: str, schema: dict[str, Any] | None, tag: str, tool_name: str
) -> Asked:
    """The prompt asking ``text`` with ``schema`` for a call to ``tool_name``, checked
    strictly (MalformedPrompt naming the tool), tagged ``tag`` (the id the framework
    knows the call by)."""
    try:
        envelope = build_envelope(text, schema)
    except MalformedPrompt as exc:
        raise MalformedPrompt(
            f"the call to {tool_name!r} cannot be asked through hitl-prompt/v1: {exc}",
            exc.findings,
        ) from None
    return Asked(task_id, envelope, tag=tag)


def answer_value(asked: Asked, payload: dict[str, Any]) -> Any:
    """What is kept of an answer: the text for a question asked in words, else the
    payload."""
    return payload["text"] if asked.text else payload


def refusal(answer: Any) -> str | None:
    """What the model is told of a denied call (the person's reason, else
    :data:`DENIED`); None when the answer approves (anything but ``approved: false``)."""
    if not (isinstance(answer, dict) and answer.get("approved") is False):
        return None
    reason = answer.get("reason")
    return reason if isinstance(reason, str) and reason.strip() else DENIED
