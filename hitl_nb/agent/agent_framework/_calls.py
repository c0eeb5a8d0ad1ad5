"""A Microsoft Agent Framework approval request as a hitl-prompt/v1 prompt, and the
answers as the framework's own ``function_approval_response``.

A run of an ``Agent`` whose tool has ``approval_mode="always_require"`` ends with the
call not run: the response's ``user_input_requests`` hold a ``function_approval_request``
``Content`` per call waiting on a person. Each is asked yes or no with a reason,
:data:`~hitl_nb.agent.agent_framework.APPROVAL_SCHEMA`; a tool named in ``schemas`` asks
for that schema's fields instead (a Pydantic model, or a JSON Schema as a dict). The
answer goes back as the request's own ``to_function_approval_response(approved)``, the
person's answer kept in its ``additional_properties`` (under :data:`ANSWER_KEY`), where
the tool reads it with :func:`approval_answer`. An answer with ``approved: false``
rejects the call: the tool does not run, and the model is told the framework's own
sentence for a rejected call (the framework has no place for a reason; the person's
reason stays in the response, in the session's history).

The tool's name and its arguments follow the question as plain text, so a person sees
what would run (S-1).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from hitl_nb.errors import AskError

from .._tool_calls import APPROVAL, APPROVAL_SCHEMA, Pending, refusal, schema_of

__all__ = ["ANSWER_KEY", "approval_answer", "call_id_of", "decide", "pending_calls"]

#: Where a response's ``additional_properties`` keep the person's answer.
ANSWER_KEY = "hitl_answer"


def call_id_of(request: Any, index: int) -> str:
    """The call's id as the model wrote it, else the request's own id, else a position."""
    call = request.function_call
    for found in (getattr(call, "call_id", None), request.id):
        if isinstance(found, str) and found:
            return found
    return f"call-{index}"


def _arguments(call: Any) -> dict[str, Any]:
    """The call's arguments as an object (whole numbers of any size exact), else the text
    as the model wrote it."""
    raw = call.arguments
    if raw is None or raw == "":
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {"arguments": raw}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}


def pending_calls(requests: Iterable[Any], schemas: Mapping[str, Any]) -> list[Pending]:
    """The calls the run waits on (its ``function_approval_request``\\ s), in the
    framework's order."""
    out = []
    for index, request in enumerate(requests):
        call = request.function_call
        name = call.name or "tool"
        schema = schema_of(schemas.get(name), name) or APPROVAL_SCHEMA
        question = f"Approve the call to {name}?"
        out.append(
            Pending(call_id_of(request, index), name, _arguments(call), APPROVAL, question, schema)
        )
    return out


def decide(requests: Iterable[Any], answers: Mapping[str, Any]) -> list[Any]:
    """Each request's ``function_approval_response``, approved or rejected by its answer
    (by call id), the answer kept in its ``additional_properties``."""
    responses = []
    for index, request in enumerate(requests):
        call_id = call_id_of(request, index)
        if call_id not in answers:
            raise AskError(
                f"the run waits on the call {call_id} to {request.function_call.name!r}, which "
                "no answer decides: the paused run and its prompts do not match"
            )
        answer = answers[call_id]
        response = request.to_function_approval_response(refusal(answer) is None)
        response.additional_properties = {
            **(response.additional_properties or {}),
            ANSWER_KEY: answer,
        }
        responses.append(response)
    return responses


def approval_answer(context: Any) -> dict[str, Any] | None:
    """Inside a tool: the person's answer that approved this call (the fields of its
    ``schemas`` entry, or ``{"approved": true, ...}``), or None when the call was not
    asked. ``context`` is the tool's ``FunctionInvocationContext`` (a parameter of that
    type, which the framework fills in)."""
    metadata = getattr(context, "metadata", None) or {}
    response = metadata.get("approval_response")
    found = (getattr(response, "additional_properties", None) or {}).get(ANSWER_KEY)
    return dict(found) if isinstance(found, dict) else None
