"""The key/value editor for ``additionalProperties`` (and for members a value brought
that the schema does not declare, when extra members are allowed)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ipywidgets as W

from ._base import Field, FieldMessage
from ._hints import child_ui
from ._theme import make
from ._util import MISSING, child_pointer

Routed = dict[str, list[FieldMessage]]


class MapEditor:
    """Key/value rows for ``additionalProperties`` (a schema: add and remove rows).

    ``owner`` is the section the rows belong to; ``declared`` its declared members (a
    live mapping: a row may not take one of their names).
    """

    def __init__(
        self, owner: Field, declared: Mapping[str, Field], schema: Any, can_add: bool
    ) -> None:
        self.owner = owner
        self.declared = declared
        self.schema = schema if isinstance(schema, Mapping) else True
        self.rows: list[tuple[W.Text, Field, W.HBox]] = []
        #: Key inputs whose empty text is the name ``""`` (a value set it so; a person
        #: typing in the key takes this back: an empty key they leave is no name).
        self.empty_names: set[int] = set()
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
        self.box.children = [r for _k, _f, r in self.rows] + ([self.add] if self.add else [])

    def _add_row(self, key: str | None = None, value: Any = MISSING) -> Field:
        ctx = self.owner.ctx
        pointer = child_pointer(self.owner.pointer, len(self.rows) if key is None else key)
        field = ctx.build(
            self.schema, pointer, child_ui(self.owner.ui, "additionalProperties"), False, "value"
        )
        key_input = make(
            W.Text,
            self.owner.classes("hitl-map-key"),
            value=key or "",
            placeholder="name",
            tooltip="member name",
        )
        remove = make(
            W.Button,
            self.owner.classes("hitl-remove"),
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
        remove.on_click(lambda _b: self._remove(row))
        if key == "":
            self.empty_names.add(id(key_input))

        def key_typed(_change: Any) -> None:
            if not ctx.is_quiet:
                self.empty_names.discard(id(key_input))
            ctx.changed()

        key_input.observe(key_typed, names="value")
        if value is not MISSING:
            field.set(value)
        self._relayout()
        ctx.changed()
        return field

    def _named(self, key_input: W.Text) -> bool:
        return bool(key_input.value) or id(key_input) in self.empty_names

    def _remove(self, row: tuple[W.Text, Field, W.HBox]) -> None:
        self.rows.remove(row)
        self.empty_names.discard(id(row[0]))
        self.owner.ctx.forget(row[1])
        self._relayout()
        self.owner.ctx.changed()

    def entries(self) -> dict[str, Any]:
        """The members the rows hold (rows without a name or value are skipped)."""
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
        self.owner.ctx.check_rows(self.owner.pointer, len(extras) - len(self.rows), extras)
        for _key, field, _box in self.rows:
            self.owner.ctx.forget(field)
        self.rows = []
        self.empty_names = set()
        with self.owner.ctx.quietly():
            for key, value in extras.items():
                self._add_row(key, value)
        self._relayout()

    def local_errors(self) -> list[tuple[str, str]]:
        """Rows without a name, repeated names, names that are declared properties."""
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
            seen.add(key)
            out += [(where + p, m) for p, m in field.local_errors()]
        return out

    def show_errors(self, below: dict[str, Routed]) -> dict[str, Routed]:
        """Show the errors of rows by name; returns those that match no row."""
        for key_input, field, _box in self.rows:
            field.show_errors(below.pop(key_input.value, {}))
        return below

    def set_disabled(self, disabled: bool) -> None:
        """Disable every row and the add button."""
        for key_input, field, box in self.rows:
            key_input.disabled = disabled
            field.set_disabled(disabled)
            box.children[-1].disabled = disabled
        if self.add is not None:
            self.add.disabled = disabled
