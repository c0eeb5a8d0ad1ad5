"""``stop_tasks``: a task that lost its cancellation is cancelled again, and a stop that
cannot complete gives up at its limit instead of hanging."""

from __future__ import annotations

import asyncio
import logging

import pytest

from hitl_nb._stopping import stop_tasks
from tests.helpers.lost_cancel import lose_a_cancellation


def test_a_task_that_lost_its_cancellation_is_stopped_anyway() -> None:
    async def go() -> None:
        entered = asyncio.Event()

        async def runs_on() -> None:
            await lose_a_cancellation(entered)
            await asyncio.sleep(3600)  # the loop goes on, as if never told to stop

        task = asyncio.ensure_future(runs_on())
        await entered.wait()
        assert await stop_tasks([task], within=30, what="the loop")
        assert task.cancelled()

    asyncio.run(go())


def test_a_stop_gives_up_at_its_limit_and_names_what_did_not_stop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def go() -> None:
        release = asyncio.Event()

        async def refuses() -> None:
            while not release.is_set():
                try:
                    await release.wait()
                except asyncio.CancelledError:
                    continue  # every cancellation lost

        task = asyncio.ensure_future(refuses())
        await asyncio.sleep(0)
        with caplog.at_level(logging.WARNING, logger="hitl_nb"):
            assert not await stop_tasks([task], within=0.5, what="the stubborn loop")
        assert "the stubborn loop did not stop within" in caplog.text
        assert not task.done()
        release.set()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(go())


def test_ended_tasks_and_the_caller_itself_are_taken_as_they_are() -> None:
    async def go() -> None:
        async def fails() -> None:
            raise ValueError("already failed")

        failed = asyncio.ensure_future(fails())
        await asyncio.gather(failed, return_exceptions=True)
        me = asyncio.current_task()
        assert me is not None
        # Its own task in the list (a close() run by a task it stops) is not awaited.
        assert await stop_tasks([failed, me], within=5)
        assert isinstance(failed.exception(), ValueError)

    asyncio.run(go())
