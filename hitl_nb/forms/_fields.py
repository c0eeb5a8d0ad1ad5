"""Leaf fields: strings, numbers and the JSON fallback (dates in :mod:`.dates`, choices
in :mod:`.choices`).

Every field leaves its member out until something is entered (no ``""``, ``0`` or
``false`` placeholders), and never corrects what a person typed: an out-of-range number
stays as typed and the validator's message is shown next to it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import ipywidgets as W

from .._json import parse_json
from .._messages import number_text
from ..errors import BadJSON
from ._base import FieldKind, LeafField
from ._theme import LayoutName, make
from ._util import MISSING, FormValueError, json_type, short_json

_TYPE_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array"}


def placeholder(field: LeafField, fallback: str = "") -> str:
    """The input's placeholder: the hint, else the first example, else ``fallback``."""
    if field.hints.placeholder is not None:
        return field.hints.placeholder
    examples = field.schema.get("examples")
    if isinstance(examples, list) and examples:
        return "e.g. " + (examples[0] if isinstance(examples[0], str) else short_json(examples[0]))
    return fallback


def check_type(field: LeafField, value: Any, *types: type) -> None:
    """Raise FormValueError (JSON type names) unless ``value`` is one of ``types``."""
    if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
        want = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in types)
        raise FormValueError(field.pointer, f"expected {want}, got {json_type(value)}")


class StringField(LeafField):
    """Text (Textarea when maxLength > 200, ``widget: textarea`` or ``rows``; Password by
    ``widget: password``). An emptied input is left out, or ``emptyValue`` if hinted."""

    kind: FieldKind = "string"

    def make_input(self, lay: LayoutName) -> W.Widget:
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
            "text" if lay == "field" else lay,
            placeholder=placeholder(self, self._format_placeholder()),
            tooltip=self.tooltip(),
            description=self.label_text(),
            continuous_update=False,  # messages wait until the person leaves the field
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
        check_type(self, value, str)
        self.input.value = value
        self._empty_is_value = value == ""


_INT = re.compile(r"[+-]?\d{1,4000}")


class NumberField(LeafField):
    """Numbers and integers in a Text input, so nothing is clamped or defaulted to 0.

    ``widget: range`` (or ``slider``) draws a slider when both bounds are given.
    """

    kind: FieldKind = "number"

    def make_input(self, lay: LayoutName) -> W.Widget:
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
            whole = all(isinstance(s.get(k, 1), int) for k in ("minimum", "maximum", "multipleOf"))
            cls = W.IntSlider if s.get("type") == "integer" and whole else W.FloatSlider
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
                continuous_update=False,
            )
        return make(
            W.Text,
            self.classes("hitl-input"),
            lay,
            placeholder=placeholder(self, self._bounds()),
            tooltip=self.tooltip(),
            description=self.label_text(),
            continuous_update=False,
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
                parts.append(f"{sym} {number_text(s[key])}")
        return word + (" " + ", ".join(parts) if parts else "")

    def get(self) -> Any:
        self._parse_error = None
        if self.slider:
            return self.input.value if self._has_value else MISSING
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
            self._parse_error = f"Enter a number (“{text[:40]}” is not one)"
            return MISSING
        if number != number or number in (float("inf"), float("-inf")):
            self._parse_error = f"Enter a finite number (“{text[:40]}” is not one)"
            return MISSING
        return number

    def write(self, value: Any) -> None:
        if value is MISSING:
            if self.slider:
                self.input.value = self.input.min
            else:
                self.input.value = ""
            return
        check_type(self, value, int, float)
        if self.slider:
            if not self.input.min <= value <= self.input.max:
                raise FormValueError(self.pointer, f"{value} is outside the slider's range")
            self.input.value = value
        else:
            self.input.value = str(value) if isinstance(value, int) else repr(value)


class JsonField(LeafField):
    """The fallback: the subtree is edited as JSON text, with a note saying why."""

    kind: FieldKind = "json"

    def make_input(self, lay: LayoutName) -> W.Widget:
        if self.node.note:
            self.help = (
                self.help + " " if self.help else ""
            ) + f"(edited as JSON: {self.node.note})"
        return make(
            W.Textarea,
            self.classes("hitl-input", "hitl-json"),
            "text" if lay == "field" else lay,
            placeholder=placeholder(self, "JSON value"),
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
            self._parse_error = f"Not valid JSON: {exc}"
        except ValueError as exc:
            self._parse_error = f"Not valid JSON: {str(exc)[:80]}"
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
