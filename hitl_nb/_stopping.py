"""Stopping background tasks so that a stop cannot hang, on every Python (:func:`stop_tasks`).

``task.cancel()`` then ``await asyncio.gather(task)`` waits for as long as the task
runs, and a cancelled task can run on: before Python 3.12, ``asyncio.wait_for`` returns
normally when the cancellation comes just as the future it waits for completes
(CPython gh-86296), and libraries wait that way (psycopg_pool waits for a free
connection with it). The cancellation is then lost: a loop that was told to stop goes
on, and whoever awaited its end waits forever (a gateway's ``close()`` did, on a loaded
machine, on Python 3.10). So a task still running after a pause is cancelled again, and
the wait has a limit; the loops this stops check besides whether they should still run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from hitl_nb._backoff import Backoff

__all__ = ["stop_tasks"]

log = logging.getLogger("hitl_nb")

#: The pauses before a task that runs on is cancelled again (0.25 s, doubling, up to
#: 2 s): long enough for a task's own clean-up after a cancellation (a query cancelled
#: on the server, a connection closed), short against a test's or a host's patience.
_PAUSES = Backoff(0.25, 2.0)


async def stop_tasks(
    tasks: Iterable[asyncio.Task[Any]], *, within: float = 10.0, what: str = "a task"
) -> bool:
    """Cancel ``tasks`` and wait until they end, at most ``within`` seconds; True when
    they all ended. A task still running after a pause is cancelled again (its first
    cancellation may have been lost, see the module docstring); one still running at
    the limit is left, with a warning naming ``what`` it is and where it runs.

    What the ended tasks raised is read and dropped (they were told to stop), so
    nothing is reported later as an exception never retrieved.
    """
    loop = asyncio.get_running_loop()
    every = [task for task in tasks if task is not asyncio.current_task()]
    pending = {task for task in every if not task.done()}
    give_up = loop.time() + within
    pause = _PAUSES.first
    while pending:
        for task in pending:
            task.cancel()
        left = give_up - loop.time()
        if left <= 0:
            break
        _, pending = await asyncio.wait(pending, timeout=min(pause, left))
        pause = _PAUSES.after(pause)
    for task in every:
        if task.done() and not task.cancelled():
            task.exception()
    for task in pending:
        log.warning("hitl-nb: %s did not stop within %.0f s: %r", what, within, task)
    return not pending
