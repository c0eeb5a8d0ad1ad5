"""A prompt answered by one choice: the buttons a chat message can offer for it.

A one-choice prompt's response schema is an object with exactly one required property,
a boolean or an ``enum`` of a few plain values, every other property optional (an
approval: ``approve`` required, ``comment`` optional). Its answer is that property set
to one of its values, nothing else: :func:`one_choice` lists them, in order, as
:class:`Choice` (the label a button shows, the payload its click answers with). Any
other schema has no choices (the message links to the answer page instead).

A button carries its choice's index, never the value: the click's payload is made here
again from the prompt's stored schema, and the gateway checks it like any answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_CHOICES", "Choice", "one_choice"]

#: At most this many buttons (more: the answer page).
MAX_CHOICES = 5
#: A button's label is at most this long (Slack's limit for a button's text).
LABEL_LIMIT = 75


@dataclass(frozen=True)
class Choice:
    """One button: ``label`` (the agent's words: neutralise before showing) and the
    ``payload`` a click answers with."""

    label: str
    payload: dict[str, Any]


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _label(value: Any) -> str:
    if value is True:
        return "Yes"
    if value is False:
        return "No"
    return value if isinstance(value, str) else json.dumps(value)


def one_choice(schema: Any) -> tuple[Choice, ...]:
    """The choices of a one-choice response schema, in order; ``()`` for any other."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return ()
    props = schema.get("properties")
    required = schema.get("required")
    if not isinstance(props, Mapping) or not isinstance(required, list) or len(required) != 1:
        return ()
    if any(key in schema for key in ("oneOf", "anyOf", "allOf", "if", "$ref", "not")):
        return ()
    (name,) = required
    prop = props.get(name)
    if not isinstance(name, str) or not isinstance(prop, Mapping):
        return ()
    values: list[Any]
    if isinstance(prop.get("enum"), list):
        values = list(prop["enum"])
        if not values or not all(_scalar(v) for v in values):
            return ()
    elif prop.get("type") == "boolean" and "const" not in prop:
        values = [True, False]
    else:
        return ()
    if len(values) > MAX_CHOICES or len({json.dumps(v) for v in values}) != len(values):
        return ()
    return tuple(Choice(_label(v), {name: v}) for v in values)
