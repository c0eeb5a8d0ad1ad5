"""RFC 3339 dates, date-times and times, read once for the whole package.

The envelope's ``deadline`` (:func:`hitl_nb.spec.parse_rfc3339`), the agent's status
timestamps, the mock agent's own, and the forms' ``date``, ``date-time`` and ``time``
pickers all read their text here, so they agree on what is one (RFC 3339 §5.6):
``full-date "T" full-time`` with ``time-offset`` ``Z`` or ``+hh:mm``/``-hh:mm``, ``T``
and ``Z`` in either case, a fraction of any length (kept to the microsecond: Python
keeps no more), and a leap second (``:60``) read as given; the date and time are checked
by :mod:`datetime` where they are built. The separator may be a space where a caller
says so (§5.6 allows one "for the sake of readability"; the forms show such a value, the
envelope's checks do not take it).

What the validator's ``format: date-time`` accepts is jsonschema's check
(``rfc3339-validator``, :mod:`hitl_nb.validation`), which takes ``T`` only: a picker
emits that spelling.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["Reading", "read_date", "read_date_time", "read_time"]

_DATE = r"(\d{4})-(\d{2})-(\d{2})"
_TIME = r"(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})"
# ASCII: RFC 3339's DIGIT is 0-9, where Python's \d also takes other scripts' digits.
_DATE_TIME = {
    False: re.compile(_DATE + "[Tt]" + _TIME, re.ASCII),
    True: re.compile(_DATE + "[Tt ]" + _TIME, re.ASCII),
}
_FULL_TIME = re.compile(_TIME, re.ASCII)
_FULL_DATE = re.compile(_DATE, re.ASCII)


class Reading(NamedTuple):
    """The parts of an RFC 3339 text: ``date`` ``(year, month, day)`` (None for a
    ``full-time``), ``time`` ``(hour, minute, second, microsecond)`` (second 60: a leap
    second) and ``offset`` as ``+hh:mm`` or ``-hh:mm`` (``Z`` is ``+00:00``)."""

    date: tuple[int, int, int] | None
    time: tuple[int, int, int, int]
    offset: str

    @property
    def offset_minutes(self) -> int:
        """The offset from UTC in minutes (east positive)."""
        minutes = int(self.offset[1:3]) * 60 + int(self.offset[4:6])
        return -minutes if self.offset[0] == "-" else minutes


def _time(hour: str, minute: str, second: str, fraction: str | None) -> tuple[int, int, int, int]:
    micro = int((fraction or "0")[:6].ljust(6, "0"))
    return int(hour), int(minute), int(second), micro


def _offset(text: str) -> str:
    return "+00:00" if text in "Zz" else text


def read_date_time(text: str, *, space: bool = False) -> Reading | None:
    """The parts of an RFC 3339 ``date-time``, or None when ``text`` is not one
    (``space``: a space may separate the date and the time)."""
    m = _DATE_TIME[space].fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second, fraction, offset = m.groups()
    date = (int(year), int(month), int(day))
    return Reading(date, _time(hour, minute, second, fraction), _offset(offset))


def read_time(text: str) -> Reading | None:
    """The parts of an RFC 3339 ``full-time`` (``hh:mm:ss[.f]`` and its offset), or None."""
    m = _FULL_TIME.fullmatch(text)
    if m is None:
        return None
    hour, minute, second, fraction, offset = m.groups()
    return Reading(None, _time(hour, minute, second, fraction), _offset(offset))


def read_date(text: str) -> tuple[int, int, int] | None:
    """``(year, month, day)`` of an RFC 3339 ``full-date`` (``YYYY-MM-DD``), or None."""
    m = _FULL_DATE.fullmatch(text)
    return None if m is None else (int(m[1]), int(m[2]), int(m[3]))
