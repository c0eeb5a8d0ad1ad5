"""Date, date-time and time fields: pickers that emit ISO 8601 / RFC 3339 text.

``date-time`` and ``time`` carry a timezone: the picker holds the wall-clock time and a
dropdown beside it the UTC offset, so a value keeps the zone it came with
(``09:30+01:00`` stays ``+01:00``, never turned into UTC). A string that was set is
given back exactly as long as the person did not change it (``2024-05-01t10:00:00z``
stays spelled that way); one the picker cannot show (a leap second) is kept as given and
the note under the picker says so.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import ipywidgets as W

from hitl_nb._rfc3339 import read_date, read_date_time, read_time

from ._base import FieldKind, LeafField
from ._fields import check_type
from ._theme import LayoutName, make
from ._util import MISSING, esc


class DateField(LeafField):
    """A DatePicker for ``format: date``; emits ``YYYY-MM-DD``."""

    kind: FieldKind = "date"

    def make_input(self, lay: LayoutName) -> W.Widget:
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
        date = read_date(text)
        if date is None:
            raise ValueError(text)
        return dt.date(*date)

    def _format(self, value: Any) -> str:
        return str(value.isoformat())

    def _shown(self) -> Any:
        """What the picker(s) show now (None: nothing picked)."""
        return self.input.value

    def _show(self, parsed: Any) -> None:
        self.input.value = parsed

    def get(self) -> Any:
        value = self._shown()
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
            self._show(None)
            return
        check_type(self, value, str)
        try:
            parsed = self._parse(value)
        except (ValueError, OverflowError):
            # e.g. a leap second, or no date at all: keep the text (the validator judges
            # it) and say so under the picker; picking a value replaces it
            self._show(None)
            self._original = (value, None)
            if self.note is None:
                self._make_note()
                self.widgets_changed()
            else:
                self.refresh_label()
            return
        self._show(parsed)
        self._original = (value, self._shown())

    def on_user_edit(self) -> None:
        if self._original is not None and self._original[1] is None:
            self._original = None
            self.refresh_label()

    def note_html(self) -> str:
        html = super().note_html()
        if self._original is not None and self._original[1] is None:
            html += (
                '<div class="hitl-kept">kept as given (the picker cannot show it): '
                f"<code>{esc(self._original[0][:80])}</code></div>"
            )
        return html


def _offset_text(offset: dt.timedelta) -> str:
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


#: The UTC offsets in use somewhere (whole hours and the half/quarter hours of real zones).
_HALF_HOURS = (-570, -210, 210, 270, 330, 345, 390, 525, 570, 630, 765, 825)
_OFFSETS = sorted({h * 60 for h in range(-12, 15)} | set(_HALF_HOURS))


def _zone_options() -> list[tuple[str, str]]:
    out = []
    for minutes in _OFFSETS:
        text = _offset_text(dt.timedelta(minutes=minutes))
        out.append(("UTC" if minutes == 0 else f"UTC{text}", text))
    return out


def _local_offset() -> str:
    offset = dt.datetime.now().astimezone().utcoffset() or dt.timedelta(0)
    return _offset_text(offset)


class _ZonedField(DateField):
    """A picker for the wall-clock part and a UTC-offset dropdown beside it."""

    def make_input(self, lay: LayoutName) -> W.Widget:
        self._original = None
        picker = self.make_picker(lay)
        options = _zone_options()
        local = _local_offset()
        if local not in [v for _, v in options]:
            options.append((f"UTC{local}", local))
        self.zone = make(
            W.Dropdown,
            self.classes("hitl-zone"),
            "hidden" if lay == "hidden" else "zone",
            options=options,
            value=local,
            tooltip="time zone (offset from UTC)",
        )
        self.zone.observe(self._on_input, names="value")
        return picker

    def make_picker(self, lay: LayoutName) -> W.Widget:
        """The wall-clock picker (subclasses)."""
        raise NotImplementedError  # pragma: no cover - both subclasses define it

    def frame(self, input_widget: W.Widget) -> W.Widget:
        return make(
            W.HBox,
            self.classes("hitl-zoned"),
            "hidden" if self.lay == "hidden" else "row",
            children=[input_widget, self.zone],
        )

    def _shown(self) -> Any:
        value = self.input.value
        return None if value is None else (value, self.zone.value)

    def _show(self, parsed: Any) -> None:
        if parsed is None:
            self.input.value = None
            return
        wall, offset = parsed
        if offset not in [v for _, v in self.zone.options]:
            self.zone.options = [*self.zone.options, (f"UTC{offset}", offset)]
        self.zone.value = offset
        self.input.value = wall

    def set_disabled(self, disabled: bool) -> None:
        super().set_disabled(disabled)
        self.zone.disabled = disabled or self.readonly


class DateTimeField(_ZonedField):
    """``format: date-time``: date and time picker plus its UTC offset; emits RFC 3339
    with the offset shown (``Z`` for UTC)."""

    kind: FieldKind = "date-time"

    def make_picker(self, lay: LayoutName) -> W.Widget:
        return make(
            W.NaiveDatetimePicker,
            self.classes("hitl-input"),
            lay,
            tooltip=self.tooltip(),
            description=self.label_text(),
            value=None,
        )

    def _parse(self, text: str) -> Any:
        reading = read_date_time(text, space=True)
        if reading is None or reading.date is None:
            raise ValueError(text)
        return dt.datetime(*reading.date, *reading.time), reading.offset

    def _format(self, value: Any) -> str:
        wall, offset = value
        text = wall.isoformat(timespec="seconds" if not wall.microsecond else "auto")
        return str(text + ("Z" if offset == "+00:00" else offset))


class TimeField(_ZonedField):
    """``format: time``: a time picker (to the second) plus its UTC offset; emits
    RFC 3339 ``full-time`` (``hh:mm:ss+hh:mm``, ``Z`` for UTC)."""

    kind: FieldKind = "time"

    def make_picker(self, lay: LayoutName) -> W.Widget:
        return make(
            W.TimePicker,
            self.classes("hitl-input"),
            lay,
            tooltip=self.tooltip(),
            description=self.label_text(),
            value=None,
            step=1,
        )

    def _parse(self, text: str) -> Any:
        reading = read_time(text)
        if reading is None:
            raise ValueError(text)
        return dt.time(*reading.time), reading.offset

    def _format(self, value: Any) -> str:
        wall, offset = value
        text = wall.isoformat(timespec="seconds" if not wall.microsecond else "auto")
        return str(text + ("Z" if offset == "+00:00" else offset))
