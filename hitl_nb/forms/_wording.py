"""What a form says to a person: labels, messages, counts and type names in words.

The validator's messages (:mod:`hitl_nb._messages`) are written for logs and for the
agent side ("expected integer, got string", "duplicate of item 0"); a form shows people
the same facts in their words: the field's label instead of a JSON Pointer, counts from
1, plurals right, "number" and "yes/no" instead of type names. The rewording reads the
keyword and the field's own schema, never parses free text it does not own, and falls
back to the validator's message for anything it does not know.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .._messages import number_text

#: JSON types in words a person uses.
TYPE_WORDS = {
    "string": "text",
    "number": "a number",
    "integer": "a whole number",
    "boolean": "yes or no",
    "array": "a list",
    "object": "a group of fields",
    "null": "no value",
}

_WORD_BREAK = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[_\-\s.]+")


def readable(key: str) -> str:
    """A property key as a label: ``build_id`` and ``buildId`` -> ``Build id``."""
    words = [w for w in _WORD_BREAK.split(key) if w]
    if not words:
        return key or "Value"
    text = " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in words)
    return text[0].upper() + text[1:]


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 character``, ``2 characters`` (``many`` when the plural is irregular)."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def _choices(values: list[Any], limit: int = 6) -> str:
    shown = [
        v if isinstance(v, str) else number_text(v) if _isnumber_text(v) else repr(v)
        for v in values
    ]
    text = ", ".join(str(s) for s in shown[:limit])
    return text + (", …" if len(shown) > limit else "")


def _isnumber_text(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_DUPLICATE = re.compile(r"duplicate of item (\d+)")

_FORMAT_WORDS = {
    "email": "an email address",
    "uri": "a full web address (https://…)",
    "uri-reference": "a web address",
    "iri": "a full web address",
    "uuid": "a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
    "date": "a date (YYYY-MM-DD)",
    "date-time": "a date and time with its time zone",
    "time": "a time with its time zone (hh:mm:ss+00:00)",
    "ipv4": "an IPv4 address",
    "ipv6": "an IPv6 address",
    "hostname": "a host name",
    "duration": "a duration (e.g. P3D)",
}


def for_person(keyword: str, message: str, schema: Mapping[str, Any] | None, kind: str = "") -> str:
    """The message a person reads for a validator issue on a field with ``schema``.

    ``kind`` is the field's kind (``boolean`` fields ask to choose, not to type).
    """
    s: Mapping[str, Any] = schema if isinstance(schema, Mapping) else {}
    want = s.get(keyword)
    if keyword == "required":
        if kind == "boolean":
            return "Choose Yes or No"
        if kind in ("enum", "variant"):
            return "Choose one"
        return "Required"
    if keyword == "minLength" and isinstance(want, int):
        if want == 1:
            return "Cannot be empty"
        return f"Use at least {plural(want, 'character')}"
    if keyword == "maxLength" and isinstance(want, int):
        return f"Use at most {plural(want, 'character')}"
    if keyword == "minimum" and _isnumber_text(want):
        return f"Must be {number_text(want)} or more"
    if keyword == "maximum" and _isnumber_text(want):
        return f"Must be {number_text(want)} or less"
    if keyword == "exclusiveMinimum" and _isnumber_text(want):
        return f"Must be more than {number_text(want)}"
    if keyword == "exclusiveMaximum" and _isnumber_text(want):
        return f"Must be less than {number_text(want)}"
    if keyword == "multipleOf" and _isnumber_text(want):
        return f"Must be a multiple of {number_text(want)}"
    if keyword == "minItems" and isinstance(want, int):
        return f"Add at least {plural(want, 'entry', 'entries')}"
    if keyword == "maxItems" and isinstance(want, int):
        return f"Keep at most {plural(want, 'entry', 'entries')}"
    if keyword == "minProperties" and isinstance(want, int):
        return f"Fill in at least {plural(want, 'field')}"
    if keyword == "maxProperties" and isinstance(want, int):
        return f"Fill in at most {plural(want, 'field')}"
    if keyword == "enum" and isinstance(want, list):
        return f"Choose one of: {_choices(want)}"
    if keyword == "const" and "const" in s:
        return f"Must be {_choices([s['const']])}"
    if keyword == "format" and isinstance(s.get("format"), str):
        fmt = s["format"]
        return f"Enter {_FORMAT_WORDS.get(fmt, 'a valid ' + fmt)}"
    if keyword == "pattern":
        return "Does not have the expected form" + (
            f" ({s['pattern']})"
            if isinstance(s.get("pattern"), str) and len(s["pattern"]) < 40
            else ""
        )
    if keyword == "type":
        types = s.get("type")
        names = [types] if isinstance(types, str) else types if isinstance(types, list) else []
        words = [TYPE_WORDS.get(t, t) for t in names if isinstance(t, str) and t != "null"]
        if words:
            return "Enter " + " or ".join(words)
    if keyword == "uniqueItems":
        found = _DUPLICATE.search(message)
        if found:
            return f"Same as entry #{int(found.group(1)) + 1}"
        return "Entries must differ"
    if keyword == "additionalProperties":
        return "This field is not expected here"
    if keyword in ("oneOf", "anyOf"):
        return "Fits none of the choices: pick one and fill it in"
    return _sentence(message)


def _sentence(message: str) -> str:
    """The validator's message, starting with a capital like the others."""
    message = message.strip()
    return message[:1].upper() + message[1:] if message else message
