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

import html
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from importlib import resources
from typing import Any, Literal

from ._json import dumps_compact
from .errors import MalformedPrompt, MalformedResponse, SchemaRejected
from .validation import MAX_SCHEMA_BYTES, CompiledSchema, ValidationIssue, compile_schema

EXTENSION_URI = "https://agentic-sandbox.aiwg.io/extensions/hitl-prompt/v1"
SPEC_VERSION = "1.0.0"
HEADER_EXTENSIONS = "A2A-Extensions"
HEADER_EXTENSIONS_V03 = "X-A2A-Extensions"
HEADER_VERSION = "A2A-Version"
RESPONSE_KEY = "hitl_response_for"

CODE_ALREADY_ANSWERED = -32010
MESSAGE_ALREADY_ANSWERED = "hitl_already_answered_or_unknown"
HTTP_ALREADY_ANSWERED = 409
CODE_RESPONSE_INVALID = -32011
MESSAGE_RESPONSE_INVALID = "hitl_response_invalid"
HTTP_RESPONSE_INVALID = 422

#: §Prompt Envelope: the prompt SHOULD be at most this many characters.
MAX_PROMPT_CHARS = 4096
#: §Responder policy: the pattern every ``allowed_responders`` entry MUST match.
RESPONDER_PATTERN = r"^(any|specific:[^\s]+|consensus:[1-9][0-9]*)$"

PROMPT_MEMBERS = ("prompt_id", "prompt", "response_schema", "deadline", "allowed_responders")
RESPONSE_MEMBERS = ("prompt_id", "payload")

Mode = Literal["strict", "orchestrator"]

_UUID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-([0-9a-fA-F])[0-9a-fA-F]{3}-([0-9a-fA-F])[0-9a-fA-F]{3}-[0-9a-fA-F]{12}"
)
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))"
)
_RESPONDER = re.compile(RESPONDER_PATTERN)

S_FIELDS = "§Prompt Envelope / Field requirements"
S_RESPONSE = "§Response Envelope / Field requirements"
S_RESPONDERS = "§Responder policy"
S_2 = "§Security Considerations S-2"
S_4 = "§Security Considerations S-4"


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


# --- findings ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One thing a check found: where (JSON Pointer), which rule, which spec section."""

    pointer: str
    rule: str
    section: str
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        where = self.pointer or "(envelope)"
        return f"{self.severity}: {where}: {self.message} [{self.rule}, {self.section}]"


def _errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


# --- responder policy (§Responder policy) ------------------------------------------------


@dataclass(frozen=True)
class AnyResponder:
    """``"any"``: any responder the orchestrator authorizes may answer."""

    def __str__(self) -> str:
        return "any"


@dataclass(frozen=True)
class SpecificResponder:
    """``"specific:<id>"``: route only to the principal ``id``."""

    id: str

    def __str__(self) -> str:
        return f"specific:{self.id}"


@dataclass(frozen=True)
class ConsensusResponder:
    """``"consensus:N"``: N concurring responses before forwarding."""

    n: int

    def __str__(self) -> str:
        return f"consensus:{self.n}"


@dataclass(frozen=True)
class UnknownResponder:
    """A pattern this version does not know; an orchestrator MUST ignore it."""

    raw: str

    def __str__(self) -> str:
        return self.raw


Responder = AnyResponder | SpecificResponder | ConsensusResponder | UnknownResponder


def parse_responder(entry: str) -> Responder:
    """Type one ``allowed_responders`` entry; what the pattern refuses is Unknown."""
    if _RESPONDER.fullmatch(entry) is None:
        return UnknownResponder(entry)
    if entry == "any":
        return AnyResponder()
    kind, _, rest = entry.partition(":")
    return SpecificResponder(rest) if kind == "specific" else ConsensusResponder(int(rest))


def parse_responders(entries: list[str] | tuple[str, ...] | None) -> tuple[Responder, ...]:
    """Type a whole ``allowed_responders`` list; absent means ``["any"]`` (§Prompt Envelope)."""
    if entries is None:
        return (AnyResponder(),)
    return tuple(parse_responder(e) for e in entries)


# --- member checks -------------------------------------------------------------------


def parse_rfc3339(text: str) -> datetime | None:
    """An aware datetime for an RFC 3339 timestamp, or None if it is not one."""
    m = _RFC3339.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    micro = int((m.group(7) or ".0")[1:7].ljust(6, "0"))
    offset = 0
    if m.group(8):
        offset = int(m.group(9)) * 60 + int(m.group(10))
        if m.group(8) == "-":
            offset = -offset
    leap = second == 60  # RFC 3339 allows a leap second; datetime does not.
    if offset and abs(offset) >= 24 * 60:
        return None
    try:
        tz = timezone.utc if offset == 0 else timezone(timedelta(minutes=offset))
        value = datetime(year, month, day, hour, minute, 59 if leap else second, micro, tz)
    except ValueError:
        return None
    return value


def _check_uuid(value: Any, pointer: str, section: str, mode: Mode) -> list[Finding]:
    if not isinstance(value, str):
        return [Finding(pointer, "type", section, "prompt_id must be a string (an RFC 4122 UUID)")]
    m = _UUID.fullmatch(value)
    if m is None:
        return [Finding(pointer, "format", section, f"{value!r} is not an RFC 4122 UUID")]
    version, variant = m.group(1), m.group(2).lower()
    if value.strip("0-") == "" or value.lower().strip("f-") == "":
        return [Finding(pointer, "format", section, "the nil and max UUIDs are not unique ids")]
    if variant not in "89ab" or version not in "12345678":
        return [Finding(pointer, "format", section, f"{value!r} is not an RFC 4122 UUID")]
    if version in "678" and mode == "strict":
        return [
            Finding(
                pointer, "format", section,
                f"UUID version {version} is RFC 9562; the reference schema admits 1-5 only",
                "warning",
            )
        ]  # fmt: skip
    return []


def _check_schema(value: Any, pointer: str, mode: Mode) -> list[Finding]:
    if not isinstance(value, dict):
        return [Finding(pointer, "type", S_FIELDS, "response_schema must be a JSON object")]
    findings: list[Finding] = []
    if value.get("type") != "object":
        findings.append(
            Finding(
                pointer + "/type", "const", S_FIELDS, 'response_schema must declare type "object"'
            )
        )
    try:
        size = len(dumps_compact(value).encode("utf-8"))
    except (TypeError, ValueError):
        return findings + [Finding(pointer, "type", S_FIELDS, "response_schema is not JSON")]
    if size > MAX_SCHEMA_BYTES:
        return findings + [
            Finding(pointer, "maxSize", S_2, f"response_schema is {size} bytes, over 64 KiB")
        ]
    dialect = value.get("$schema")
    if (
        mode == "strict"
        and dialect is not None
        and dialect.rstrip("#") != ("https://json-schema.org/draft/2020-12/schema")
    ):
        findings.append(
            Finding(
                pointer + "/$schema", "const", S_FIELDS, "response_schema must be draft 2020-12"
            )
        )
    try:
        compile_schema(value)
    except SchemaRejected as exc:
        findings.append(Finding(pointer, "schema", S_FIELDS, str(exc)))
    if mode == "strict" and value.get("additionalProperties") is not False:
        findings.append(
            Finding(
                pointer + "/additionalProperties", "recommended", S_FIELDS,
                "response_schema SHOULD set additionalProperties: false", "warning",
            )
        )  # fmt: skip
    return findings


def _check_responders(value: Any, mode: Mode) -> list[Finding]:
    pointer = "/allowed_responders"
    if not isinstance(value, list):
        return [Finding(pointer, "type", S_RESPONDERS, "allowed_responders must be an array")]
    if not value:
        return [Finding(pointer, "minItems", S_RESPONDERS, "allowed_responders must not be empty")]
    findings = []
    for i, entry in enumerate(value):
        if not isinstance(entry, str):
            findings.append(
                Finding(f"{pointer}/{i}", "type", S_RESPONDERS, "entry must be a string")
            )
        elif _RESPONDER.fullmatch(entry) is None:
            severity: Literal["error", "warning"] = "error" if mode == "strict" else "warning"
            findings.append(
                Finding(
                    f"{pointer}/{i}", "pattern", S_RESPONDERS,
                    f"{entry!r} is not a known responder pattern"
                    + ("" if mode == "strict" else " (ignored)"),
                    severity,
                )
            )  # fmt: skip
    return findings


def check_prompt(obj: Any, *, mode: Mode = "strict", now: datetime | None = None) -> list[Finding]:
    """Every finding about a prompt envelope; it is acceptable when none is an error.

    ``now`` is the clock the strict check holds the deadline against (default: now, UTC).
    """
    if not isinstance(obj, dict):
        return [Finding("", "type", S_FIELDS, "the envelope must be a JSON object")]
    # Strict: the envelope MUST NOT carry other members. An orchestrator only warns:
    # §Versioning lets minor versions add optional fields.
    extra: Literal["error", "warning"] = "error" if mode == "strict" else "warning"
    findings: list[Finding] = [
        Finding(f"/{key}", "additionalProperties", S_FIELDS, f"unknown member {key!r}", extra)
        for key in obj
        if key not in PROMPT_MEMBERS
    ]
    for key in ("prompt_id", "prompt", "response_schema"):
        if key not in obj:
            findings.append(Finding(f"/{key}", "required", S_FIELDS, f"{key} is required"))
    if "prompt_id" in obj:
        findings += _check_uuid(obj["prompt_id"], "/prompt_id", S_FIELDS, mode)
    if "prompt" in obj:
        prompt = obj["prompt"]
        if not isinstance(prompt, str):
            findings.append(Finding("/prompt", "type", S_FIELDS, "prompt must be a string"))
        elif not prompt:
            findings.append(Finding("/prompt", "minLength", S_FIELDS, "prompt must not be empty"))
        elif len(prompt) > MAX_PROMPT_CHARS:
            findings.append(
                Finding(
                    "/prompt", "maxLength", S_FIELDS,
                    f"prompt is {len(prompt)} characters; it SHOULD be at most 4096", "warning",
                )
            )  # fmt: skip
    if "response_schema" in obj:
        findings += _check_schema(obj["response_schema"], "/response_schema", mode)
    if "deadline" in obj:
        findings += _check_deadline(obj["deadline"], mode, now)
    if "allowed_responders" in obj:
        findings += _check_responders(obj["allowed_responders"], mode)
    return findings


def _check_deadline(value: Any, mode: Mode, now: datetime | None) -> list[Finding]:
    if not isinstance(value, str) or parse_rfc3339(value) is None:
        return [Finding("/deadline", "format", S_FIELDS, "deadline must be an RFC 3339 timestamp")]
    at = parse_rfc3339(value)
    assert at is not None
    clock = now or datetime.now(timezone.utc)
    if at <= clock:
        if mode == "strict":
            return [Finding("/deadline", "future", S_FIELDS, "deadline must be in the future")]
        return [
            Finding("/deadline", "future", S_4, "deadline has passed (a soft signal)", "warning")
        ]
    return []


def check_response(obj: Any, *, mode: Mode = "strict") -> list[Finding]:
    """Every finding about a ``hitl_response_for`` object (§Response Envelope)."""
    if not isinstance(obj, dict):
        return [Finding("", "type", S_RESPONSE, "hitl_response_for must be a JSON object")]
    findings = [
        Finding(f"/{key}", "additionalProperties", S_RESPONSE, f"unknown member {key!r}")
        for key in obj
        if key not in RESPONSE_MEMBERS
    ]
    for key in RESPONSE_MEMBERS:
        if key not in obj:
            findings.append(Finding(f"/{key}", "required", S_RESPONSE, f"{key} is required"))
    if "prompt_id" in obj:
        findings += _check_uuid(obj["prompt_id"], "/prompt_id", S_RESPONSE, mode)
    if "payload" in obj and not isinstance(obj["payload"], dict):
        findings.append(Finding("/payload", "type", S_RESPONSE, "payload must be a JSON object"))
    return findings


def _summary(what: str, errors: list[Finding]) -> str:
    head = "; ".join(f"{f.pointer or '/'}: {f.message}" for f in errors[:3])
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    return f"malformed {what}: {head}{more}"


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

    @property
    def compiled_schema(self) -> CompiledSchema:
        """The response_schema compiled for validation (cached)."""
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


def find_envelope(metadata: Mapping[str, Any] | None) -> Any:
    """The raw envelope under the extension's key in a metadata object, or None."""
    if not isinstance(metadata, Mapping):
        return None
    return metadata.get(EXTENSION_URI)
