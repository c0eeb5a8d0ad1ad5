"""Date and date-time fields: pickers that emit ISO 8601 / RFC 3339 text.

A string that was set is given back exactly as long as the person did not change the
picker (``2024-05-01t10:00:00z`` stays spelled that way).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import ipywidgets as W

from ._base import LeafField
from ._fields import check_type
from ._util import MISSING, esc, make


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
            if self._original is not None and self._original[1] is None:
                return self._original[0]  # a string the picker cannot show, kept as given
            return MISSING
        if self._original is not None and self._original[1] == value:
            return self._original[0]  # unchanged: give back exactly what was set
        return self._format(value)

    def write(self, value: Any) -> None:
        self._original = None
        if value is MISSING:
            self.input.value = None
            return
        check_type(self, value, str)
        try:
            parsed = self._parse(value)
        except (ValueError, OverflowError):
            # e.g. a leap second, or no date at all: keep the text (the validator judges
            # it) and say so under the picker; picking a value replaces it
            self.input.value = None
            self._original = (value, None)
            if self.note is None:
                self._make_note()
                self.widgets_changed()
            else:
                self.refresh_label()
            return
        self.input.value = parsed
        self._original = (value, parsed)

    def on_user_edit(self) -> None:
        if self._original is not None and self._original[1] is None:
            self._original = None
            self.refresh_label()

    def note_html(self) -> str:
        html = super().note_html()
        if self._original is not None and self._original[1] is None:
            html += (
                '<div style="color:#666;font-size:90%">kept as given (the picker cannot show '
                f"it): <code>{esc(self._original[0][:80])}</code></div>"
            )
        return html


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
