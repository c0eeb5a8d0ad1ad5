"""``Backoff``: the one curve of pauses before trying again (hitl_nb._backoff)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hitl_nb._backoff import Backoff

seconds = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
factors = st.floats(min_value=1, max_value=10, allow_nan=False, allow_infinity=False)


def test_the_pauses_double_from_the_first_up_to_the_cap() -> None:
    pauses = Backoff(0.25, 2.0)
    assert [pauses.delay(n) for n in range(1, 7)] == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0]
    assert pauses.after(0.25) == 0.5 and pauses.after(1.5) == 2.0 and pauses.after(2.0) == 2.0


def test_another_factor_and_no_cap() -> None:
    thrice = Backoff(1, 100, factor=3)
    assert [thrice.delay(n) for n in range(1, 7)] == [1, 3, 9, 27, 81, 100]
    endless = Backoff(1.0, math.inf)
    assert endless.delay(11) == 1024.0
    assert endless.delay(100_000) == math.inf  # past any float: no OverflowError


def test_a_first_pause_of_zero_stays_zero() -> None:
    assert Backoff(0, 5).delay(1) == Backoff(0, 5).delay(10**6) == Backoff(0, 5).after(0) == 0.0


def test_a_first_pause_over_the_cap_is_the_cap() -> None:
    assert Backoff(10, 5).delay(1) == Backoff(10, 5).delay(3) == 5.0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param((-0.1, 5), "first must be a finite number >= 0", id="negative-first"),
        pytest.param((math.inf, 5), "first must be a finite number >= 0", id="endless-first"),
        pytest.param((1, -1), "cap must be a number >= 0", id="negative-cap"),
        pytest.param((1, math.nan), "cap must be a number >= 0", id="nan-cap"),
        pytest.param((1, 5, 0.5), "factor must be a finite number >= 1", id="shrinking"),
        pytest.param((True, 5), "first must be a finite number >= 0", id="bool-first"),
        pytest.param(("1", 5), "first must be a finite number >= 0", id="text-first"),
    ],
)
def test_bad_numbers_are_refused_by_name(arguments: tuple[object, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Backoff(*arguments)  # type: ignore[arg-type]


@pytest.mark.parametrize("attempt", [0, -1, 1.0, True])
def test_attempts_are_counted_from_one(attempt: object) -> None:
    with pytest.raises(ValueError, match="counted from 1"):
        Backoff(1, 5).delay(attempt)  # type: ignore[arg-type]


@pytest.mark.property
@given(first=seconds, cap=seconds, factor=factors, attempts=st.integers(1, 200))
def test_pauses_start_at_the_first_never_shrink_and_never_pass_the_cap(
    first: float, cap: float, factor: float, attempts: int
) -> None:
    pauses = Backoff(first, cap, factor)
    delays = [pauses.delay(n) for n in range(1, attempts + 1)]
    assert delays[0] == min(first, cap)
    assert all(d <= cap for d in delays)
    assert all(a <= b for a, b in zip(delays, delays[1:], strict=False))


@pytest.mark.property
@given(first=seconds, cap=seconds, steps=st.integers(1, 100))
def test_counting_pauses_and_counting_attempts_agree(first: float, cap: float, steps: int) -> None:
    pauses = Backoff(first, cap)
    pause = pauses.delay(1)
    for attempt in range(2, steps + 2):
        pause = pauses.after(pause)
        assert pause == pauses.delay(attempt)  # doubling is exact in binary floats
