"""A new prompt's envelope: a fresh UUID each time, checked strictly before anything is
emitted, each broken rule named."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from hitl_nb.agent import TEXT_SCHEMA
from hitl_nb.agent._envelope import build_envelope, rfc3339
from hitl_nb.errors import MalformedPrompt
from hitl_nb.spec import check_prompt

SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "additionalProperties": False,
}


def test_every_prompt_gets_a_fresh_uuid_and_passes_the_strict_check() -> None:
    made = [build_envelope("Ship?", SCHEMA) for _ in range(200)]
    assert len({e.prompt_id for e in made}) == 200
    assert all(uuid.UUID(e.prompt_id).version == 4 for e in made)
    assert not [f for f in check_prompt(made[0].to_json()) if f.severity == "error"]
    assert made[0].to_json().keys() == {"prompt_id", "prompt", "response_schema"}


def test_no_schema_asks_for_words() -> None:
    assert build_envelope("Your name?", None).response_schema == TEXT_SCHEMA


def test_deadlines_and_responders() -> None:
    now = datetime(2030, 1, 2, 3, 4, 5, 678_900, tzinfo=timezone.utc)
    assert rfc3339(timedelta(minutes=1), now) == "2030-01-02T03:05:05.678Z"
    assert rfc3339(now.astimezone(timezone(timedelta(hours=2)))) == "2030-01-02T03:04:05.678Z"
    envelope = build_envelope("Ship?", SCHEMA, deadline=timedelta(hours=1), responders=["any"])
    assert envelope.deadline is not None and envelope.allowed_responders == ("any",)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"prompt": ""}, "/prompt: prompt must not be empty"),
        (
            {"response_schema": {"type": "array"}},
            '/response_schema/type: response_schema must declare type "object"',
        ),
        ({"response_schema": []}, "response_schema must be a JSON object"),
        ({"response_schema": {"type": "object", "x": "y" * 66_000}}, "over 64 KiB"),
        ({"response_schema": {"type": "object", "minimum": "one"}}, "/response_schema"),
        ({"responders": ["consensus:0"]}, "not a known responder pattern"),
        ({"responders": "any"}, "give a list of patterns"),
        ({"deadline": datetime(2000, 1, 1, tzinfo=timezone.utc)}, "deadline must be in the future"),
        ({"deadline": datetime(2099, 1, 1)}, "without a time zone"),
        ({"deadline": "tomorrow"}, "RFC 3339"),
    ],
)
def test_a_broken_rule_is_named(kwargs: dict[str, Any], words: str) -> None:
    args: dict[str, Any] = {"prompt": "Ship?", "response_schema": SCHEMA, **kwargs}
    prompt, schema = args.pop("prompt"), args.pop("response_schema")
    with pytest.raises(MalformedPrompt) as error:
        build_envelope(prompt, schema, **args)
    assert words in str(error.value)
