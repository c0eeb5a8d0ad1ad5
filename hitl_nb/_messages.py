"""Short, human messages for jsonschema errors (the ``message`` of a ValidationIssue)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import ValidationError

_JSON_TYPES = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
    type(None): "null",
}


def json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _short(value: Any, limit: int = 60) -> str:
    text: str = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def number_text(value: Any) -> str:
    """A number as a person writes it: ``10.0`` (a protobuf double) reads ``10``."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


#: Keywords whose value is a number the message quotes.
_NUMBERS = frozenset(
    "minimum maximum exclusiveMinimum exclusiveMaximum multipleOf minLength maxLength "
    "minItems maxItems minProperties maxProperties".split()
)


def message_for(error: ValidationError) -> str:
    # Here, not at the top: json_type is wanted where jsonschema is not loaded yet.
    from ._keywords import OWN_KEYWORDS

    kw, want, got = error.validator, error.validator_value, error.instance
    if kw in _NUMBERS and isinstance(want, float):
        want = number_text(want)
    # Our own keywords word their messages, but for ``properties`` (its False member)
    # and ``multipleOf`` (worded below, like the other bounds).
    if kw in OWN_KEYWORDS and kw not in ("properties", "multipleOf"):
        return error.message
    if kw is None or (kw == "properties" and want is False):  # the schema `false`
        return "no value is allowed here"
    if kw == "type":
        expected = " or ".join(want) if isinstance(want, list) else str(want)
        return f"expected {expected}, got {json_type(got)}"
    if kw == "enum":
        options = want if isinstance(want, list) else []
        return "must be one of " + ", ".join(_short(v, 30) for v in options[:10])
    if kw == "const":
        return f"must be {_short(want)}"
    if kw == "minLength":
        return f"must be at least {want} characters"
    if kw == "maxLength":
        return f"must be at most {want} characters"
    # draft 4 writes an exclusive bound as a boolean beside minimum/maximum
    exclusive = isinstance(error.schema, dict) and error.schema.get(f"exclusive{str(kw).title()}")
    if kw == "minimum":
        return f"must be {'greater than' if exclusive is True else 'at least'} {want}"
    if kw == "maximum":
        return f"must be {'less than' if exclusive is True else 'at most'} {want}"
    if kw == "exclusiveMinimum":
        return f"must be greater than {want}"
    if kw == "exclusiveMaximum":
        return f"must be less than {want}"
    if kw == "multipleOf":
        return f"must be a multiple of {want}"
    if kw == "format":
        return f"is not a valid {want}"
    if kw == "minItems":
        return f"must have at least {want} items"
    if kw == "maxItems":
        return f"must have at most {want} items"
    if kw == "minProperties":
        return f"must have at least {want} properties"
    if kw == "maxProperties":
        return f"must have at most {want} properties"
    if kw == "anyOf":
        return "does not match any of the allowed forms"
    if kw == "oneOf":
        return "must match exactly one of the allowed forms"
    if kw == "not":
        return "is not allowed"
    if kw == "contains":
        return "has no item of the required kind"
    return error.message
