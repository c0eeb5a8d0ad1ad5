"""A prompt envelope built from what an agent asks, checked as strictly as the mock agent
checks its own, before anything is emitted (§Prompt Envelope, S-2, S-5).

:func:`build_envelope` gives every prompt a fresh UUID (S-5: "``prompt_id`` MUST be
globally unique within the agent's lifetime") and raises
:class:`~hitl_nb.errors.MalformedPrompt` naming each broken rule: an empty prompt, a
``response_schema`` that is not ``type: "object"``, over 64 KiB or not a valid draft
2020-12 schema, a deadline not in the future, a responder that does not match
``^(any|specific:[^\\s]+|consensus:[1-9][0-9]*)$``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from hitl_nb.errors import MalformedPrompt
from hitl_nb.spec import PromptEnvelope

from ._prompts import TEXT_SCHEMA

__all__ = ["Deadline", "build_envelope", "rfc3339"]

#: A deadline as ``ask`` takes it: an aware datetime, a time from now, or RFC 3339 text.
Deadline = datetime | timedelta | str


def rfc3339(value: Deadline, now: datetime | None = None) -> str:
    """``value`` as an RFC 3339 timestamp (UTC, milliseconds) for the envelope."""
    if isinstance(value, str):
        return value
    if isinstance(value, timedelta):
        value = (now or datetime.now(timezone.utc)) + value
    if value.tzinfo is None:
        raise MalformedPrompt(
            "malformed prompt envelope: /deadline: a datetime without a time zone is "
            "ambiguous; give an aware datetime (e.g. datetime.now(timezone.utc) + ...)"
        )
    utc = value.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def build_envelope(
    prompt: str,
    response_schema: Mapping[str, Any] | None,
    *,
    deadline: Deadline | None = None,
    responders: Iterable[str] | None = None,
) -> PromptEnvelope:
    """The envelope of a new prompt, checked strictly (MalformedPrompt with findings)."""
    raw: dict[str, Any] = {
        "prompt_id": str(uuid.uuid4()),
        "prompt": prompt,
        "response_schema": TEXT_SCHEMA if response_schema is None else response_schema,
    }
    if deadline is not None:
        raw["deadline"] = rfc3339(deadline)
    if responders is not None:
        if isinstance(responders, str):
            raise MalformedPrompt(
                "malformed prompt envelope: /allowed_responders: give a list of patterns, "
                f"e.g. [{responders!r}], not a string"
            )
        raw["allowed_responders"] = list(responders)
    # PromptEnvelope.from_json runs the strict check (the mock agent's own) and raises
    # MalformedPrompt carrying every finding; warnings stay on .findings.
    return PromptEnvelope.from_json(raw, mode="strict")
