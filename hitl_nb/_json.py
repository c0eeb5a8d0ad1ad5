"""Strict JSON for untrusted input: what an agent or a client sends us.

The standard library accepts things JSON does not (``NaN``, ``Infinity``), keeps the
last of duplicate keys silently, and recurses until ``RecursionError``. Everything that
crosses a wire in hitl-nb is read with :func:`parse_json` instead.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import BadJSON

#: Default cap on a JSON document's size in bytes (1 MiB).
MAX_JSON_BYTES = 1024 * 1024
#: Default cap on nesting (objects and arrays) of a JSON document.
MAX_JSON_DEPTH = 64
#: Most digits a JSON integer may have (CPython's own default limit, whatever the
#: interpreter is set to: converting a longer one takes time quadratic in its length).
MAX_INT_DIGITS = 4300


def _reject_constant(name: str) -> Any:
    raise BadJSON(f"JSON does not allow {name}")


def _int(text: str) -> int:
    digits = len(text) - text.startswith("-")
    if digits > MAX_INT_DIGITS:
        raise BadJSON(f"JSON integer of {digits} digits is over the limit of {MAX_INT_DIGITS}")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        # 1e400 is valid JSON syntax but no double holds it; Python would read infinity,
        # which JSON cannot carry back out.
        raise BadJSON(f"JSON number {text[:40]} is out of the range of a double")
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise BadJSON(f"duplicate key {key!r} in a JSON object")
        obj[key] = value
    return obj


def parse_json(
    data: str | bytes | bytearray,
    *,
    max_bytes: int = MAX_JSON_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
) -> Any:
    """Parse untrusted JSON, refusing what a careful peer must refuse.

    Raises :class:`~hitl_nb.errors.BadJSON` naming the problem for: a document larger
    than ``max_bytes``, bytes that are not UTF-8, a syntax error (with line and
    column), duplicate keys, ``NaN``/``Infinity``, a number beyond a double's range
    (``1e400``), an integer over :data:`MAX_INT_DIGITS` digits, and nesting deeper than
    ``max_depth``.
    """
    size = len(data) if isinstance(data, (bytes, bytearray)) else len(data.encode("utf-8"))
    if size > max_bytes:
        raise BadJSON(f"JSON document of {size} bytes is over the limit of {max_bytes} bytes")
    if isinstance(data, (bytes, bytearray)):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadJSON(f"JSON is not valid UTF-8 at byte {exc.start}") from None
    else:
        text = data
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise BadJSON("empty JSON document")
    try:
        value = json.loads(
            text,
            object_pairs_hook=_no_duplicates,
            parse_constant=_reject_constant,
            parse_int=_int,
            parse_float=_float,
        )
    except json.JSONDecodeError as exc:
        raise BadJSON(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        # The C scanner stops at the interpreter's recursion limit (about 1000 levels).
        raise BadJSON(f"JSON nested deeper than {max_depth} levels") from None
    # Each array or object opens with a bracket: a document with few brackets (in
    # strings too) cannot nest deeper than that, and needs no walk to tell.
    if text.count("{") + text.count("[") > max_depth and json_depth(value, max_depth) > max_depth:
        raise BadJSON(f"JSON nested deeper than {max_depth} levels")
    return value


#: One encoder for :func:`dumps_compact` (``json.dumps`` with options makes one per call,
#: and an answer is serialized this way several times: its consensus key, its hash).
_COMPACT = json.JSONEncoder(
    separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False
)


def dumps_compact(value: Any) -> str:
    """The compact, key-sorted, NaN-free serialization used for sizes and cache keys."""
    return _COMPACT.encode(value)


def json_depth(value: Any, limit: int) -> int:
    """Nesting depth of an already-parsed value; stops descending past ``limit``.

    A scalar has depth 0, ``{}`` and ``[]`` depth 1. Iterative, so a hostile value cannot
    exhaust the stack.
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((child, depth) for child in children)
    return deepest
