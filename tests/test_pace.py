"""``Pace``: a sleep that a wake from any thread ends early, and a wake never lost."""

from __future__ import annotations

import asyncio
import threading

from hitl_nb._pace import Pace


def test_a_wake_ends_the_sleep_from_another_thread_and_one_before_start_is_kept() -> None:
    pace = Pace()
    pace.wake()  # before the loop binds it: the first sleep ends at once

    async def sleeps() -> list[bool]:
        pace.start()
        first = await pace.sleep(30)
        threading.Timer(0.05, pace.wake).start()
        second = await pace.sleep(30)
        third = await pace.sleep(0.01)
        return [first, second, third]

    assert asyncio.run(sleeps()) == [True, True, False]


def test_a_wake_while_busy_ends_the_next_sleep_and_only_that_one() -> None:
    async def busy() -> list[bool]:
        pace = Pace()
        pace.start()
        pace.wake()  # from the loop itself, while the follower is not sleeping
        await asyncio.sleep(0)
        return [await pace.sleep(30), await pace.sleep(0.01)]

    assert asyncio.run(busy()) == [True, False]
