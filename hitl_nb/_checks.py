"""The checks of hitl-prompt/v1 envelopes, strict (agent side) and orchestrator (consumer).

Each rule quotes the section it comes from; each :class:`Finding` names the member as a
JSON Pointer. :mod:`hitl_nb.spec` builds its envelopes on these checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

from . import _pointer
from ._json import dumps_compact
from ._rfc3339 import read_date_time
from .errors import SchemaRejected
from .responders import _RESPONDER
from .validation import MAX_SCHEMA_BYTES, compile_schema

Mode = Literal["strict", "orchestrator"]

#: §Prompt Envelope: the prompt SHOULD be at most this many characters.
MAX_PROMPT_CHARS = 4096

PROMPT_MEMBERS = ("prompt_id", "prompt", "response_schema", "deadline", "allowed_responders")
RESPONSE_MEMBERS = ("prompt_id", "payload")


_UUID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-([0-9a-fA-F])[0-9a-fA-F]{3}-([0-9a-fA-F])[0-9a-fA-F]{3}-[0-9a-fA-F]{12}"
)

S_FIELDS = "§Prompt Envelope / Field requirements"
S_RESPONSE = "§Response Envelope / Field requirements"
S_RESPONDERS = "§Responder policy"
S_2 = "§Security Considerations S-2"
S_4 = "§Security Considerations S-4"


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


# --- member checks -------------------------------------------------------------------


def parse_rfc3339(text: str) -> datetime | None:
    """An aware datetime for an RFC 3339 timestamp, or None if it is not one (read by
    :mod:`hitl_nb._rfc3339`; a leap second counts as the second before it, as
    :mod:`datetime` has none)."""
    reading = read_date_time(text)
    if reading is None or reading.date is None:
        return None
    offset = reading.offset_minutes
    if abs(offset) >= 24 * 60:
        return None
    hour, minute, second, micro = reading.time
    try:
        tz = timezone.utc if offset == 0 else timezone(timedelta(minutes=offset))
        second = 59 if second == 60 else second
        return datetime(*reading.date, hour, minute, second, micro, tz)
    except ValueError:
        return None


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
                pointer,
                "format",
                section,
                f"UUID version {version} is RFC 9562; the reference schema admits 1-5 only",
                "warning",
            )
        ]
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
        and isinstance(dialect, str)  # anything else: compiling refuses it, below
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
                pointer + "/additionalProperties",
                "recommended",
                S_FIELDS,
                "response_schema SHOULD set additionalProperties: false",
                "warning",
            )
        )
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
                    f"{pointer}/{i}",
                    "pattern",
                    S_RESPONDERS,
                    f"{entry!r} is not a known responder pattern"
                    + ("" if mode == "strict" else " (ignored)"),
                    severity,
                )
            )
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
        Finding(
            _pointer.join("", key),
            "additionalProperties",
            S_FIELDS,
            f"unknown member {key!r}",
            extra,
        )
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
                    "/prompt",
                    "maxLength",
                    S_FIELDS,
                    f"prompt is {len(prompt)} characters; it SHOULD be at most 4096",
                    "warning",
                )
            )
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
        Finding(
            _pointer.join("", key), "additionalProperties", S_RESPONSE, f"unknown member {key!r}"
        )
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
