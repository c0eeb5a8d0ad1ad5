"""The key/value editor for ``additionalProperties`` and ``patternProperties`` (and for
members a value brought that the schema does not declare, when extra members are
allowed).

A row's value is drawn by the schema its name calls for: the ``patternProperties``
schemas whose pattern the name matches (all of them), else ``additionalProperties``.
Typing another name redraws the value when that changes the schema (keeping the value
if it fits); a name no pattern allows, where ``additionalProperties`` is false, is an
error on the row. Members too many to draw as rows (a value set with more than
:data:`~._base.MAX_ROWS`, or more entries than the form has room for) are shown in one
JSON text field instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ipywidgets as W

from ..errors import SchemaRejected
from ..validation import pattern_search
from ._base import Field, FieldMessage
from ._fields import JsonField
from ._hints import child_ui
from ._normalize import Node
from ._theme import make
from ._util import MISSING, FormValueError, child_pointer

Routed = dict[str, list[FieldMessage]]


def matching_patterns(patterns: Mapping[str, Any], key: str) -> list[Any]:
    """The ``patternProperties`` schemas whose pattern matches the name ``key``."""
    found = []
    for pattern, sub in patterns.items():
        try:
            if pattern_search(pattern, key):
                found.append(sub)
        except SchemaRejected:
            continue  # compile_schema refuses such a schema before any form is drawn
    return found


class MapEditor:
    """Key/value rows for ``additionalProperties`` (a schema: add and remove rows).

    ``owner`` is the section the rows belong to; ``declared`` its declared members (a
    live mapping: a row may not take one of their names).
    """

    def __init__(
        self,
        owner: Field,
        declared: Mapping[str, Field],
        schema: Any,
        can_add: bool,
        patterns: Mapping[str, Any] | None = None,
    ) -> None:
        self.owner = owner
        self.declared = declared
        #: ``additionalProperties`` (False: only names a pattern allows)
        self.extra: Any = schema if isinstance(schema, Mapping) or schema is False else True
        self.patterns: Mapping[str, Any] = patterns or {}
        #: The schema each row's value was drawn from, by id() of its key input.
        self.row_schema: dict[int, Any] = {}
        self.rows: list[tuple[W.Text, Field, W.HBox]] = []
        #: Key inputs whose empty text is the name ``""`` (a value set it so; a person
        #: typing in the key takes this back: an empty key they leave is no name).
        self.empty_names: set[int] = set()
        #: The JSON field holding members too many for rows (else None).
        self.overflow: JsonField | None = None
        self.box = make(W.VBox, owner.classes("hitl-map"))
        self.add: W.Button | None = None
        if can_add:
            self.add = make(
                W.Button,
                owner.classes("hitl-add"),
                description="Add entry",
                icon="plus",
                tooltip="add a member with a name of your choice",
            )
            self.add.on_click(lambda _b: self._add_row())
        self._relayout()

    def _relayout(self) -> None:
        if self.overflow is not None:
            self.box.children = list(self.overflow.widgets)
            return
        self.box.children = [r for _k, _f, r in self.rows] + ([self.add] if self.add else [])

    def _matching(self, key: str) -> list[Any]:
        return matching_patterns(self.patterns, key)

    def allows(self, key: str) -> bool:
        """Whether a member named ``key`` may be added (a pattern or the extras allow it)."""
        return self.extra is not False or bool(self._matching(key))

    def schema_for(self, key: str) -> Any:
        """The schema a member named ``key`` is drawn by (a not-allowed name: the first
        pattern's, the one a person most likely means)."""
        found = self._matching(key)
        if len(found) == 1:
            return found[0]
        if found:
            return {"allOf": found}
        if self.extra is False:
            return next(iter(self.patterns.values()), True)
        return self.extra

    def _build_value(self, key: str | None, schema: Any) -> Field:
        pointer = child_pointer(self.owner.pointer, len(self.rows) if key is None else key)
        ui = child_ui(self.owner.ui, "additionalProperties")
        field = self.owner.ctx.build(schema, pointer, ui, False, "value")
        field.hide_label()  # the name typed beside it, in the label column, is its label
        return field

    def _add_row(self, key: str | None = None, value: Any = MISSING) -> Field:
        ctx = self.owner.ctx
        schema = self.schema_for(key or "")
        field = self._build_value(key, schema)
        key_input = make(
            W.Text,
            self.owner.classes("hitl-map-key"),
            "key",
            value=key or "",
            placeholder="name",
            tooltip="member name",
        )
        remove = make(  # the same control as a list entry's (_arrays.py)
            W.Button,
            self.owner.classes("hitl-remove"),
            "narrow",
            description="✕",
            tooltip="remove this entry",
        )
        box = make(
            W.HBox,
            self.owner.classes("hitl-map-row"),
            "row",
            children=[key_input, *field.widgets, remove],
        )
        row = (key_input, field, box)
        field.parent_hook = lambda: setattr(box, "children", [key_input, *field.widgets, remove])
        self.rows.append(row)
        self.row_schema[id(key_input)] = schema
        remove.on_click(lambda _b: self._remove(key_input))
        if key == "":
            self.empty_names.add(id(key_input))

        def key_typed(_change: Any) -> None:
            if not ctx.is_quiet:
                self.empty_names.discard(id(key_input))
                self._redraw(key_input)
            ctx.changed()

        key_input.observe(key_typed, names="value")
        if value is not MISSING:
            field.set(value)
        self._relayout()
        ctx.changed()
        return field

    def _named(self, key_input: W.Text) -> bool:
        return bool(key_input.value) or id(key_input) in self.empty_names

    def _redraw(self, key_input: W.Text) -> None:
        """The person typed a name that calls for another schema: redraw the value."""
        schema = self.schema_for(key_input.value)
        if schema is self.row_schema.get(id(key_input)):
            return
        index = next(i for i, r in enumerate(self.rows) if r[0] is key_input)
        _key, old, box = self.rows[index]
        value = old.get()
        field = self._build_value(key_input.value, schema)
        if value is not MISSING:
            try:
                field.set(value)
            except FormValueError:
                field.set(MISSING)
        self.owner.ctx.forget(old)
        remove = box.children[-1]
        box.children = [key_input, *field.widgets, remove]
        field.parent_hook = lambda: setattr(box, "children", [key_input, *field.widgets, remove])
        field.set_disabled(key_input.disabled)
        self.rows[index] = (key_input, field, box)
        self.row_schema[id(key_input)] = schema

    def _remove(self, key_input: W.Text) -> None:
        row = next(r for r in self.rows if r[0] is key_input)
        self.rows.remove(row)
        self.empty_names.discard(id(row[0]))
        self.row_schema.pop(id(row[0]), None)
        self.owner.ctx.forget(row[1])
        self._relayout()
        self.owner.ctx.changed()

    def entries(self) -> dict[str, Any]:
        """The members the rows hold (rows without a name or value are skipped)."""
        if self.overflow is not None:
            held = self.overflow.get()
            return dict(held) if isinstance(held, dict) else {}
        out: dict[str, Any] = {}
        for key_input, field, _box in self.rows:
            value = field.get()
            key = key_input.value
            if (
                self._named(key_input)
                and value is not MISSING
                and key not in out
                and key not in self.declared
            ):
                out[key] = value
        return out

    def set(self, extras: dict[str, Any]) -> None:
        """Replace the rows with ``extras``."""
        try:
            self.owner.ctx.check_rows(self.owner.pointer, len(extras) - len(self.rows), extras)
        except FormValueError:
            too_many = bool(extras)  # (no members never need the room)
        else:
            too_many = False
        for _key, field, _box in self.rows:
            self.owner.ctx.forget(field)
        self.rows = []
        self.overflow = None
        if too_many:
            note = f"{len(extras)} members, more than the form draws as fields"
            node = Node("json", {"type": "object"}, note=note)
            slot = self.owner.slot.but(node=node, name="other members", required=False)
            self.overflow = JsonField(slot)
            self.overflow.set(extras)
            self.overflow.set_disabled(self.owner.disabled or self.owner.readonly)
            self._relayout()
            return
        self.empty_names = set()
        self.row_schema = {}
        with self.owner.ctx.quietly():
            for key, value in extras.items():
                self._add_row(key, value)
        self._relayout()

    def local_errors(self) -> list[tuple[str, str]]:
        """Rows without a name, repeated names, names that are declared properties."""
        if self.overflow is not None:
            held = self.overflow.get()
            if held is not MISSING and not isinstance(held, dict):
                return [("", "The other members must be a JSON object")]
            return self.overflow.local_errors()
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        for i, (key_input, field, _box) in enumerate(self.rows):
            key = key_input.value
            named = self._named(key_input)
            value = field.get()
            where = child_pointer("", key) if named else f"/{i}"
            if not named and value is not MISSING:
                out.append((where, f"Entry #{i + 1} needs a name"))
            elif named and value is MISSING:
                out.append((where, f"“{key}” needs a value"))
            elif key in seen:
                out.append((where, f"The name “{key}” is used twice"))
            elif key in self.declared:
                out.append((where, f"“{key}” is already a field of this section"))
            elif named and not self.allows(key):
                allowed = " or ".join(self.patterns)
                out.append((where, f"The name “{key}” must match {allowed}"))
            seen.add(key)
            out += [(where + p, m) for p, m in field.local_errors()]
        return out

    def show_errors(self, below: dict[str, Routed]) -> dict[str, Routed]:
        """Show the errors of rows by name; returns those that match no row."""
        if self.overflow is not None:
            held = self.entries()
            mine = {k: v for k, v in below.items() if k in held}
            self.overflow.show_errors(
                {child_pointer("", k) + p: m for k, sub in mine.items() for p, m in sub.items()}
            )
            return {k: v for k, v in below.items() if k not in held}
        for key_input, field, _box in self.rows:
            field.show_errors(below.pop(key_input.value, {}))
        return below

    def set_disabled(self, disabled: bool) -> None:
        """Disable every row and the add button."""
        if self.overflow is not None:
            self.overflow.set_disabled(disabled)
        for key_input, field, box in self.rows:
            key_input.disabled = disabled
            field.set_disabled(disabled)
            box.children[-1].disabled = disabled
        if self.add is not None:
            self.add.disabled = disabled
