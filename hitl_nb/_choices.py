"""One-choice prompts: the answers a ``response_schema`` offers as one click each.

A prompt is *one-choice* when its answer is one pick among a few fixed values and
nothing else is required: an object whose ``required`` names exactly one member, that
member a boolean (Yes / No, as the form shows it) or an ``enum`` (or a ``oneOf`` /
``anyOf`` of ``const`` options, each with its ``title``), every other member optional
and left out. An approval (``{"approve": boolean, "comment": string}`` with only
``approve`` required) is one. Such a prompt can be answered from a link per choice:
the email lists them, each opening a confirm page (a GET never answers; the POST does).

:func:`one_choice` gives the choices in order, each its words and its answer; the
choice is named by its index in links, never by its value: the value is always read
again from the stored schema. Every answer offered is checked against the whole schema
(its other keywords: ``additionalProperties``, ``if``/``then``...): a schema that would
refuse one of them offers none, so no link leads to a refusal the person could not
have seen coming.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hitl_nb.errors import SchemaRejected
from hitl_nb.validation import compile_schema

__all__ = ["MAX_CHOICES", "Choice", "one_choice", "options"]

#: The most choices a prompt offers as links (an email with more is no longer one click).
MAX_CHOICES = 10
#: The longest a choice's words may be before it is not offered as a link.
MAX_LABEL = 200


@dataclass(frozen=True)
class Choice:
    """One answer of a one-choice prompt: ``label`` its words ("Approve: Yes"),
    ``payload`` the answer it sends."""

    label: str
    payload: dict[str, Any]


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _words(value: Any) -> str:
    if value is True:
        return "Yes"
    if value is False:
        return "No"
    if value is None:
        return "none"
    return str(value)


def options(member: Mapping[str, Any]) -> list[tuple[str, Any]] | None:
    """``(words, value)`` for each value the member may take, or None (not one pick)."""
    if "enum" in member:
        values = member["enum"]
        if not isinstance(values, list) or not all(_scalar(v) for v in values):
            return None
        return [(_words(v), v) for v in values]
    for key in ("oneOf", "anyOf"):
        if key in member:
            branches = member[key]
            if not isinstance(branches, list):
                return None
            out = []
            for branch in branches:
                if not isinstance(branch, Mapping) or "const" not in branch:
                    return None
                if not _scalar(branch["const"]):
                    return None
                title = branch.get("title")
                words = title if isinstance(title, str) and title.strip() else None
                out.append((words or _words(branch["const"]), branch["const"]))
            return out
    if member.get("type") == "boolean" and "const" not in member:
        return [("Yes", True), ("No", False)]
    return None


def one_choice(schema: Any) -> tuple[Choice, ...]:
    """The choices of a one-choice prompt, in the schema's order; ``()`` when the prompt
    is not one (more to fill in, too many choices, a schema that would refuse one of
    them, or one that cannot be compiled)."""
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        return ()
    required = schema.get("required")
    properties = schema.get("properties")
    if not isinstance(required, list) or len(required) != 1 or not isinstance(properties, Mapping):
        return ()
    name = required[0]
    member = properties.get(name) if isinstance(name, str) else None
    if not isinstance(member, Mapping):
        return ()
    picks = options(member)
    if not picks or len(picks) > MAX_CHOICES:
        return ()
    title = member.get("title")
    field = title.strip() if isinstance(title, str) and title.strip() else name
    choices = tuple(Choice(f"{field}: {words}", {name: value}) for words, value in picks)
    if any(len(c.label) > MAX_LABEL for c in choices):
        return ()
    if len({repr(c.payload) for c in choices}) != len(choices):
        return ()  # two links with one answer: say nothing rather than something odd
    try:
        compiled = compile_schema(schema)
    except SchemaRejected:
        return ()
    if not all(compiled.is_valid(c.payload) for c in choices):
        return ()
    return choices
