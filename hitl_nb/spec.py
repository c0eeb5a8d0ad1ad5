"""hitl-prompt/v1: constants, the two envelopes, and the checks the spec asks for.

Two checks, for the two sides of the conversation:

- ``strict``: what an agent MUST emit (§Prompt Envelope, §Response Envelope). The mock
  agent checks every envelope it sends with it; the conformance harness checks every
  envelope it receives with it.
- ``orchestrator``: what a consumer must accept or refuse. It refuses a structurally
  broken envelope and a ``response_schema`` over 64 KiB (S-2), reads a missing
  ``allowed_responders`` as ``["any"]`` and ignores unknown responder patterns
  (§Responder policy, forward compatibility), and does not refuse a past deadline (S-4).

Every :class:`Finding` names the member (a JSON Pointer), the rule and the section.

A deliberate difference from the reference schemas: ``prompt_id`` accepts UUID versions
1-8 (RFC 9562, which obsoletes RFC 4122, adds 6-8; agents increasingly mint v7 ids).
The strict check reports versions 6-8 as a warning, since the reference pattern admits
only 1-5; the nil and max UUIDs are refused (they are not unique).
"""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from typing import Any, Literal

from ._checks import (
    MAX_PROMPT_CHARS,
    Finding,
    Mode,
    _errors,
    _summary,
    check_prompt,
    check_response,
    parse_rfc3339,
)
from .errors import InvalidParams, MalformedPrompt, MalformedResponse
from .responders import (  # re-exported: the policy is part of the spec's API
    RESPONDER_PATTERN,
    AnyResponder,
    ConsensusResponder,
    Responder,
    SpecificResponder,
    UnknownResponder,
    parse_responder,
    parse_responders,
)
from .validation import CompiledSchema, ValidationIssue, compile_schema

__all__ = [
    "EXTENSION_URI",
    "HEADER_EXTENSIONS",
    "HEADER_EXTENSIONS_V03",
    "HEADER_VERSION",
    "MAX_PROMPT_CHARS",
    "RESPONDER_PATTERN",
    "RESPONSE_KEY",
    "SPEC_VERSION",
    "AnyResponder",
    "ConsensusResponder",
    "Finding",
    "Mode",
    "PromptEnvelope",
    "Responder",
    "ResponseEnvelope",
    "SpecificResponder",
    "UnknownResponder",
    "agent_card_extension",
    "bundled_schema",
    "check_prompt",
    "check_response",
    "find_envelope",
    "parse_responder",
    "parse_responders",
    "parse_rfc3339",
    "read_response",
]

EXTENSION_URI = "https://agentic-sandbox.aiwg.io/extensions/hitl-prompt/v1"
SPEC_VERSION = "1.0.0"
HEADER_EXTENSIONS = "A2A-Extensions"
HEADER_EXTENSIONS_V03 = "X-A2A-Extensions"
HEADER_VERSION = "A2A-Version"
RESPONSE_KEY = "hitl_response_for"

# The two errors of §Acceptance and rejection (-32010 / 409 and -32011 / 422, with their
# messages) are the classes PromptConflict and ResponseInvalid in hitl_nb.errors.


def bundled_schema(name: Literal["envelope", "response"]) -> dict[str, Any]:
    """The JSON Schema hitl-nb ships for the prompt (``"envelope"``) or response envelope."""
    text = resources.files("hitl_nb.schemas").joinpath(f"{name}.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def agent_card_extension(description: str | None = None) -> dict[str, Any]:
    """The AgentCard ``capabilities.extensions[]`` entry of §Activation, written out whole.

    ``required`` is always ``False`` and ``params`` always ``{}`` (§Activation, `params`
    schema); both are spelled out because some SDKs drop default values.
    """
    return {
        "uri": EXTENSION_URI,
        "description": description or "Structured HITL prompt envelope on INPUT_REQUIRED state.",
        "required": False,
        "params": {},
    }


# --- the envelopes ------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptEnvelope:
    """The structured prompt an agent attaches on INPUT_REQUIRED (§Prompt Envelope).

    ``deadline`` and ``allowed_responders`` are ``None`` when the agent left them out, so
    :meth:`to_json` gives back exactly what :meth:`from_json` read.
    """

    prompt_id: str
    prompt: str
    response_schema: dict[str, Any]
    deadline: str | None = None
    allowed_responders: tuple[str, ...] | None = None
    findings: tuple[Finding, ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def from_json(
        cls, obj: Any, *, mode: Mode = "strict", now: datetime | None = None
    ) -> PromptEnvelope:
        """Check ``obj`` (a dict, or JSON text) and build the envelope.

        Raises :class:`~hitl_nb.errors.MalformedPrompt` carrying the findings when any is
        an error. Warnings are kept on ``.findings``.
        """
        if isinstance(obj, (str, bytes)):
            from ._json import parse_json

            obj = parse_json(obj)
        findings = check_prompt(obj, mode=mode, now=now)
        errors = _errors(findings)
        if errors:
            raise MalformedPrompt(_summary("prompt envelope", errors), findings)
        responders = obj.get("allowed_responders")
        return cls(
            prompt_id=obj["prompt_id"],
            prompt=obj["prompt"],
            response_schema=json.loads(json.dumps(obj["response_schema"])),
            deadline=obj.get("deadline"),
            allowed_responders=tuple(responders) if responders is not None else None,
            findings=tuple(findings),
        )

    def to_json(self) -> dict[str, Any]:
        """The envelope as the JSON object that goes on the wire."""
        out: dict[str, Any] = {
            "prompt_id": self.prompt_id,
            "prompt": self.prompt,
            "response_schema": json.loads(json.dumps(self.response_schema)),
        }
        if self.deadline is not None:
            out["deadline"] = self.deadline
        if self.allowed_responders is not None:
            out["allowed_responders"] = list(self.allowed_responders)
        return out

    def to_metadata(self) -> dict[str, Any]:
        """``{EXTENSION_URI: envelope}``, for ``TaskStatus.message.metadata``."""
        return {EXTENSION_URI: self.to_json()}

    @property
    def responders(self) -> tuple[Responder, ...]:
        """The typed responder policy; absent means ``(AnyResponder(),)``."""
        return parse_responders(self.allowed_responders)

    @property
    def deadline_at(self) -> datetime | None:
        """The deadline as an aware datetime (None when there is none)."""
        return parse_rfc3339(self.deadline) if self.deadline else None

    @functools.cached_property
    def compiled_schema(self) -> CompiledSchema:
        """The response_schema compiled for validation (once per envelope)."""
        return compile_schema(self.response_schema)

    def validate(self, payload: Any) -> list[ValidationIssue]:
        """Issues with ``payload`` against this prompt's response_schema (``[]``: valid)."""
        return self.compiled_schema.validate(payload)

    def response(self, payload: dict[str, Any]) -> ResponseEnvelope:
        """The response envelope answering this prompt with ``payload``."""
        return ResponseEnvelope(self.prompt_id, payload)

    def __str__(self) -> str:
        lines = [f"Prompt {self.prompt_id}", self.prompt]
        if self.deadline:
            lines.append(f"Deadline: {self.deadline}")
        lines.append("Responders: " + ", ".join(str(r) for r in self.responders))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        # S-1: the prompt is data, never markup: everything is escaped.
        rows = [
            ("prompt_id", self.prompt_id),
            ("deadline", self.deadline or "none"),
            ("responders", ", ".join(str(r) for r in self.responders)),
        ]
        cells = "".join(
            f"<tr><th style='text-align:left'>{k}</th><td><code>{html.escape(v)}</code></td></tr>"
            for k, v in rows
        )
        return (
            "<div class='hitl-prompt'>"
            f"<p style='white-space:pre-wrap'>{html.escape(self.prompt)}</p>"
            f"<table>{cells}</table></div>"
        )


@dataclass(frozen=True)
class ResponseEnvelope:
    """The answer to a prompt: ``Message.metadata["hitl_response_for"]`` (§Response Envelope)."""

    prompt_id: str
    payload: dict[str, Any]

    @classmethod
    def from_json(cls, obj: Any, *, mode: Mode = "strict") -> ResponseEnvelope:
        """Check ``obj`` and build the envelope; raises MalformedResponse on an error."""
        if isinstance(obj, (str, bytes)):
            from ._json import parse_json

            obj = parse_json(obj)
        findings = check_response(obj, mode=mode)
        errors = _errors(findings)
        if errors:
            raise MalformedResponse(_summary("hitl_response_for", errors), findings)
        return cls(obj["prompt_id"], json.loads(json.dumps(obj["payload"])))

    def to_json(self) -> dict[str, Any]:
        """The ``hitl_response_for`` object."""
        return {"prompt_id": self.prompt_id, "payload": json.loads(json.dumps(self.payload))}

    def to_metadata(self) -> dict[str, Any]:
        """``{"hitl_response_for": ...}``, for ``Message.metadata``."""
        return {RESPONSE_KEY: self.to_json()}

    def __str__(self) -> str:
        return f"Response to {self.prompt_id}: {json.dumps(self.payload, ensure_ascii=False)}"

    def _repr_html_(self) -> str:
        body = html.escape(json.dumps(self.payload, indent=2, ensure_ascii=False))
        pid = html.escape(self.prompt_id)
        return (
            f"<div class='hitl-response'><b>Response to</b> <code>{pid}</code>"
            f"<pre>{body}</pre></div>"
        )


def read_response(raw: Any) -> tuple[str, dict[str, Any]]:
    """``(prompt_id, payload)`` of a message's ``hitl_response_for``, as an agent reads
    it: InvalidParams naming the member when it is not a ResponseEnvelope (§Response
    Envelope: the object MUST NOT carry other members)."""
    if not isinstance(raw, dict):  # from_json would read a string as JSON text
        raise InvalidParams(f"/message/metadata/{RESPONSE_KEY}: expected an object")
    try:
        response = ResponseEnvelope.from_json(raw)
    except MalformedResponse as exc:
        raise InvalidParams(f"/message/metadata/{RESPONSE_KEY}: {exc}") from None
    return response.prompt_id, response.payload


def find_envelope(metadata: Mapping[str, Any] | None) -> Any:
    """The raw envelope under the extension's key in a metadata object, or None."""
    if not isinstance(metadata, Mapping):
        return None
    return metadata.get(EXTENSION_URI)
