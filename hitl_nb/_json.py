"""Strict JSON for untrusted input: what an agent or a client sends us.

The standard library accepts things JSON does not (``NaN``, ``Infinity``), keeps the
last of duplicate keys silently, recurses until ``RecursionError``, and reads a lone
UTF-16 surrogate escape (``"\\ud800"``) into a string no UTF-8 encoder takes (I-JSON,
RFC 7493 §2.1, forbids them; RFC 8259 §8.2 calls the result unpredictable: here it was
an ``UnicodeEncodeError`` far from the read). Everything that crosses a wire in hitl-nb
is read with :func:`parse_json` instead.
"""

from __future__ import annotations

import json
import re
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


#: Every escape of a JSON text that parsed, left to right (so ``\\\\ud800``, an escaped
#: backslash and "ud800", is no surrogate): a high surrogate with the low one that makes it
#: a pair, a high one alone, a low one alone, or any other escape.
_ESCAPES = re.compile(
    r"\\(?:u(?P<high>[dD][89abAB][0-9a-fA-F]{2})(?P<low>\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
    r"|u(?P<lone>[dD][c-fC-F][0-9a-fA-F]{2})|.)",
    re.DOTALL,
)


#: The escape of a surrogate, high or low (``\\ud800`` to ``\\udfff``, either case).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
#: A surrogate code point in a Python string (always lone: a pair is one character).
_SURROGATE = re.compile("[\ud800-\udfff]")


def _where(text: str, at: int) -> str:
    """``line L column C`` of offset ``at``, as :class:`json.JSONDecodeError` counts."""
    return f"line {text.count(chr(10), 0, at) + 1} column {at - text.rfind(chr(10), 0, at)}"


def _surrogate(code: str, text: str, at: int) -> BadJSON:
    return BadJSON(
        f"the JSON text holds a lone UTF-16 surrogate ({code}) at {_where(text, at)}, "
        "which is not a Unicode character"
    )


def _check_surrogates(text: str, value: Any) -> None:
    """Refuse a parsed JSON text holding a lone surrogate anywhere (keys, values).

    Kept off the common path: a text without a backslash is passed by one ``memchr``;
    one with escapes but none of a surrogate (``\\ud8`` to ``\\udf``, either case) by one
    regular expression search; one with surrogate escapes has its strings looked at
    (pairs are one character there). The escapes are read one by one only to say where
    a lone one is.
    """
    if "\\" not in text or _SURROGATE_ESCAPE.search(text) is None:
        return
    if not _holds_surrogate(value):
        return
    for match in _ESCAPES.finditer(text):
        if match["high"] is not None and match["low"] is None:
            raise _surrogate("\\u" + match["high"].lower(), text, match.start())
        if match["lone"] is not None:
            raise _surrogate("\\u" + match["lone"].lower(), text, match.start())
    raise BadJSON("the JSON text holds a lone UTF-16 surrogate, which is not a Unicode character")


def _holds_surrogate(value: Any) -> bool:
    """Does any string of a parsed value (key or value) hold a surrogate (a lone one:
    the parser makes a pair one character)? Iterative."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item) is not None:
                return True
        elif isinstance(item, dict):
            if any(_SURROGATE.search(key) is not None for key in item):
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def lone_surrogate(value: Any) -> tuple[list[str | int], str] | None:
    """Where a value holds a lone surrogate (a string no UTF-8 encoder takes), or None.

    Returns the path to the innermost value holding it (an object whose key holds it
    counts as that object) and the surrogate as escape text (``"\\ud800"``); the path
    never holds a surrogate itself. Iterative: a hostile value cannot exhaust the stack.
    For values made by code: :func:`parse_json` refuses such text on the way in.
    """
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found is not None:
                return path, f"\\u{ord(found.group()):04x}"
        elif isinstance(item, dict):
            for key in item:
                found = _SURROGATE.search(key) if isinstance(key, str) else None
                if found is not None:
                    return path, f"\\u{ord(found.group()):04x}"
            stack.extend((child, [*path, key]) for key, child in item.items())
        elif isinstance(item, (list, tuple)):
            stack.extend((child, [*path, i]) for i, child in enumerate(item))
    return None


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
    ``max_depth``, and a lone UTF-16 surrogate (``"\\ud800"`` not followed by the
    ``"\\udc00"``..``"\\udfff"`` that makes it a pair, or a low half alone: in a key or a
    value, at any depth), which is not a Unicode character.
    """
    if isinstance(data, (bytes, bytearray)):
        size = len(data)
    else:
        try:
            size = len(data.encode("utf-8"))
        except UnicodeEncodeError as exc:  # a str made by code, holding one unescaped
            raise _surrogate(f"\\u{ord(data[exc.start]):04x}", data, exc.start) from None
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
    _check_surrogates(text, value)
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
