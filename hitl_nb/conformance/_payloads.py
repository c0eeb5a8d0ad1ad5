"""Payloads the harness answers with: one that satisfies a response_schema, one that does not.

The harness does not know the agent's questions in advance, so it builds answers from
the ``response_schema`` of each prompt: :func:`valid_payload` picks the smallest value
that validates (required members only; ``const``, ``enum``, ``default``, ``examples``,
formats, bounds), :func:`invalid_payload` breaks one rule of it (drops a required
member, gives a member the wrong type, adds a member ``additionalProperties: false``
forbids). Both are confirmed with the bounded validator before they are used; when no
candidate works, None is returned and the driver must supply the payload.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

from hitl_nb._pointer import unescape
from hitl_nb.errors import SchemaRejected
from hitl_nb.validation import validate_payload

__all__ = ["example_value", "invalid_payload", "payload_issues", "valid_payload"]

_NOTHING: Any = object()
_MAX_DEPTH = 12
#: The member :func:`invalid_payload` adds when extra members are forbidden.
EXTRA_MEMBER = "hitl_conformance_unexpected_member"

_FORMAT_EXAMPLES = {
    "date": "2026-01-02",
    "date-time": "2026-01-02T03:04:05Z",
    "time": "03:04:05Z",
    "email": "reviewer@example.org",
    "idn-email": "reviewer@example.org",
    "uri": "https://example.org/x",
    "iri": "https://example.org/x",
    "uri-reference": "https://example.org/x",
    "iri-reference": "https://example.org/x",
    "uuid": "7f5a3c1e-2b4d-4e6f-8a9b-0c1d2e3f4a5b",
    "hostname": "example.org",
    "idn-hostname": "example.org",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "duration": "P1D",
    "json-pointer": "/a",
    "regex": "^a$",
}


def payload_issues(schema: Mapping[str, Any], payload: Any) -> list[str] | None:
    """The validator's issues as text (``[]``: valid); None when the schema is unusable."""
    try:
        issues = validate_payload(dict(schema), payload)
    except SchemaRejected:
        return None
    return [f"{i.path or '/'}: {i.message}" for i in issues]


def _resolve(schema: Any, root: Mapping[str, Any]) -> Any:
    seen = 0
    while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and seen < 16:
        ref = schema["$ref"]
        if not ref.startswith("#"):
            return schema
        target: Any = root
        for raw in ref[1:].lstrip("/").split("/") if ref not in ("#", "#/") else []:
            key = unescape(raw)
            if isinstance(target, Mapping) and key in target:
                target = target[key]
            else:
                return {}
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**target, **rest} if isinstance(target, Mapping) else target
        seen += 1
    return schema


def _merge_all_of(schema: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    merged = {k: v for k, v in schema.items() if k != "allOf"}
    for part in schema.get("allOf") or []:
        part = _resolve(part, root)
        if not isinstance(part, Mapping):
            continue
        part = _merge_all_of(part, root)
        for key, value in part.items():
            if key == "properties" and isinstance(value, Mapping):
                merged["properties"] = {**merged.get("properties", {}), **value}
            elif key == "required" and isinstance(value, list):
                merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
            else:
                merged.setdefault(key, value)
    return merged


def _bound(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok else None


def _number(schema: Mapping[str, Any], integer: bool) -> Any:
    low = _bound(schema.get("minimum"))
    low = low if low is not None else _bound(schema.get("exclusiveMinimum"))
    high = _bound(schema.get("maximum"))
    high = high if high is not None else _bound(schema.get("exclusiveMaximum"))
    if low is not None and high is not None:
        value = (low + high) / 2
    elif low is not None:
        value = low + 1
    elif high is not None:
        value = high - 1
    else:
        value = 1.0
    step = _bound(schema.get("multipleOf"))
    if step is not None and step > 0:
        value = step * max(1, math.ceil(value / step))
    return math.ceil(value) if integer else value


def _string(schema: Mapping[str, Any]) -> str:
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in _FORMAT_EXAMPLES:
        return _FORMAT_EXAMPLES[fmt]
    low = schema.get("minLength", 1)
    high = schema.get("maxLength")
    size = low if isinstance(low, int) and low > 0 else 1
    if isinstance(high, int):
        size = min(size, high)
    return "x" * size


def example_value(schema: Any, root: Mapping[str, Any] | None = None, depth: int = 0) -> Any:
    """A small value meant to satisfy ``schema`` (not guaranteed: confirm it)."""
    root = root if root is not None else (schema if isinstance(schema, Mapping) else {})
    schema = _resolve(schema, root)
    if schema is True or schema == {}:
        return "x"
    if not isinstance(schema, Mapping) or depth > _MAX_DEPTH:
        return _NOTHING
    if "allOf" in schema:
        schema = _merge_all_of(schema, root)
    if "const" in schema:
        return copy.deepcopy(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return copy.deepcopy(schema["enum"][0])
    for key in ("default",):
        if key in schema:
            return copy.deepcopy(schema[key])
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return copy.deepcopy(schema["examples"][0])
    for key in ("oneOf", "anyOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            base = {k: v for k, v in schema.items() if k != key}
            return example_value({**base, **_resolve(options[0], root)}, root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"] or kind
        kind = kinds[0] if kinds else None
    if kind is None:
        kind = "object" if "properties" in schema or "required" in schema else "string"
    if kind == "object":
        out: dict[str, Any] = {}
        props = schema.get("properties") or {}
        for name in schema.get("required") or []:
            value = example_value(props.get(name, {}), root, depth + 1)
            if value is _NOTHING:
                return _NOTHING
            out[name] = value
        return out
    if kind == "array":
        count = schema.get("minItems", 0)
        items = schema.get("items", {})
        values = [example_value(items, root, depth + 1) for _ in range(max(0, int(count)))]
        return _NOTHING if any(v is _NOTHING for v in values) else values
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return _number(schema, kind == "integer")
    if kind == "null":
        return None
    return _string(schema)


def valid_payload(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """A payload that validates against ``schema``, or None when none could be built."""
    candidates = [example_value(schema)]
    props = schema.get("properties")
    if isinstance(props, Mapping):  # with every member, in case a dependency wants them
        full = {name: example_value(sub, schema) for name, sub in props.items()}
        candidates.append({k: v for k, v in full.items() if v is not _NOTHING})
    for candidate in candidates:
        if isinstance(candidate, dict):
            issues = payload_issues(schema, candidate)
            if issues == [] or issues is None:
                return candidate
    return None


def _wrong_type(sub: Any, root: Mapping[str, Any]) -> Any:
    sub = _resolve(sub, root)
    kind = sub.get("type") if isinstance(sub, Mapping) else None
    if kind == "string" or (isinstance(kind, list) and "string" in kind):
        return 12345
    if kind in ("integer", "number", "boolean"):
        return "not-a-" + str(kind)
    return ["not", "the", "right", "type"]


def invalid_payload(
    schema: Mapping[str, Any], valid: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], str] | None:
    """A payload that fails ``schema`` and how it was broken, or None when none was found."""
    base = dict(valid) if valid is not None else (valid_payload(schema) or {})
    root = schema
    merged = _resolve(schema, root)
    schema = _merge_all_of(merged, root) if isinstance(merged, Mapping) else schema
    props = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
    candidates: list[tuple[dict[str, Any], str]] = []
    for name in schema.get("required") or []:
        if name in base:
            broken = {k: v for k, v in base.items() if k != name}
            candidates.append((broken, f"required member {name!r} left out"))
    for name, sub in (props or {}).items():
        candidates.append(({**base, name: _wrong_type(sub, root)}, f"{name!r} of the wrong type"))
    candidates.append(({**base, EXTRA_MEMBER: 1}, f"unknown member {EXTRA_MEMBER!r} added"))
    for candidate, how in candidates:
        issues = payload_issues(root, candidate)
        if issues:
            return candidate, how
    return None
