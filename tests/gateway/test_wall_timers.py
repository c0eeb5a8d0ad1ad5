"""Timers at wall-clock times (hitl_nb/gateway/_wall_timers.py) when the wall clock and
the event loop's monotonic clock disagree: a wall clock set forward past a timer's time
fires it at the next check (the replica round arms what is due again); one set back
neither fires it early nor loses it. The wall clock is the test's own, moved by hand;
the loop's clock is the real one."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

from hitl_nb.gateway._wall_timers import WallTimers
from tests.helpers.until import until_async

KEY = ("reg", "prompt")


class WallClock:
    """The real wall clock, moved by ``offset`` seconds (a clock set by hand or by NTP)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


class Fired:
    """What a timer's action saw each time it ran: the wall clock and the loop's."""

    def __init__(self, clock: WallClock) -> None:
        self.clock = clock
        self.at: list[tuple[float, float]] = []

    def fire(self) -> Callable[[], Coroutine[Any, Any, None]]:
        async def act() -> None:
            self.at.append((self.clock(), asyncio.get_running_loop().time()))

        return act


def _setup() -> tuple[WallClock, Fired, WallTimers]:
    """A wall clock of the test's own, what fired, and timers on that clock."""

    def spawn(coro: Coroutine[Any, Any, Any]) -> None:
        asyncio.ensure_future(coro)

    clock = WallClock()
    return clock, Fired(clock), WallTimers(spawn, clock=clock)


async def _fired(fired: Fired) -> list[tuple[float, float]]:
    async def seen() -> list[tuple[float, float]]:
        return fired.at

    return list(await until_async(seen, timeout=10, what="the timer to fire", interval=0.01))


def test_a_wall_clock_set_forward_past_the_time_fires_at_the_next_check() -> None:
    async def go() -> None:
        clock, fired, timers = _setup()
        at = clock() + 3600.0
        timers.arm(KEY, at, fired.fire())
        await asyncio.sleep(0.05)
        assert fired.at == [] and KEY in timers
        clock.offset += 7200.0  # an hour past the time, by the wall clock
        start = asyncio.get_running_loop().time()
        timers.arm(KEY, at, fired.fire())  # the next check (a replica round)
        ((wall, when),) = await _fired(fired)
        assert wall >= at and when - start < 60  # at once, not an hour later
        assert KEY not in timers
        timers.cancel_all()

    asyncio.run(go())


def test_a_wall_clock_set_forward_short_of_the_time_fires_at_the_time_it_names() -> None:
    async def go() -> None:
        clock, fired, timers = _setup()
        at = clock() + 3600.0
        timers.arm(KEY, at, fired.fire())
        clock.offset += 3600.0 - 0.3  # now 0.3 s before the time, by the wall clock
        start = asyncio.get_running_loop().time()
        timers.arm(KEY, at, fired.fire())  # the next check: the timer comes sooner
        ((wall, when),) = await _fired(fired)
        assert wall >= at  # not early
        assert 0.25 <= when - start < 60  # at the time it names, not an hour later
        timers.cancel_all()

    asyncio.run(go())


def test_a_wall_clock_set_back_neither_fires_early_nor_loses_the_timer() -> None:
    async def go() -> None:
        clock, fired, timers = _setup()
        loop = asyncio.get_running_loop()
        start = loop.time()
        at = clock() + 0.2
        timers.arm(KEY, at, fired.fire())
        clock.offset -= 0.4  # set back: the time is now 0.6 s away by the wall clock
        timers.arm(KEY, at, fired.fire())  # a check meanwhile keeps the one timer
        ((wall, when),) = await _fired(fired)
        # The loop's timer woke after 0.2 s, found the wall clock short of the time and
        # waited again: the action came at the wall-clock time it names, 0.6 s in.
        assert wall >= at
        assert when - start >= 0.6 - 0.02
        assert KEY not in timers
        timers.cancel_all()

    asyncio.run(go())


def test_cancel_all_stops_every_timer() -> None:
    async def go() -> None:
        clock, fired, timers = _setup()
        timers.arm(KEY, clock() + 0.05, fired.fire())
        timers.cancel_all()
        assert KEY not in timers
        await asyncio.sleep(0.15)
        assert fired.at == []

    asyncio.run(go())
