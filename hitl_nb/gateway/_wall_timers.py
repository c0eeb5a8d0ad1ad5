"""Timers at wall-clock times: a deadline is an absolute time (RFC 3339 in the
envelope), so it fires when ``time.time() >= at``, whatever the clock did meanwhile.

The event loop's timers run on a monotonic clock, which a change of the wall clock
does not move. So :class:`WallTimers` checks the wall clock again at each wake:

- the wall clock set **back** (by J seconds) after a timer was armed: at its wake the
  time has not come yet, and the timer is armed again for what is left; the action
  comes J seconds later in real time, at the wall-clock time it names;
- the wall clock set **forward** (by J seconds): the time has come early in real time;
  the next call of :meth:`WallTimers.arm` for it (the gateway's replica round arms what
  is due, every ``lease_seconds / 3``) finds the timer later than the wall clock says
  and fires it at once. It fires at most once anyway: every action is claimed in the
  store before it is done.

The wall clock is ``clock`` (``time.time`` unless given): the tests give a clock of
their own that they set forward and back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Hashable
from typing import Any

__all__ = ["WallTimers"]

#: A timer already due within this many seconds of what is asked is kept.
_SLACK = 0.05

Fire = Callable[[], Coroutine[Any, Any, Any]]


class WallTimers:
    """Timers by key, each firing ``fire()`` (run by ``spawn``) once the wall clock
    (``clock()``, epoch seconds) reaches its time (see the module docstring)."""

    def __init__(
        self,
        spawn: Callable[[Coroutine[Any, Any, Any]], None],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._spawn = spawn
        self._clock = clock
        self._handles: dict[Hashable, asyncio.TimerHandle] = {}

    def __contains__(self, key: Hashable) -> bool:
        return key in self._handles

    def arm(self, key: Hashable, at: float, fire: Fire) -> None:
        """Fire ``fire()`` at wall-clock time ``at`` (now, if it has passed). A timer of
        this key stays when it is due no later; one due later (the wall clock jumped
        forward since it was armed) is replaced."""
        loop = asyncio.get_running_loop()
        delay = max(0.0, at - self._clock())
        old = self._handles.get(key)
        if old is not None:
            if old.when() <= loop.time() + delay + _SLACK:
                return
            old.cancel()
        self._handles[key] = loop.call_later(delay, self._wake, key, at, fire)

    def _wake(self, key: Hashable, at: float, fire: Fire) -> None:
        self._handles.pop(key, None)
        if self._clock() < at:  # the wall clock went back: wait for its time again
            self.arm(key, at, fire)
            return
        self._spawn(fire())

    def cancel_all(self) -> None:
        """Stop every timer (the gateway closes)."""
        for handle in self._handles.values():
            handle.cancel()
        self._handles.clear()
