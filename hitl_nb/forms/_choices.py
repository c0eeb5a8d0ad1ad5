"""Fields that choose among fixed values: checkboxes, enums, Yes/No, consts.

Nothing is pre-selected unless the schema has a default: a required choice is made by
the person, never by the form.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as W

from ._base import LeafField
from ._fields import check_type
from ._util import MISSING, FormValueError, esc, json_equal, make, short_json


class CheckboxField(LeafField):
    """A Checkbox for an optional boolean or one with a default; left out until ticked
    or unticked by a person."""

    kind = "boolean"

    def make_input(self, lay: str) -> W.Widget:
        return make(
            W.Checkbox,
            self.classes("hitl-input"),
            lay,
            value=False,
            indent=True,
            tooltip=self.tooltip(),
            description=self.label_text(),
        )

    def get(self) -> Any:
        return bool(self.input.value) if self._has_value else MISSING

    def write(self, value: Any) -> None:
        if value is MISSING:
            self.input.value = False
            return
        check_type(self, value, bool)
        self.input.value = value


class ChoiceField(LeafField):
    """A choice among fixed values with nothing selected at first: enums (Dropdown, or
    RadioButtons by ``widget: radio``, labels by ``enumNames``) and required booleans
    without default (Yes / No: the person has to choose)."""

    kind = "enum"

    def choices(self) -> list[Any]:
        """The values to choose from."""
        return list(self.schema["enum"])

    def labels(self, values: list[Any]) -> list[str]:
        """One label per value."""
        names = self.hints.enum_names
        if len(names) == len(values):
            return list(names)
        return [v if isinstance(v, str) else short_json(v) for v in values]

    def make_input(self, lay: str) -> W.Widget:
        self.values = self.choices()
        options: list[tuple[str, int]] = list(
            zip(self.labels(self.values), range(len(self.values)), strict=False)
        )
        radio = self.hints.widget in ("radio", "radios") or self.kind == "boolean"
        if not self.required and not radio:
            options.insert(0, ("—", -1))
        cls = W.RadioButtons if radio else W.Dropdown
        return make(
            cls,
            self.classes("hitl-input"),
            lay,
            options=options,
            value=None,
            tooltip=self.tooltip(),
            description=self.label_text(),
        )

    def get(self) -> Any:
        index = self.input.value
        if index is None or index < 0:
            return MISSING
        return self.values[index]

    def write(self, value: Any) -> None:
        if value is MISSING:
            self.input.value = -1 if not self.required and -1 in self.input_values() else None
            return
        for i, v in enumerate(self.values):
            if json_equal(v, value):
                self.input.value = i
                return
        raise FormValueError(self.pointer, f"{short_json(value)} is not one of the choices")

    def input_values(self) -> list[Any]:
        """The option values of the input widget."""
        return [v for _, v in self.input.options]


class YesNoField(ChoiceField):
    """A required boolean without default: Yes / No, nothing pre-selected."""

    kind = "boolean"

    def choices(self) -> list[Any]:
        return [True, False]

    def labels(self, values: list[Any]) -> list[str]:
        names = self.hints.enum_names
        return list(names) if len(names) == 2 else ["Yes", "No"]


class ConstField(LeafField):
    """A fixed value (``const``, ``type: null``): shown, not editable. When optional, a
    checkbox decides whether it is sent."""

    kind = "const"

    def make_input(self, lay: str) -> W.Widget:
        self.value = self.schema.get("const") if "const" in self.schema else None
        self.fixed = self.required  # decided once: the widget differs
        text = short_json(self.value, 200)
        if self.fixed:
            return make(
                W.HTML,
                self.classes("hitl-input", "hitl-const"),
                lay,
                value=f"<code>{esc(text)}</code>",
                description=self.label_text(),
                tooltip=self.tooltip(),
            )
        return make(
            W.Checkbox,
            self.classes("hitl-input", "hitl-const"),
            lay,
            value=False,
            indent=True,
            description=f"{self.label_text()}: send {text}",
            tooltip=self.tooltip(),
        )

    def label_text(self) -> str:
        base = super().label_text()
        if getattr(self, "fixed", True):
            return base
        return f"{base}: send {short_json(self.value, 60)}"

    def get(self) -> Any:
        if self.fixed:
            return self.value
        return self.value if self.input.value else MISSING

    def write(self, value: Any) -> None:
        if value is not MISSING and not json_equal(value, self.value):
            raise FormValueError(self.pointer, f"the value is fixed to {short_json(self.value)}")
        if not self.fixed:
            self.input.value = value is not MISSING


class MultiChoiceField(LeafField):
    """``widget: checkboxes`` on an array of enum values: one SelectMultiple, values in
    the enum's order. A list that was set comes back unchanged until the selection
    changes."""

    kind = "multichoice"

    def make_input(self, lay: str) -> W.Widget:
        items = self.ctx.resolver.resolve(self.schema.get("items", {}))
        self.values: list[Any] = list(items["enum"])
        names = self.hints.enum_names
        labels = (
            list(names)
            if len(names) == len(self.values)
            else [v if isinstance(v, str) else short_json(v) for v in self.values]
        )
        self._original: tuple[list[Any], tuple[int, ...]] | None = None
        return make(
            W.SelectMultiple,
            self.classes("hitl-input"),
            lay,
            options=list(zip(labels, range(len(self.values)), strict=True)),
            value=(),
            rows=min(len(self.values), self.hints.rows or 6),
            tooltip=self.tooltip(),
            description=self.label_text(),
        )

    def get(self) -> Any:
        chosen = tuple(self.input.value)
        if self._original is not None and self._original[1] == chosen:
            return list(self._original[0])
        if not chosen and not self._has_value:
            return MISSING
        return [self.values[i] for i in sorted(chosen)]

    def write(self, value: Any) -> None:
        self._original = None
        if value is MISSING:
            self.input.value = ()
            return
        check_type(self, value, list)
        indexes = []
        for item in value:
            found = [i for i, v in enumerate(self.values) if json_equal(v, item)]
            if not found:
                raise FormValueError(self.pointer, f"{short_json(item)} is not one of the choices")
            indexes.append(found[0])
        chosen = tuple(sorted(set(indexes)))
        self.input.value = chosen
        self._original = (list(value), chosen)


def multi_choice_or_list(
    ctx: Any, node: Any, pointer: str, ui: Any, required: bool, name: str
) -> Any:
    """``widget: checkboxes``: a SelectMultiple when the items are enum values."""
    from ._arrays import ArrayField

    items = ctx.resolver.resolve(node.schema.get("items", {}))
    if isinstance(items, dict) and isinstance(items.get("enum"), list) and items["enum"]:
        return MultiChoiceField(ctx, node, pointer, ui, required, name)
    return ArrayField(ctx, node, pointer, ui, required, name)
