"""An ADK tool confirmation as a hitl-prompt/v1 prompt, and the answer as ADK's own
``ToolConfirmation``.

A run stops on confirmations as ADK's ``adk_request_confirmation`` function calls (one
per tool call that waits), each carrying the original call and the
``ToolConfirmation`` asked for:

- **a plain confirmation** (``FunctionTool(func, require_confirmation=...)``, or
  ``tool_context.request_confirmation(hint=...)`` without a payload) asks yes or no,
  :data:`CONFIRM_SCHEMA` (``confirmed``);
- **a confirmation with a payload** (``request_confirmation(payload=...)``) asks
  ``confirmed`` and ``payload``, the payload's schema being the Pydantic model or JSON
  Schema given for the tool (``payload_schemas={"tool": Model}``), else one derived from
  the payload's shape (:func:`shape_schema`: objects with every key required and no
  other, arrays of what their items are, strings, integers, numbers, booleans; a None
  is a string that may be null). The payload ADK sent is the form's default value, and
  ``payload`` is required when ``confirmed`` is true.

ADK passes the payload on as JSON: a Pydantic model given as the payload reaches the
bridge as its fields, not its class, which is why a tool's model is named in
``payload_schemas`` (the tool then reads it back with ``Model.model_validate``).

The hint is the question's wording (ADK's own hint of a ``require_confirmation`` tool,
which tells a program how to answer, is replaced by "Confirm the call to TOOL?"). The
tool's name and its arguments follow it as plain text, so a person sees what would run
(S-1: the orchestrator shows ``prompt`` as text, never as markup).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from google.adk.events import Event
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types
from pydantic import BaseModel

from hitl_nb.errors import MalformedPrompt

from .._prompts import Asked
from .._tool_calls import asked_for, call_text, schema_of

__all__ = [
    "CONFIRM_SCHEMA",
    "CONFIRMATION_CALL",
    "Pending",
    "PayloadSchemas",
    "other_waits",
    "pending_confirmations",
    "prompt_for",
    "response_for",
    "schema_for",
    "shape_schema",
]

#: The name of ADK's function call that asks for a tool confirmation.
CONFIRMATION_CALL = "adk_request_confirmation"

#: What a plain confirmation asks: yes or no.
CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Confirmation",
    "properties": {"confirmed": {"type": "boolean", "title": "Confirm"}},
    "required": ["confirmed"],
    "additionalProperties": False,
}

#: A tool's payload schema by tool name: a Pydantic model or a JSON Schema object.
PayloadSchemas = Mapping[str, "type[BaseModel] | Mapping[str, Any]"]

# The start of the hint ADK gives a require_confirmation tool's confirmation, written for
# the program that answers, not for a person.
_ADK_HINT = "Please approve or reject the tool call "


@dataclass(frozen=True)
class Pending:
    """A tool call waiting on a person's confirmation, as read from the session."""

    #: The id of ADK's ``adk_request_confirmation`` call (the answer's function response's).
    confirmation_id: str
    tool_name: str
    args: dict[str, Any]
    hint: str
    #: The payload ADK sent (None: a plain confirmation).
    payload: Any

    @property
    def question(self) -> str:
        """The hint, or a question made from the tool's name."""
        if self.hint.strip() and not self.hint.startswith(_ADK_HINT):
            return self.hint
        return f"Confirm the call to {self.tool_name}?"

    @property
    def text(self) -> str:
        """The prompt's text: the question, then the tool and its arguments."""
        return call_text(self.question, self.tool_name, self.args)


def _confirmations(event: Event) -> list[types.FunctionCall]:
    """The confirmation calls an event asks (the long-running ones only)."""
    waits = event.long_running_tool_ids or set()
    return [
        call
        for call in event.get_function_calls()
        if call.name == CONFIRMATION_CALL and call.id in waits
    ]


def _answered(events: Iterable[Event]) -> set[str]:
    return {r.id for e in events for r in e.get_function_responses() if r.id}


def pending_confirmations(events: Iterable[Event]) -> list[Pending]:
    """The confirmations ``events`` (a session's, in order) wait on, in ADK's order."""
    events = list(events)
    answered = _answered(events)
    out = []
    for event in events:
        for call in _confirmations(event):
            if call.id is None or call.id in answered:
                continue
            args = call.args or {}
            original = args.get("originalFunctionCall") or {}
            asked = ToolConfirmation.model_validate(args.get("toolConfirmation") or {})
            out.append(
                Pending(
                    call.id,
                    str(original.get("name", "")),
                    dict(original.get("args") or {}),
                    asked.hint,
                    asked.payload,
                )
            )
    return out


def other_waits(events: Iterable[Event]) -> list[str]:
    """The names of long-running calls ``events`` wait on that are not confirmations
    (what this bridge does not ask)."""
    events = list(events)
    answered = _answered(events)
    return [
        call.name or ""
        for e in events
        for call in e.get_function_calls()
        if call.id in (e.long_running_tool_ids or set())
        and call.name != CONFIRMATION_CALL
        and call.id not in answered
    ]


def shape_schema(value: Any) -> dict[str, Any]:
    """A JSON Schema of ``value``'s shape (see the module)."""
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    if value is None:
        return {"type": ["string", "null"]}
    if isinstance(value, Mapping):
        return {
            "type": "object",
            "properties": {str(k): shape_schema(v) for k, v in value.items()},
            "required": [str(k) for k in value],
            "additionalProperties": False,
        }
    if isinstance(value, list | tuple):
        items: dict[str, dict[str, Any]] = {}
        for item in value:
            schema = shape_schema(item)
            items.setdefault(json.dumps(schema, sort_keys=True), schema)
        kinds = list(items.values())
        if not kinds:
            return {"type": "array"}
        return {"type": "array", "items": kinds[0] if len(kinds) == 1 else {"anyOf": kinds}}
    raise MalformedPrompt(
        f"a confirmation payload holds a value that is not JSON: {value!r} ({type(value).__name__})"
    )


def schema_for(pending: Pending, payload_schemas: PayloadSchemas) -> dict[str, Any]:
    """The response_schema asking for ``pending``: :data:`CONFIRM_SCHEMA`, or
    ``confirmed`` and ``payload`` (see the module)."""
    declared = payload_schemas.get(pending.tool_name)
    if pending.payload is None and declared is None:
        return CONFIRM_SCHEMA
    payload = schema_of(declared, pending.tool_name) or shape_schema(pending.payload)
    # A model's own definitions go to the root, where its "#/$defs/..." references point.
    definitions = payload.pop("$defs", None)
    payload = {"title": "Details", **payload}
    if pending.payload is not None:
        payload["default"] = pending.payload
    schema: dict[str, Any] = {
        "type": "object",
        "title": "Confirmation",
        "properties": {"confirmed": CONFIRM_SCHEMA["properties"]["confirmed"], "payload": payload},
        "required": ["confirmed"],
        "additionalProperties": False,
        "if": {"properties": {"confirmed": {"const": True}}},
        "then": {"required": ["payload"]},
    }
    if definitions:
        schema["$defs"] = definitions
    return schema


def prompt_for(pending: Pending, task_id: str, payload_schemas: PayloadSchemas) -> Asked:
    """The prompt standing for ``pending``, checked strictly (MalformedPrompt naming the
    tool); its tag is the confirmation call's id, found again after a restart."""
    schema = schema_for(pending, payload_schemas)
    return asked_for(task_id, pending.text, schema, pending.confirmation_id, pending.tool_name)


def response_for(pending: Iterable[Pending], answers: Mapping[str, Any]) -> types.Content:
    """The answers, by confirmation id, as the user's message that resumes the run: one
    function response per confirmation, each ADK's ``ToolConfirmation``."""
    parts = []
    for call in pending:
        answer = answers[call.confirmation_id]
        confirmation = ToolConfirmation(
            confirmed=answer.get("confirmed") is True, payload=answer.get("payload")
        )
        parts.append(
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.confirmation_id,
                    name=CONFIRMATION_CALL,
                    response=confirmation.model_dump(by_alias=True, exclude_none=True),
                )
            )
        )
    return types.Content(role="user", parts=parts)
