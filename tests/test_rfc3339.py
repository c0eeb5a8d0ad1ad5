"""RFC 3339 read once (``hitl_nb._rfc3339``): what the deadline check, the mock agent and
the forms' pickers all take, and what none of them takes."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hitl_nb._rfc3339 import Reading, read_date, read_date_time, read_time
from hitl_nb.spec import parse_rfc3339


def test_a_date_time_is_read_into_its_parts() -> None:
    assert read_date_time("2024-05-01T10:00:00.5-02:30") == Reading(
        (2024, 5, 1), (10, 0, 0, 500_000), "-02:30"
    )
    assert read_date_time("2024-05-01t10:00:00z") == Reading((2024, 5, 1), (10, 0, 0, 0), "+00:00")
    assert read_date_time("2024-05-01T10:00:00-02:30").offset_minutes == -150  # type: ignore[union-attr]
    # A fraction longer than Python keeps is cut at the microsecond, not rounded.
    assert read_date_time("2024-05-01T10:00:00.1234569Z").time == (10, 0, 0, 123_456)  # type: ignore[union-attr]


def test_a_space_separates_only_where_the_caller_says_so() -> None:
    assert read_date_time("2024-05-01 10:00:00Z") is None
    assert read_date_time("2024-05-01 10:00:00Z", space=True) is not None


@pytest.mark.parametrize(
    "text",
    [
        "2024-05-01T10:00:00",  # no offset
        "2024-05-01T10:00Z",  # no seconds
        "2024-5-01T10:00:00Z",
        "2024-05-01T10:00:00.Z",
        "2024-05-01T10:00:00+0200",
        "2024-05-01T10:00:00Z ",
        "٢٠٢٤-05-01T10:00:00Z",  # \d in Python matches other scripts' digits: not here
        "",
    ],
)
def test_what_is_not_a_date_time_is_refused_everywhere(text: str) -> None:
    assert read_date_time(text, space=True) is None and parse_rfc3339(text) is None


def test_times_and_dates_alone() -> None:
    assert read_time("23:59:60.25+01:00") == Reading(None, (23, 59, 60, 250_000), "+01:00")
    assert read_time("23:59") is None and read_time("2024-05-01T23:59:00Z") is None
    assert read_date("2024-02-29") == (2024, 2, 29)
    assert read_date("20240229") is None and read_date("2024-02-29T00:00:00Z") is None


def test_the_deadline_reading_keeps_its_rules() -> None:
    leap = parse_rfc3339("2016-12-31T23:59:60Z")
    assert leap == dt.datetime(2016, 12, 31, 23, 59, 59, tzinfo=dt.timezone.utc)
    assert parse_rfc3339("2016-12-31T23:59:61Z") is None
    assert parse_rfc3339("2024-02-30T00:00:00Z") is None
    assert parse_rfc3339("2024-05-01T10:00:00+24:00") is None


@pytest.mark.property
@given(
    st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)),
    st.integers(-23 * 60 - 59, 23 * 60 + 59),
)
def test_what_python_writes_is_read_back_the_same(moment: dt.datetime, minutes: int) -> None:
    aware = moment.replace(tzinfo=dt.timezone(dt.timedelta(minutes=minutes)))
    assert parse_rfc3339(aware.isoformat()) == aware
