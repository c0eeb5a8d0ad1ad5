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

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied

from .._tool_calls import APPROVAL, APPROVAL_SCHEMA, Pending, refusal, schema_of

__all__ = ["pending_calls", "results_for"]


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
        schema = schema_of(metadata.get("response_schema"), call.tool_name)
        if kind == APPROVAL and schema is None:
            schema = APPROVAL_SCHEMA
        question = metadata.get("question")
        if not isinstance(question, str) or not question.strip():
            question = (
                f"Approve the call to {call.tool_name}?"
                if kind == APPROVAL
                else f"The agent asks you to answer for {call.tool_name}."
            )
        out.append(Pending(call_id, call.tool_name, args, kind, question, schema))
    return out


def results_for(pending: Iterable[Pending], answers: Mapping[str, Any]) -> DeferredToolResults:
    """The answers, by tool call id, in Pydantic AI's own type."""
    results = DeferredToolResults()
    for call in pending:
        answer = answers[call.tool_call_id]
        denied = refusal(answer)
        if call.kind != APPROVAL:
            results.calls[call.tool_call_id] = answer
        elif denied is not None:
            results.approvals[call.tool_call_id] = ToolDenied(denied)
        else:
            results.approvals[call.tool_call_id] = ToolApproved()
            results.metadata[call.tool_call_id] = answer if isinstance(answer, dict) else {}
    return results
