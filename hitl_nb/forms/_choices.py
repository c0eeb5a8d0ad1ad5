"""Fields that choose among fixed values: checkboxes, enums, Yes/No, consts.

Nothing is pre-selected unless the schema has a default: a required choice is made by
the person, never by the form.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as W

from ._base import FieldKind, LeafField
from ._fields import check_type
from ._theme import LayoutName, make
from ._util import MISSING, FormValueError, esc, json_equal, short_json


class CheckboxField(LeafField):
    """A Checkbox for an optional boolean or one with a default; left out until ticked
    or unticked by a person."""

    kind: FieldKind = "boolean"

    def make_input(self, lay: LayoutName) -> W.Widget:
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

    kind: FieldKind = "enum"

    def choices(self) -> list[Any]:
        """The values to choose from."""
        return list(self.schema["enum"])

    def labels(self, values: list[Any]) -> list[str]:
        """One label per value."""
        names = self.hints.enum_names
        if len(names) == len(values):
            return list(names)
        return [v if isinstance(v, str) else short_json(v) for v in values]

    def make_input(self, lay: LayoutName) -> W.Widget:
        self.values = self.choices()
        options: list[tuple[str, int]] = list(
            zip(self.labels(self.values), range(len(self.values)), strict=False)
        )
        radio = self.hints.widget in ("radio", "radios") or isinstance(self, YesNoField)
        if not self.required and not radio:
            options.insert(0, ("—", -1))
        cls = W.RadioButtons if radio else W.Dropdown
        extra: tuple[str, ...] = ("hitl-radio",) if radio else ()
        if isinstance(self, YesNoField):
            extra = ("hitl-radio", "hitl-yesno")
        return make(
            cls,
            self.classes("hitl-input", *extra),
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
        given = getattr(self, "_given", None)
        if given is not None and given[0] == index:
            return given[1]  # 0.0 chosen among [0, 1] comes back as 0.0
        return self.values[index]

    def write(self, value: Any) -> None:
        self._given: tuple[int, Any] | None = None
        if value is MISSING:
            self.input.value = -1 if not self.required and -1 in self.input_values() else None
            return
        for i, v in enumerate(self.values):
            if json_equal(v, value):
                self.input.value = i
                self._given = (i, value)
                return
        raise FormValueError(self.pointer, f"{short_json(value)} is not one of the choices")

    def input_values(self) -> list[Any]:
        """The option values of the input widget."""
        return [v for _, v in self.input.options]


class YesNoField(ChoiceField):
    """A required boolean without default: Yes / No, nothing pre-selected."""

    kind: FieldKind = "boolean"

    def choices(self) -> list[Any]:
        return [True, False]

    def labels(self, values: list[Any]) -> list[str]:
        names = self.hints.enum_names
        return list(names) if len(names) == 2 else ["Yes", "No"]


class ConstField(LeafField):
    """A fixed value (``const``, ``type: null``), shown as read-only text: "Channel:
    release". It is sent, as shown (as it was written when a value set it: ``-2``
    under ``const: -2.0``). A value set from code that leaves the member out leaves it
    out, required or not: the form shows it missing rather than invent it, the text
    says "(left out)" and an Include button puts it back."""

    kind: FieldKind = "const"

    def make_input(self, lay: LayoutName) -> W.Widget:
        self.fixed_value = self.schema.get("const") if "const" in self.schema else None
        self.included = True
        self.given: Any = MISSING
        self.include: W.Button | None = None
        return make(
            W.HTML,
            self.classes("hitl-input", "hitl-const"),
            lay,
            value=self._text(),
            description=self.label_text(),
            tooltip=self.tooltip(),
        )

    def _text(self) -> str:
        value = self.fixed_value
        shown = "None" if value is None else value if isinstance(value, str) else None
        text = esc(shown) if shown is not None else esc(short_json(value, 200))
        left_out = ' <span class="hitl-help">(left out)</span>' if not self.included else ""
        return f'<span class="hitl-const-value">{text}</span>{left_out}'

    def get(self) -> Any:
        if not self.included:
            return MISSING
        return self.fixed_value if self.given is MISSING else self.given

    def write(self, value: Any) -> None:
        if value is not MISSING and not json_equal(value, self.fixed_value):
            raise FormValueError(
                self.pointer, f"the value is fixed to {short_json(self.fixed_value)}"
            )
        self.included = value is not MISSING
        self.given = value
        self.input.value = self._text()
        self._offer_include()

    def _offer_include(self) -> None:
        """Show the Include button while the value is left out (and it may be put in)."""
        wanted = not self.included and not self.readonly
        if wanted and self.include is None:
            self.include = make(
                W.Button,
                self.classes("hitl-include"),
                description=f"Include {short_json(self.fixed_value, 30)}",
                tooltip=f"send {short_json(self.fixed_value, 60)} for {self.title}",
            )
            self.include.on_click(self._on_include)
        elif not wanted and self.include is not None:
            self.include = None
        else:
            return
        self.widgets = [
            self.frame(self.input),
            *([self.include] if self.include is not None else []),
            *([self.note] if self.note is not None else []),
        ]
        self.widgets_changed()

    def _on_include(self, _button: Any) -> None:
        self.included = True
        self.given = MISSING
        self._touched = True
        self.input.value = self._text()
        self._offer_include()
        self.ctx.changed()

    def set_disabled(self, disabled: bool) -> None:
        super().set_disabled(disabled)
        if self.include is not None:
            self.include.disabled = disabled

    def apply_default(self) -> None:
        self.included = True  # what is shown is sent (a default cannot differ)


class MultiChoiceField(LeafField):
    """``widget: checkboxes`` on an array of enum values: one SelectMultiple, values in
    the enum's order. A list that was set comes back unchanged until the selection
    changes."""

    kind: FieldKind = "multichoice"

    def make_input(self, lay: LayoutName) -> W.Widget:
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
