"""Leaf fields: strings, formats, numbers, booleans, enums, consts and the JSON fallback.

Every field leaves its member out until something is entered (no ``""``, ``0`` or
``false`` placeholders), and never corrects what a person typed: an out-of-range number
stays as typed and the validator's message is shown next to it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import ipywidgets as W

from .._json import parse_json
from ..errors import BadJSON
from ._util import MISSING, FormValueError, esc, json_equal, json_type, make, short_json
from .base import LeafField


def _placeholder(field: LeafField, fallback: str = "") -> str:
    if field.hints.placeholder is not None:
        return field.hints.placeholder
    examples = field.schema.get("examples")
    if isinstance(examples, list) and examples:
        return "e.g. " + (examples[0] if isinstance(examples[0], str) else short_json(examples[0]))
    return fallback


def _check_type(field: LeafField, value: Any, *types: type) -> None:
    if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
        want = " or ".join(t.__name__ for t in types)
        raise FormValueError(field.pointer, f"expected {want}, got {json_type(value)}")


class StringField(LeafField):
    """Text (Textarea when maxLength > 200, ``widget: textarea`` or ``rows``; Password by
    ``widget: password``). An emptied input is left out, or ``emptyValue`` if hinted."""

    kind = "string"

    def make_input(self, lay: str) -> W.Widget:
        self._empty_is_value = False
        max_len = self.schema.get("maxLength")
        widget = self.hints.widget
        cls: type = W.Text
        if (
            widget == "textarea"
            or self.hints.rows
            or (widget is None and isinstance(max_len, int) and max_len > 200)
        ):
            cls = W.Textarea
        elif widget == "password":
            cls = W.Password
        kw: dict[str, Any] = {}
        if cls is W.Textarea and self.hints.rows:
            kw["rows"] = self.hints.rows
        return make(
            cls,
            self.classes("hitl-input"),
            "wide" if lay == "default" else lay,
            placeholder=_placeholder(self, self._format_placeholder()),
            tooltip=self.tooltip(),
            description=self.label_text(),
            **kw,
        )

    def _format_placeholder(self) -> str:
        return {
            "time": "hh:mm:ss+00:00",
            "email": "name@example.org",
            "uri": "https://…",
            "uuid": "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",
            "date": "YYYY-MM-DD",
            "date-time": "YYYY-MM-DDThh:mm:ss+00:00",
        }.get(str(self.schema.get("format")), "")

    def on_user_edit(self) -> None:
        self._empty_is_value = False

    def get(self) -> Any:
        text = self.input.value
        if text == "":
            if self._empty_is_value:
                return ""
            return self.hints.empty_value
        return text

    def write(self, value: Any) -> None:
        if value is MISSING:
            self.input.value = ""
            self._empty_is_value = False
            return
        _check_type(self, value, str)
        self.input.value = value
        self._empty_is_value = value == ""


class DateField(LeafField):
    """A DatePicker for ``format: date``; emits ``YYYY-MM-DD``."""

    kind = "date"

    def make_input(self, lay: str) -> W.Widget:
        self._original: tuple[str, Any] | None = None
        return make(
            W.DatePicker,
            self.classes("hitl-input"),
            lay,
            tooltip=self.tooltip(),
            description=self.label_text(),
            value=None,
        )

    def _parse(self, text: str) -> Any:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            raise ValueError(text)
        return dt.date.fromisoformat(text)

    def _format(self, value: Any) -> str:
        return str(value.isoformat())

    def get(self) -> Any:
        value = self.input.value
        if value is None:
            return MISSING
        if self._original is not None and self._original[1] == value:
            return self._original[0]  # unchanged: give back exactly what was set
        return self._format(value)

    def write(self, value: Any) -> None:
        self._original = None
        if value is MISSING:
            self.input.value = None
            return
        _check_type(self, value, str)
        try:
            parsed = self._parse(value)
        except ValueError:
            raise FormValueError(self.pointer, f"{value!r} is not a {self.kind}") from None
        self.input.value = parsed
        self._original = (value, parsed)


_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


class DateTimeField(DateField):
    """A timezone-aware DatetimePicker for ``format: date-time``; emits RFC 3339."""

    kind = "date-time"

    def make_input(self, lay: str) -> W.Widget:
        self._original = None
        return make(
            W.DatetimePicker,
            self.classes("hitl-input"),
            lay,
            tooltip=self.tooltip(),
            description=self.label_text(),
            value=None,
        )

    def _parse(self, text: str) -> Any:
        if not _RFC3339.fullmatch(text):
            raise ValueError(text)
        norm = text[:10] + "T" + text[11:]
        norm = norm[:-1] + "+00:00" if norm[-1] in "Zz" else norm
        frac = re.search(r"\.(\d+)", norm)
        if frac and len(frac.group(1)) > 6:  # Python keeps microseconds only
            norm = norm.replace(frac.group(0), "." + frac.group(1)[:6], 1)
        return dt.datetime.fromisoformat(norm)

    def _format(self, value: Any) -> str:
        if value.tzinfo is None:
            value = value.astimezone()
        text = value.isoformat()
        return str(text[:-6] + "Z" if text.endswith("+00:00") else text)


_INT = re.compile(r"[+-]?\d{1,4000}")


class NumberField(LeafField):
    """Numbers and integers in a Text input, so nothing is clamped or defaulted to 0.

    ``widget: range`` (or ``slider``) draws a slider when both bounds are given.
    """

    kind = "number"

    def make_input(self, lay: str) -> W.Widget:
        s = self.schema
        self.slider = (
            self.hints.widget in ("range", "slider")
            and all(
                isinstance(s.get(k), (int, float)) and not isinstance(s.get(k), bool)
                for k in ("minimum", "maximum")
            )
            and s["minimum"] < s["maximum"]
        )
        if self.slider:
            cls = W.IntSlider if s.get("type") == "integer" else W.FloatSlider
            step = s.get(
                "multipleOf", 1 if cls is W.IntSlider else (s["maximum"] - s["minimum"]) / 100
            )
            return make(
                cls,
                self.classes("hitl-input"),
                lay,
                min=s["minimum"],
                max=s["maximum"],
                step=step,
                value=s["minimum"],
                tooltip=self.tooltip(),
                description=self.label_text(),
            )
        return make(
            W.Text,
            self.classes("hitl-input"),
            lay,
            placeholder=_placeholder(self, self._bounds()),
            tooltip=self.tooltip(),
            description=self.label_text(),
        )

    def _bounds(self) -> str:
        s = self.schema
        word = "whole number" if s.get("type") == "integer" else "number"
        parts = []
        for key, sym in (
            ("minimum", "≥"),
            ("exclusiveMinimum", ">"),
            ("maximum", "≤"),
            ("exclusiveMaximum", "<"),
            ("multipleOf", "multiple of"),
        ):
            if key in s:
                parts.append(f"{sym} {s[key]}")
        return word + (" " + ", ".join(parts) if parts else "")

    def get(self) -> Any:
        self._parse_error = None
        if self.slider:
            return self.input.value if self._touched else MISSING
        text = self.input.value.strip()
        if not text:
            return MISSING
        try:
            if _INT.fullmatch(text):
                return int(text)
            if "_" in text:
                raise ValueError(text)
            number = float(text)
        except ValueError:
            self._parse_error = f"{text[:40]!r} is not a number"
            return MISSING
        if number != number or number in (float("inf"), float("-inf")):
            self._parse_error = f"{text[:40]!r} is not a finite number"
            return MISSING
        return number

    def write(self, value: Any) -> None:
        if value is MISSING:
            if self.slider:
                self.input.value = self.input.min
            else:
                self.input.value = ""
            return
        _check_type(self, value, int, float)
        if self.slider:
            if not self.input.min <= value <= self.input.max:
                raise FormValueError(self.pointer, f"{value} is outside the slider's range")
            self.input.value = value
        else:
            self.input.value = str(value) if isinstance(value, int) else repr(value)


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
        return bool(self.input.value) if self._touched else MISSING

    def write(self, value: Any) -> None:
        if value is MISSING:
            self.input.value = False
            return
        _check_type(self, value, bool)
        self.input.value = value

    def untouch(self) -> None:
        # a pre-filled default counts as a value: it is what the agent proposes
        self._touched = "default" in self.schema and isinstance(self.schema["default"], bool)


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


class JsonField(LeafField):
    """The fallback: the subtree is edited as JSON text, with a note saying why."""

    kind = "json"

    def make_input(self, lay: str) -> W.Widget:
        if self.node.note:
            self.help = (
                self.help + " " if self.help else ""
            ) + f"(edited as JSON: {self.node.note})"
        return make(
            W.Textarea,
            self.classes("hitl-input", "hitl-json"),
            "wide" if lay == "default" else lay,
            placeholder=_placeholder(self, "JSON value"),
            tooltip=self.tooltip(),
            description=self.label_text(),
            rows=3,
        )

    def get(self) -> Any:
        self._parse_error = None
        text = self.input.value
        if not text.strip():
            return MISSING
        try:
            return parse_json(text)
        except BadJSON as exc:
            self._parse_error = f"not valid JSON: {exc}"
        except ValueError as exc:
            self._parse_error = f"not valid JSON: {str(exc)[:80]}"
        return MISSING

    def write(self, value: Any) -> None:
        if value is MISSING:
            self.input.value = ""
            return
        try:
            self.input.value = json.dumps(
                value,
                ensure_ascii=False,
                allow_nan=False,
                indent=2 if isinstance(value, (dict, list)) else None,
            )
        except (TypeError, ValueError) as exc:
            raise FormValueError(self.pointer, f"not JSON data: {exc}") from None
