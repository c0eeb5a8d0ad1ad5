"""Fields for schemas that name no ``type``.

``{"maximum": 3}`` is drawn as a number, since that is what its keywords are about,
but a string, an object or ``null`` is valid there too: JSON Schema applies
``maximum`` to numbers only. When a value of another type is set, the field becomes a
JSON text field for it (and back when a value of the drawn type is set): the value
that goes in comes out, and nothing valid is refused.
"""

from __future__ import annotations

from typing import Any

from ._base import Errors, Field, FieldKind
from ._fields import JsonField
from ._normalize import Node
from ._util import MISSING

_KIND_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "tuple": (list,),
    "string": (str,),
    "date": (str,),
    "date-time": (str,),
    "number": (int, float),
    "integer": (int, float),
    "boolean": (bool,),
}


def fits(kind: str, value: Any) -> bool:
    """Whether a field of ``kind`` can hold ``value``'s JSON type."""
    types = _KIND_TYPES.get(kind)
    if types is None:
        return False
    if isinstance(value, bool):
        return bool in types
    return isinstance(value, types)


class LooseField(Field):
    """The field drawn for a typeless schema, or a JSON field while it holds a value
    of another type."""

    def __init__(self, typed: Field) -> None:
        super().__init__(typed.slot)
        self.title = typed.title
        self.typed = typed
        self.kind: FieldKind = typed.kind
        self.other: Field | None = None
        self.current = typed
        self.widgets = list(typed.widgets)
        typed.parent_hook = self._inner_changed

    def _inner_changed(self) -> None:
        self.widgets = list(self.current.widgets)
        self.widgets_changed()

    def _use(self, field: Field) -> None:
        if field is not self.current:
            self.current = field
            self.kind = field.kind
            self._inner_changed()

    def _json(self) -> Field:
        if self.other is None:
            note = f"a value that is not {self.typed.node.kind}"
            node = Node("json", self.schema, note=note, hints=self.hints)
            self.other = JsonField(self.slot.but(node=node, required=self.required))
            self.other.parent_hook = self._inner_changed
            self.other.set_disabled(self.disabled)
        return self.other

    # --- value: the current field's -----------------------------------------------------
    def get(self) -> Any:
        return self.current.get()

    def set(self, value: Any) -> None:
        if value is MISSING or fits(self.typed.node.kind, value):
            if self.other is not None:
                self.other.set(MISSING)
            self.typed.set(value)
            self._use(self.typed)
            return
        self._json().set(value)
        self.typed.set(MISSING)
        self._use(self._json())

    def touched(self) -> bool:
        return self.current.touched()

    def untouch(self) -> None:
        self.current.untouch()

    def apply_default(self) -> None:
        default = self.schema.get("default", MISSING)
        if default is not MISSING and not fits(self.typed.node.kind, default):
            self.set(default)
            self.untouch()
        else:
            self.typed.apply_default()

    def local_errors(self) -> list[tuple[str, str]]:
        return self.current.local_errors()

    def react(self) -> None:
        self.current.react()

    def show_errors(self, errors: Errors) -> None:
        self.current.show_errors(errors)

    def set_required(self, required: bool) -> None:
        self.required = required
        self.typed.set_required(required)
        if self.other is not None:
            self.other.set_required(required)

    def set_disabled(self, disabled: bool) -> None:
        self.disabled = disabled
        self.typed.set_disabled(disabled)
        if self.other is not None:
            self.other.set_disabled(disabled)

    def children(self) -> list[Field]:
        return [self.current]

    def walk(self) -> Any:
        # the wrapper is not a field of its own: walk what it shows
        yield from self.current.walk()

    def is_built(self) -> bool:
        return self.current.is_built()

    def build_if_needed(self) -> None:
        self.current.build_if_needed()

    def focus(self) -> bool:
        return self.current.focus()
