"""A deferred tool call of Pydantic AI as a hitl-prompt/v1 prompt, and the answers as
the framework's own ``DeferredToolResults``.

A run whose output is ``DeferredToolRequests`` waits on calls a person decides:

- **an approval** (a tool with ``requires_approval=True``, or one that raised
  ``ApprovalRequired``) asks yes or no, :data:`APPROVAL_SCHEMA` (``approved``, an optional
  ``reason``); ``ApprovalRequired(metadata={"response_schema": Model})`` asks for
  ``Model``'s fields instead (a Pydantic model, or a JSON Schema as a dict). The answer
  is ``ToolApproved()``, the fields in ``DeferredToolResults.metadata`` (the tool reads
  them as ``ctx.tool_call_metadata``), or ``ToolDenied(reason)`` when ``approved`` is
  false: the person's reason is what the model is told;
- **a question** (a tool that raised ``CallDeferred(kind="question", metadata=...)``, or
  any other deferred call) asks for ``metadata["response_schema"]``'s fields, or for
  words when it has none; the answer is the call's result (``DeferredToolResults.calls``):
  the fields as JSON, or the text.

``metadata["question"]`` is the question's wording (else one made from the tool's name).
The tool's name and its arguments follow it as plain text, so a person sees what would
run (S-1: the orchestrator shows ``prompt`` as text, never as markup).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from pydantic import BaseModel
from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied

from hitl_nb.errors import MalformedPrompt

from .._envelope import build_envelope
from .._prompts import Asked

__all__ = [
    "APPROVAL_SCHEMA",
    "DENIED",
    "Pending",
    "answer_value",
    "pending_calls",
    "prompt_for",
    "results_for",
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

_APPROVAL = "approval"


@dataclass(frozen=True)
class Pending:
    """A deferred call waiting on a person, as stored between runs (JSON only)."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    kind: str  # "approval", "question" or "external"
    question: str
    #: The response_schema; None: the call is answered in words.
    schema: dict[str, Any] | None

    @property
    def text(self) -> str:
        """The prompt's text: the question, then the tool and its arguments."""
        args = json.dumps(self.args, ensure_ascii=False, sort_keys=True, default=str)
        return f"{self.question}\n\nTool: {self.tool_name}\nArguments: {args}"

    def to_json(self) -> dict[str, Any]:
        """As stored."""
        return asdict(self)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Pending:
        """As :meth:`to_json` wrote it."""
        return cls(**raw)


def _schema_of(declared: Any, tool_name: str) -> dict[str, Any] | None:
    if declared is None:
        return None
    if isinstance(declared, type) and issubclass(declared, BaseModel):
        return declared.model_json_schema()
    if isinstance(declared, Mapping):
        return dict(declared)
    raise MalformedPrompt(
        f"the tool {tool_name!r} deferred with a response_schema that is neither a "
        f"Pydantic model nor a JSON Schema object: {declared!r}"
    )


def pending_calls(requests: DeferredToolRequests) -> list[Pending]:
    """The calls ``requests`` waits on, approvals first, each in Pydantic AI's order."""
    out = []
    for call in [*requests.approvals, *requests.calls]:
        call_id = call.tool_call_id
        kind = requests.kind(call_id)
        metadata = requests.metadata.get(call_id) or {}
        args = requests.validated_args.get(call_id)
        if args is None:
            args = call.args_as_dict()
        schema = _schema_of(metadata.get("response_schema"), call.tool_name)
        if kind == _APPROVAL and schema is None:
            schema = APPROVAL_SCHEMA
        question = metadata.get("question")
        if not isinstance(question, str) or not question.strip():
            question = (
                f"Approve the call to {call.tool_name}?"
                if kind == _APPROVAL
                else f"The agent asks you to answer for {call.tool_name}."
            )
        out.append(Pending(call_id, call.tool_name, args, kind, question, schema))
    return out


def prompt_for(pending: Pending, task_id: str) -> Asked:
    """The prompt standing for ``pending``, checked strictly (MalformedPrompt naming the
    tool); its tag is the tool call id, found again after a restart."""
    try:
        envelope = build_envelope(pending.text, pending.schema)
    except MalformedPrompt as exc:
        raise MalformedPrompt(
            f"the deferred call to {pending.tool_name!r} cannot be asked through "
            f"hitl-prompt/v1: {exc}",
            exc.findings,
        ) from None
    return Asked(task_id, envelope, tag=pending.tool_call_id)


def answer_value(asked: Asked, payload: dict[str, Any]) -> Any:
    """What is kept of an answer: the text for a question asked in words, else the
    payload."""
    return payload["text"] if asked.text else payload


def results_for(pending: Iterable[Pending], answers: Mapping[str, Any]) -> DeferredToolResults:
    """The answers, by tool call id, in Pydantic AI's own type."""
    results = DeferredToolResults()
    for call in pending:
        answer = answers[call.tool_call_id]
        if call.kind != _APPROVAL:
            results.calls[call.tool_call_id] = answer
        elif isinstance(answer, dict) and answer.get("approved") is False:
            reason = answer.get("reason")
            results.approvals[call.tool_call_id] = ToolDenied(
                reason if isinstance(reason, str) and reason.strip() else DENIED
            )
        else:
            results.approvals[call.tool_call_id] = ToolApproved()
            results.metadata[call.tool_call_id] = answer if isinstance(answer, dict) else {}
    return results
