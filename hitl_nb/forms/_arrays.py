"""Array fields: a list of entries (add, remove, move up; ``minItems`` entries ready,
no adding past ``maxItems``) and ``prefixItems`` tuples (one fixed row per position,
then free entries if ``items`` allows them). Duplicates under ``uniqueItems`` are
flagged on the entry by the validator; the order is kept as entered.

A value with more entries than a form draws as widgets (:data:`~._base.MAX_ROWS` in one
list, :data:`~._base.MAX_FIELDS` in the form) is shown in one JSON text field instead,
with a note saying why: what goes in comes out, and nothing valid is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ipywidgets as W

from ._base import Errors, Field, FieldKind, FieldMessage, Slot, route
from ._fields import JsonField
from ._hints import child_ui
from ._normalize import Node
from ._theme import LayoutName, heading_html, make, set_html
from ._util import MISSING, FormValueError, child_pointer, json_type


class _Row:
    __slots__ = ("field", "box", "up", "remove", "fixed")

    def __init__(self, field: Field, box: W.Box, up: Any, remove: Any, fixed: bool) -> None:
        self.field, self.box, self.up, self.remove, self.fixed = field, box, up, remove, fixed


class ArrayField(Field):
    """Entries of ``items`` (and the fixed positions of ``prefixItems``)."""

    kind: FieldKind = "array"

    def __init__(self, slot: Slot) -> None:
        super().__init__(slot)
        s = self.schema
        prefix = s.get("prefixItems")
        self.prefix: list[Any] = list(prefix) if isinstance(prefix, list) else []
        items = s.get("items", True)
        self.items: Any = items if isinstance(items, (Mapping, bool)) else True
        max_items = s.get("maxItems")
        self.max_items = max_items if isinstance(max_items, int) else None
        self.explicit = False
        #: Left out by the last value set (a required array is then not invented).
        self.absent = False
        min_items = s.get("minItems")
        self.min_items: int = min_items if isinstance(min_items, int) else 0
        self.rows: list[_Row] = []
        self.index_rows: list[_Row] = []
        #: The JSON field showing a value too large to draw as rows (else None).
        self.overflow: JsonField | None = None
        lay: LayoutName = "hidden" if self.hints.hidden else "default"
        self.label = make(W.HTML, self.classes("hitl-label"), value="")
        set_html(self.label, self.label_html())
        self.list = make(W.VBox, self.classes("hitl-items"), "indent")
        self.add: W.Button | None = None
        kids: list[W.Widget] = [self.label, self.list]
        if self.items is not False:
            self.add = make(
                W.Button,
                self.classes("hitl-add"),
                description="Add entry",
                icon="plus",
                tooltip=f"add an entry to {self.title}",
            )
            self.add.on_click(self._on_add)
            kids.append(self.add)
        self.box = make(W.VBox, self.classes("hitl-array"), lay, children=kids)
        self.widgets = [self.box]
        self._first_rows()
        self._relayout()

    def _first_rows(self) -> None:
        for i in range(len(self.prefix)):
            self._new_row(i, fixed=True)
        if self.required and self.items is not False:
            for i in range(len(self.rows), min(self.min_items, 50)):
                self._new_row(i, fixed=False)

    # --- rows ------------------------------------------------------------------------------
    def _new_row(self, i: int, fixed: bool) -> _Row:
        schema = self.prefix[i] if fixed else self.items
        ui = child_ui(self.ui, "items")
        # an entry that exists must hold a value: build it as required (objects open);
        # a tuple position past minItems may be left out (an array can be shorter)
        required = not fixed or i < self.min_items
        field = self.ctx.build(schema, child_pointer(self.pointer, i), ui, required, f"#{i + 1}")
        up = remove = None
        controls: list[W.Widget] = []
        if not fixed:
            up = make(
                W.Button, self.classes("hitl-up"), "narrow", description="↑", tooltip="move up"
            )
            remove = make(
                W.Button,
                self.classes("hitl-remove"),
                "narrow",
                description="✕",
                tooltip="remove this entry",
            )
            controls = [up, remove]
        # the entry's widgets stacked in one column, the buttons beside it never squeezed
        stack = make(W.VBox, self.classes("hitl-entry"), children=field.widgets)
        box = make(W.HBox, self.classes("hitl-row"), "row", children=[stack, *controls])
        row = _Row(field, box, up, remove, fixed)
        field.parent_hook = lambda: setattr(stack, "children", field.widgets)
        if up is not None and remove is not None:
            up.on_click(lambda _b: self._move_up(row))
            remove.on_click(lambda _b: self._remove(row))
        self.rows.append(row)
        return row

    def _relayout(self) -> None:
        self.list.children = [r.box for r in self.rows]
        if self.readonly or self.disabled:
            self.set_disabled(self.disabled)
        self._update_add()

    def _update_add(self) -> None:
        if self.add is not None:
            full = self.max_items is not None and len(self.rows) >= self.max_items
            self.add.disabled = self.disabled or self.readonly or full

    def _on_add(self, _button: Any) -> None:
        self._new_row(len(self.rows), fixed=False)
        self.explicit = True
        self._relayout()
        self.ctx.changed()

    def _move_up(self, row: _Row) -> None:
        i = self.rows.index(row)
        if i > 0 and not self.rows[i - 1].fixed:
            self.rows[i - 1], self.rows[i] = self.rows[i], self.rows[i - 1]
            self._relayout()
            self.ctx.changed()

    def _remove(self, row: _Row) -> None:
        self.rows.remove(row)
        self.ctx.forget(row.field)
        self.explicit = True
        self._relayout()
        self.ctx.changed()

    # --- value -----------------------------------------------------------------------------
    def touched(self) -> bool:
        if self.overflow is not None:
            return self.overflow.touched()
        return (
            self.explicit
            or any(not r.fixed for r in self.rows)
            or any(r.field.touched() for r in self.rows)
        )

    def get(self) -> Any:
        if self.overflow is not None:
            return self.overflow.get()
        self.index_rows = []
        values: list[Any] = []
        pending: list[_Row] = []  # empty fixed positions not yet followed by a value
        for row in self.rows:
            value = row.field.get()
            if value is MISSING:
                if row.fixed:
                    pending.append(row)
                continue
            if pending:
                continue  # a gap in a tuple: reported by local_errors
            values.append(value)
            self.index_rows.append(row)
        if not values and not ((self.required and not self.absent) or self.touched()):
            return MISSING
        return values

    def set(self, value: Any) -> None:
        if value is not MISSING and not isinstance(value, list):
            raise FormValueError(self.pointer, f"expected array, got {json_type(value)}")
        given = value if isinstance(value, list) else []
        if len(given) > len(self.prefix) and self.items is False:
            raise FormValueError(self.pointer, f"at most {len(self.prefix)} entries fit here")
        try:
            self.ctx.check_rows(self.pointer, len(given) - len(self.rows), given)
        except FormValueError:
            if given:  # (an empty value never needs the room)
                self._show_json(given)
                self.explicit, self.absent = True, False
                return
        if self.overflow is not None:
            self._hide_json()
        with self.ctx.quietly():
            keep = max(len(self.prefix), len(given))
            for row in self.rows[keep:]:
                self.ctx.forget(row.field)
            del self.rows[keep:]
            while len(self.rows) < len(given):
                self._new_row(len(self.rows), fixed=False)
            for i, row in enumerate(self.rows):
                row.field.set(given[i] if i < len(given) else MISSING)
        self.explicit = value is not MISSING
        self.absent = value is MISSING
        self._relayout()

    def untouch(self) -> None:
        pass  # a default list is the agent's proposal: it is sent

    def _show_json(self, value: list[Any]) -> None:
        """Show ``value`` in one JSON text field: it has too many entries for rows."""
        for row in self.rows:
            self.ctx.forget(row.field)
        self.rows = []
        note = f"{len(value)} entries, more than the form draws as fields"
        node = Node("json", self.schema, note=note, hints=self.hints)
        self.overflow = JsonField(self.slot.but(node=node))
        self.overflow.set_disabled(self.disabled or self.readonly)
        self.overflow.set(value)
        self.widgets = list(self.overflow.widgets)
        self.widgets_changed()

    def _hide_json(self) -> None:
        """Back to rows (a value that fits was set)."""
        self.overflow = None
        self._first_rows()
        self.widgets = [self.box]
        self.widgets_changed()

    # --- errors, state -------------------------------------------------------------------
    def local_errors(self) -> list[tuple[str, str]]:
        if self.overflow is not None:
            return self.overflow.local_errors()
        # Entries in the value are addressed by their index there (as the validator
        # does); entries left out of it (empty, unreadable) are reported on the array.
        self.get()
        index = {id(r): i for i, r in enumerate(self.index_rows)}
        out: list[tuple[str, str]] = []
        gap = False
        for i, row in enumerate(self.rows):
            at = index.get(id(row))
            inner = row.field.local_errors()
            if at is not None:
                out += [(f"/{at}" + p, m) for p, m in inner]
            else:
                out += [("", f"Entry #{i + 1}: {m}") for _p, m in inner]
            if row.field.get() is MISSING:
                if not row.fixed and not inner:
                    out.append(("", f"Entry #{i + 1} is empty: fill it in or remove it"))
                gap = gap or row.fixed
            elif gap:
                out.append(("", f"Entry #{i + 1} is filled but an earlier one is empty"))
                gap = False
        return out

    def show_errors(self, errors: Errors) -> None:
        if self.overflow is not None:
            self.overflow.show_errors(errors)
            return
        own, below = route(errors)
        self.get()  # refresh the index -> row map
        by_row: dict[int, dict[str, list[FieldMessage]]] = {}
        for seg, sub in below.items():
            if seg.isdigit() and int(seg) < len(self.index_rows):
                row_no = self.rows.index(self.index_rows[int(seg)])
                by_row.setdefault(row_no, {}).update(sub)
            else:
                own += [m for msgs in sub.values() for m in msgs]
        for i, row in enumerate(self.rows):
            row.field.show_errors(by_row.get(i, {}))
        self.show_own(own)

    def label_html(self) -> str:
        """The list's heading: title, required marker, help, messages."""
        return heading_html(self.title, self.required and self.star, self.help, self.messages)

    def refresh_label(self) -> None:
        set_html(self.label, self.label_html())

    def set_disabled(self, disabled: bool) -> None:
        self.disabled = disabled
        inner = disabled or self.readonly  # readOnly on an array covers its entries
        for row in self.rows:
            row.field.set_disabled(inner)
            for button in (row.up, row.remove):
                if button is not None:
                    button.disabled = inner
        self._update_add()
        if self.overflow is not None:
            self.overflow.set_disabled(inner)

    def children(self) -> list[Field]:
        if self.overflow is not None:
            return [self.overflow]
        return [r.field for r in self.rows]
