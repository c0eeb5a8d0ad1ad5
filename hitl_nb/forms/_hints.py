"""Presentation hints: ``x-ui-*`` keys inside the schema and a separate ``ui`` dict.

The vocabulary is react-jsonschema-form's uiSchema: ``widget``, ``order``,
``placeholder``, ``help``, ``emptyValue``, ``enumNames``, ``readonly``, ``hidden``,
``rows``, plus ``collapsed`` for object sections; RJSF's ``widget: hidden`` and
``disabled`` work as ``hidden`` and ``readonly``. In the schema a hint is written
``"x-ui-widget": "textarea"``; in the ``ui`` dict ``{"comment": {"ui:widget":
"textarea"}}`` (``"widget"`` without the prefix and RJSF's ``"ui:options"`` work too).
The ``ui`` dict is shaped like the data: property names for objects, ``"items"`` for
array items, ``"additionalProperties"`` for map values. A ``ui`` entry wins over an
``x-ui-*`` key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._util import MISSING

#: The hint names understood, in the ``ui`` dict's spelling (without ``ui:``).
HINT_NAMES = (
    "widget",
    "order",
    "placeholder",
    "help",
    "emptyValue",
    "enumNames",
    "readonly",
    "hidden",
    "rows",
    "collapsed",
    "disabled",
)


@dataclass(frozen=True)
class Hints:
    """The hints that apply to one field. ``empty_value`` is MISSING unless given."""

    widget: str | None = None
    order: tuple[str, ...] = ()
    placeholder: str | None = None
    help: str | None = None
    empty_value: Any = MISSING
    enum_names: tuple[str, ...] = ()
    readonly: bool = False
    hidden: bool = False
    rows: int | None = None
    collapsed: bool | None = None


def _lookup(schema: Mapping[str, Any], ui: Mapping[str, Any], name: str) -> Any:
    for key in ("ui:" + name, name):
        if key in ui:
            return ui[key]
    options = ui.get("ui:options")
    if isinstance(options, Mapping) and name in options:
        return options[name]
    return schema.get("x-ui-" + name, MISSING)


#: The hints of a field that has none (most fields): shared, it is frozen.
NO_HINTS = Hints()


def hints_for(schema: Mapping[str, Any], ui: Mapping[str, Any] | None) -> Hints:
    """Read the hints of one field from its schema and its ``ui`` entry.

    Values of the wrong type are ignored (a hint never breaks a form).
    """
    ui = ui if isinstance(ui, Mapping) else {}
    if not ui and not any(isinstance(k, str) and k.startswith("x-ui-") for k in schema):
        return NO_HINTS  # nothing to read: skip the eleven lookups
    got = {name: _lookup(schema, ui, name) for name in HINT_NAMES}
    widget = got["widget"] if isinstance(got["widget"], str) else None
    order = got["order"]
    order_t = tuple(o for o in order if isinstance(o, str)) if isinstance(order, list) else ()
    names = got["enumNames"]
    names_t = tuple(str(n) for n in names) if isinstance(names, list) else ()
    rows = got["rows"]
    return Hints(
        widget=widget,
        order=order_t,
        placeholder=str(got["placeholder"]) if got["placeholder"] is not MISSING else None,
        help=str(got["help"]) if got["help"] is not MISSING else None,
        empty_value=got["emptyValue"],
        enum_names=names_t,
        readonly=got["readonly"] is True or got["disabled"] is True,
        hidden=got["hidden"] is True or widget == "hidden",
        rows=rows if isinstance(rows, int) and not isinstance(rows, bool) and rows > 0 else None,
        collapsed=got["collapsed"] if isinstance(got["collapsed"], bool) else None,
    )


def child_ui(ui: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    """The ``ui`` entry for member ``key`` (a property name, ``items``, ...)."""
    if not isinstance(ui, Mapping):
        return None
    found = ui.get(key)
    return found if isinstance(found, Mapping) else None
