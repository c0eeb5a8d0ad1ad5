"""When to look at something again: after a pause, or at once when told (:class:`Pace`).

Whoever follows a task looks at it again on a timer while nothing streams, and sooner
when something happened that moves the task on: a notebook's card after its answer was
accepted (:mod:`hitl_nb.notebook._follower`), the gateway after it forwarded one
(:mod:`hitl_nb.gateway._watcher`), an inbox after an answer. A :class:`Pace` is that
timer with its early wake, safe to wake from any thread (a card's click arrives on the
kernel's thread, the following runs on the shared loop's). A wake is never lost: one
that comes while the follower is busy ends its next sleep at once.
"""

from __future__ import annotations

import asyncio

from hitl_nb._sync import wait_event

__all__ = ["Pace"]


class Pace:
    """When to look next: sleep until a time, or until :meth:`wake` (from any thread).

    :meth:`start` binds it to the running loop; a wake before that makes the first
    sleep end at once.
    """

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._event: asyncio.Event | None = None
        self._early = False

    def start(self) -> None:
        """Bind to the running loop (call it on the loop, before the first sleep)."""
        self._loop = asyncio.get_running_loop()
        self._event = asyncio.Event()

    def wake(self) -> None:
        """End the current (or next) sleep soon; safe from any thread."""
        loop, event = self._loop, self._event
        if loop is None or event is None:
            self._early = True
            return
        try:
            loop.call_soon_threadsafe(event.set)
        except RuntimeError:  # the loop is closed
            pass

    async def sleep(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True when woken early by :meth:`wake`."""
        assert self._event is not None, "Pace.start() first"
        if self._early:
            self._early = False
            return True
        if not await wait_event(self._event, seconds):  # a stop while woken still stops
            return False
        self._event.clear()
        return True
