"""A gateway's feed, heard for the cards: a card learns at once what became of its prompt.

While a prompt is open nothing streams from the agent, and a card's follower looks at
the task only every ``poll_interval`` seconds (:mod:`._follower`). When the prompt is
answered elsewhere (JupyterLab's prompts panel, another person's kernel) through the
kernel's gateway, that gateway knows at once. So every task a card registers with the
gateway (:mod:`._announce`, or a conversation answering through it) is heard here: one
:class:`FeedWaker` per gateway link in the process, on the notebook's shared loop
(:mod:`._worker`), follows the gateway's feed of the tasks this kernel's user registered
(``GET api/feed?registered=mine``) and wakes the card's follower when its task's prompt
changes state (forwarding, forwarded, expired, closed) or leaves the list; the follower
then reads the task at once and the card shows the outcome.

The waker starts with the first task registered, holds the cards only weakly, reconnects
with a growing pause (1 s doubling, as the follower's), and stops once no card needs it.
A card that answers the agent without a gateway is never heard of here and keeps
looking on its timer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from hitl_nb.client import FeedUpdate, feed_of
from hitl_nb.errors import HitlError

from ._follower import RETRY
from ._gateway_link import GatewayLink
from ._worker import shared_loop

__all__ = ["FeedWaker", "Hearer", "listen"]

log = logging.getLogger("hitl_nb.notebook")

#: Seconds between looks at whether any card still needs the feed.
IDLE_CHECK = 5.0
#: The state of a prompt still waiting for an answer (the gateway's ``PromptState.OPEN``).
OPEN = "open"


class Hearer(Protocol):
    """What the waker wakes (a conversation)."""

    @property
    def listening(self) -> bool:
        """Does it still look at its task (its follower runs)?"""

    def heard(self) -> None:
        """Its task's prompt changed at the gateway: look at the task now (any thread)."""


#: Reads the feed of a gateway link: its updates until it fails or ends.
Feed = Callable[[], AsyncIterator[FeedUpdate]]


class FeedWaker:
    """One gateway link's feed of the tasks registered from this kernel, waking the
    cards that show them (see the module docstring). ``feed`` makes the feed's updates
    (default: the link's client's ``feed(registered=True)``)."""

    def __init__(self, link: GatewayLink, feed: Feed | None = None) -> None:
        self.link = link
        self._feed = feed if feed is not None else self._link_feed
        self._lock = threading.Lock()
        self._hearers: dict[str, weakref.WeakSet[Any]] = {}
        #: Each known prompt's state and task, by key (``{registration}/{prompt_id}``).
        self._states: dict[str, tuple[str, str]] = {}
        self._snapshots = 0
        self.future: concurrent.futures.Future[None] | None = None
        #: No card needed it any more: it stopped, and a new waker takes the next card.
        self.retired = False

    async def _link_feed(self) -> AsyncIterator[FeedUpdate]:
        client = await asyncio.to_thread(lambda: self.link.client)
        async for update in feed_of(client.info, registered=True):
            yield update

    # --- from any thread ------------------------------------------------------------------

    def add(self, registration: str, hearer: Hearer) -> None:
        """Wake ``hearer`` when the prompts of task ``registration`` change."""
        with self._lock:
            self._hearers.setdefault(registration, weakref.WeakSet()).add(hearer)

    @property
    def running(self) -> bool:
        """True while the waker follows the feed."""
        return self.future is not None and not self.future.done()

    def stop(self) -> None:
        """Stop following the feed (idempotent)."""
        if self.future is not None:
            self.future.cancel()

    # --- on the loop ----------------------------------------------------------------------

    def needed(self) -> bool:
        """Does any card still look at a task of this feed? (Forgets those that don't.)"""
        with self._lock:
            for reg in list(self._hearers):
                alive = [h for h in self._hearers[reg] if h.listening]
                if not alive:
                    del self._hearers[reg]
            return bool(self._hearers)

    def _wake(self, registrations: set[str]) -> None:
        with self._lock:
            hearers = [h for r in registrations for h in self._hearers.get(r, ())]
        for hearer in hearers:
            try:
                hearer.heard()
            except Exception:  # one card's problem must not stop the others'
                log.exception("hitl-nb: a card could not be woken")

    def apply(self, update: FeedUpdate) -> None:
        """One update of the feed: wake the cards whose task's prompt changed state or
        left. A snapshot after the first (a reconnection) wakes every card: what
        happened while the feed was away is not known."""
        if update.problem is not None:
            return
        woken: set[str] = set()
        if update.reset:
            self._snapshots += 1
            if self._snapshots > 1:
                with self._lock:
                    woken |= set(self._hearers)
            gone = dict(self._states)
            self._states = {}
        else:
            gone = {k: self._states.pop(k) for k in update.removed if k in self._states}
        for item in update.items:
            key, reg, state = item.get("key"), item.get("registration"), item.get("state")
            if not isinstance(key, str) or not isinstance(reg, str):
                continue
            state = state if isinstance(state, str) else OPEN
            before = gone.pop(key, None) if update.reset else self._states.get(key)
            if (before is None and state != OPEN) or (before is not None and before[0] != state):
                woken.add(reg)
            self._states[key] = (state, reg)
        woken |= {reg for _, reg in gone.values()}
        if woken:
            self._wake(woken)

    async def run(self) -> None:
        """Follow the feed until no card needs it (reconnecting with a growing pause)."""
        reader = asyncio.ensure_future(self._read())
        try:
            while not reader.done():
                await asyncio.wait({reader}, timeout=IDLE_CHECK)
                if self._retire():
                    return
        finally:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)

    def _retire(self) -> bool:
        """Stop being the link's waker when no card needs it (atomic with :func:`listen`)."""
        with _lock:
            if self.needed():
                return False
            self.retired = True
            if _wakers.get(id(self.link)) is self:
                del _wakers[id(self.link)]
            return True

    async def _read(self) -> None:
        delay = RETRY.first
        while True:
            try:
                async for update in self._feed():
                    self.apply(update)
                    if update.problem is None:
                        delay = RETRY.first
            except HitlError as exc:
                log.info("hitl-nb: the gateway's feed is away (%s); again in %g s", exc, delay)
            except Exception:  # the cards still look on their timer: never die silently
                log.exception("hitl-nb: reading the gateway's feed failed")
            await asyncio.sleep(delay)
            delay = RETRY.after(delay)
            self._states = {}  # the next snapshot is compared with nothing
            self._snapshots = max(self._snapshots, 1)  # ...and wakes every card


_lock = threading.Lock()
#: The process's wakers, one per gateway link (by the link's id; a running waker holds
#: its link).
_wakers: dict[int, FeedWaker] = {}


def listen(link: GatewayLink, registration: str, hearer: Hearer) -> FeedWaker:
    """Wake ``hearer`` when the gateway's feed says the prompts of ``registration``
    changed; starts the link's waker on the shared loop when it is not running."""
    with _lock:
        waker = _wakers.get(id(link))
        if waker is None or waker.retired or waker.link is not link:
            waker = _wakers[id(link)] = FeedWaker(link)
        waker.add(registration, hearer)
        if not waker.running:
            waker.future = shared_loop().submit(waker.run())
    return waker
