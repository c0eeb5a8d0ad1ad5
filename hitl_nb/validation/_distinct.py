"""The metaschema check's view of a response_schema: one copy of each distinct subschema."""

from __future__ import annotations

import json
from typing import Any

from ._walk import SCHEMA_KEYWORDS, SCHEMA_LISTS, SCHEMA_MAPS

__all__ = ["distinct"]

#: Maps whose values are subschemas and whose keys the metaschemas leave free.
_FREE_KEY_MAPS = ("properties", "$defs", "definitions")


#: Annotations the metaschemas only ask to be strings.
_TEXT_ANNOTATIONS = ("title", "description", "$comment")


def _shape(value: Any) -> Any:
    """What the metaschema check sees of a subschema: its text annotations blanked
    and its ``default``/``const`` values (which any value satisfies) dropped."""
    if isinstance(value, list):
        return [_shape(item) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in _TEXT_ANNOTATIONS and isinstance(item, str):
            out[key] = ""
        elif key in ("default", "const"):
            out[key] = None
        elif key in ("enum", "examples"):
            out[key] = item  # draft 4 asks enum values to be unique: kept as they are
        else:
            out[key] = _shape(item)
    return out


def distinct(schema: Any) -> Any:
    """``schema`` with repeated subschemas left out of its ``properties``/``$defs``
    maps, for the metaschema check only.

    The metaschema judges a subschema by its contents, wherever it stands, and leaves
    the names in these maps free: one copy of each distinct subschema (told apart by
    :func:`_shape`, so titles and descriptions do not count) gets the verdict of all.
    The first copy keeps its name, so an error names the first place it is found.
    """
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key in SCHEMA_KEYWORDS:
        if key in out:
            out[key] = distinct(out[key])
    for key in SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [distinct(item) for item in out[key]]
    for key in SCHEMA_MAPS:
        value = out.get(key)
        if not isinstance(value, dict):
            continue
        if key not in _FREE_KEY_MAPS:
            out[key] = {name: distinct(sub) for name, sub in value.items()}
            continue
        kept: dict[str, Any] = {}
        texts: set[str] = set()
        for name, sub in value.items():
            text = json.dumps(_shape(sub), sort_keys=True, separators=(",", ":"))
            if text not in texts:
                texts.add(text)
                kept[name] = distinct(sub)
        out[key] = kept
    return out
