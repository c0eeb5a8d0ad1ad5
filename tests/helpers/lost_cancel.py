"""A call that loses its task's cancellation, as ``asyncio.wait_for`` did before Python
3.12 when the cancellation came just as the future it waited for completed (CPython
gh-86296): it returns normally and the task runs on as if never cancelled. Libraries
wait that way (psycopg_pool for a free connection); under load the two coincide, and
code that stops a task by cancelling it once must still stop it."""

from __future__ import annotations

import asyncio


async def lose_a_cancellation(entered: asyncio.Event | None = None) -> None:
    """Wait until the task is cancelled, then return normally (``entered`` is set once
    the wait began)."""
    if entered is not None:
        entered.set()
    try:
        await asyncio.get_running_loop().create_future()
    except asyncio.CancelledError:
        return
