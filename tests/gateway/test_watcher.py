"""The gateway's task watchers (hitl_nb/gateway/_watcher.py) stop when told, even when
the cancellation that tells them is lost in a call below them (as psycopg_pool's wait
for a connection lost it on Python 3.10 under load; ``tests/helpers/lost_cancel.py``)."""

from __future__ import annotations

import asyncio
import time

from hitl_nb.a2a import Task
from hitl_nb.client import HitlClient
from hitl_nb.gateway._store import Registration
from hitl_nb.gateway._watcher import Watchers
from tests.helpers.lost_cancel import lose_a_cancellation
from tests.helpers.until import until_async

REG = Registration("r1", "http://127.0.0.1:9/", "t1", "Alice", time.time(), "alice")


def _no_client(url: str) -> HitlClient:
    raise AssertionError(f"no agent is asked here ({url})")


def test_close_stops_a_watcher_whose_cancellation_was_lost() -> None:
    async def go() -> None:
        entered = asyncio.Event()

        async def refresh(reg: Registration) -> Task | None:
            await lose_a_cancellation(entered)
            return None  # the agent could not be asked: read again after poll_interval

        watchers = Watchers(refresh, _no_client, poll_interval=3600, max_streams=0)
        watchers.watch(REG)
        await entered.wait()
        closing = asyncio.ensure_future(watchers.close())

        async def closed() -> bool:
            return closing.done()

        await until_async(closed, timeout=30, what="close() to return")
        closing.result()
        assert not watchers.watching(REG.id)

    asyncio.run(go())


def test_an_unwatched_task_is_not_read_again_though_the_cancellation_was_lost() -> None:
    async def go() -> None:
        entered = asyncio.Event()
        runs: list[asyncio.Task[object] | None] = []

        async def refresh(reg: Registration) -> Task | None:
            runs.append(asyncio.current_task())
            if len(runs) == 1:
                await lose_a_cancellation(entered)
            return None

        watchers = Watchers(refresh, _no_client, poll_interval=0.01, max_streams=0)
        watchers.watch(REG)
        await entered.wait()
        watchers.unwatch(REG.id)  # another replica holds the task now
        (watcher,) = runs
        assert watcher is not None

        async def ended() -> bool:
            return watcher.done()

        await until_async(ended, timeout=30, what="the watcher to end")
        assert len(runs) == 1 and not watchers.watching(REG.id)
        await watchers.close()

    asyncio.run(go())
