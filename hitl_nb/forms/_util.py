"""Small shared pieces of the forms package: the MISSING marker, the value error,
pointers, CSS class names, JSON equality and short JSON text.

(How widgets look, the shared Layout/Style objects and the widget factory, is in
:mod:`._theme`.)
"""

from __future__ import annotations

import html
import json
import re
from functools import lru_cache
from typing import Any, Final

from .. import _pointer
from ..errors import FormValueError as FormValueError  # lives in errors; fields import it here


class _Missing:
    """The marker for "no value": an omitted member, an untouched optional field."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


#: Returned by a field that has nothing to contribute: the member is left out.
MISSING: Final = _Missing()


def child_pointer(pointer: str, key: str | int) -> str:
    """RFC 6901 pointer of member ``key`` below ``pointer``."""
    return _pointer.join(pointer, key)


def split_pointer(pointer: str) -> list[str]:
    """The unescaped segments of an RFC 6901 pointer (``""`` is the root, ``[]``)."""
    return _pointer.split(pointer)


_PLAIN = re.compile(r"[A-Za-z0-9-]+")


@lru_cache(maxsize=4096)
def css_class(pointer: str) -> str:
    """The stable CSS class of the field at ``pointer``: ``hitl-field-<encoded pointer>``.

    Segments are joined with ``__``; characters other than ASCII letters, digits and
    ``-`` are written ``_xx`` (two lowercase hex digits, ``_ux..x_`` above U+00FF), so the
    class is a plain CSS identifier: ``/address/zip_code`` -> ``hitl-field-address__zip_5fcode``.
    The root is ``hitl-field-root``.
    """
    if not pointer:
        return "hitl-field-root"
    parts = []
    for seg in split_pointer(pointer):
        if _PLAIN.fullmatch(seg):
            parts.append(seg)
            continue
        out = []
        for ch in seg:
            if ch.isascii() and (ch.isalnum() or ch == "-"):
                out.append(ch)
            elif ord(ch) <= 0xFF:
                out.append(f"_{ord(ch):02x}")
            else:
                out.append(f"_u{ord(ch):x}_")
        parts.append("".join(out) or "_")
    return "hitl-field-" + "__".join(parts)


def esc(text: Any) -> str:
    """Escape for HTML: prompt and schema text is data, never markup (spec S-1)."""
    return html.escape(str(text), quote=True)


def short_json(value: Any, limit: int = 60) -> str:
    """Compact JSON for labels and messages, cut to ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON Schema sees it: ``1 == 1.0`` but ``True != 1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def json_type(value: Any) -> str:
    """The JSON type name of a Python value (for messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
