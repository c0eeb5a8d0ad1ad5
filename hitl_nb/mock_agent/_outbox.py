"""A task's outbox: every event it emitted, with monotonic ids, for replay (§Outbox / Replay).

Ids start at 1 and grow by one per event of that task; they go out as the SSE ``id:``
line, so a client reconnecting with ``Last-Event-ID: N`` gets exactly the events after N.
Live subscribers hold a :class:`Listener` fed on the agent's loop: a subscriber
registers it and reads the backlog in the same synchronous step, so it sees every event
once.
"""

from __future__ import annotations

import asyncio
import bisect
from collections import deque
from collections.abc import AsyncIterator, Iterable

from hitl_nb.a2a import Message, StreamEvent, Task, TaskStatusUpdateEvent

__all__ = ["CLOSED", "Listener", "Outbox", "ends_stream", "follow"]

Item = tuple[int, StreamEvent | None]

#: Given to every listener when the outbox is closed (the agent stops).
CLOSED: Item = (0, None)


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class Listener:
    """One subscriber's inbox: events pushed on the loop, awaited with a timeout.

    Lighter than ``asyncio.wait_for(queue.get(), t)``, which wraps every wait in a task:
    a pushed event wakes the waiting subscriber on the very next loop turn, before work
    the agent schedules after emitting it (AC-4: subscribers learn of a resume first).
    """

    def __init__(self) -> None:
        self._items: deque[Item] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def push(self, item: Item) -> None:
        """Add ``item`` and wake the subscriber if it waits."""
        self._items.append(item)
        if self._waiter is not None:
            _wake(self._waiter)

    async def get(self, timeout: float) -> Item | None:
        """The next item, or None when nothing came within ``timeout`` seconds."""
        if not self._items:
            loop = asyncio.get_running_loop()
            self._waiter = loop.create_future()
            timer = loop.call_later(timeout, _wake, self._waiter)
            try:
                await self._waiter
            finally:
                timer.cancel()
                self._waiter = None
        return self._items.popleft() if self._items else None


class Outbox:
    """The ordered event log of one task, plus the listeners of its live subscribers."""

    def __init__(self, events: Iterable[tuple[int, StreamEvent]] = ()) -> None:
        self._ids: list[int] = []
        self._events: list[StreamEvent] = []
        for seq, event in events:
            if self._ids and seq <= self._ids[-1]:
                raise ValueError(f"outbox ids must increase: {seq} after {self._ids[-1]}")
            self._ids.append(seq)
            self._events.append(event)
        self._listeners: set[Listener] = set()

    @property
    def last_id(self) -> int:
        """The id of the newest event (0 when there is none)."""
        return self._ids[-1] if self._ids else 0

    def __len__(self) -> int:
        return len(self._ids)

    def append(self, event: StreamEvent) -> int:
        """Add ``event`` with the next id, hand it to every listener, return the id."""
        seq = self.last_id + 1
        self._ids.append(seq)
        self._events.append(event)
        for listener in self._listeners:
            listener.push((seq, event))
        return seq

    def after(self, seq: int) -> list[tuple[int, StreamEvent]]:
        """Every event whose id is greater than ``seq``, oldest first."""
        start = bisect.bisect_right(self._ids, seq)
        return list(zip(self._ids[start:], self._events[start:], strict=True))

    def listen(self, listener: Listener | None = None) -> Listener:
        """A listener (``listener``, or a new one) that receives ``(id, event)`` for every
        event appended from now on."""
        listener = listener or Listener()
        self._listeners.add(listener)
        return listener

    def unlisten(self, listener: Listener) -> None:
        """Stop feeding ``listener``."""
        self._listeners.discard(listener)

    @property
    def listeners(self) -> int:
        """How many subscribers are listening."""
        return len(self._listeners)

    def close(self) -> None:
        """Tell every listener the stream is over (:data:`CLOSED`)."""
        for listener in self._listeners:
            listener.push(CLOSED)


def ends_stream(event: StreamEvent) -> bool:
    """True for the event after which a stream closes: a terminal or interrupted status."""
    if isinstance(event, (Task, TaskStatusUpdateEvent)):
        state = event.status.state
        return state.is_terminal or state.is_interrupted
    return isinstance(event, Message)


async def follow(
    outbox: Outbox,
    after: int,
    *,
    ping_interval: float = 15.0,
    listener: Listener | None = None,
) -> AsyncIterator[tuple[int, StreamEvent] | None]:
    """The events after id ``after``, then live ones, until one ends the stream.

    Yields ``(id, event)``, or ``None`` when nothing happened for ``ping_interval``
    seconds (time for a keep-alive). The backlog is read and the listener registered in
    one step on the loop, so no event is missed or repeated (§Outbox / Replay). Pass your
    own ``listener`` to end the stream early: push :data:`CLOSED` to it (the subscriber
    went away).
    """
    listener = outbox.listen(listener)
    try:
        last = after
        for seq, event in outbox.after(after):
            yield seq, event
            last = seq
            if ends_stream(event):
                return
        while True:
            got = await listener.get(ping_interval)
            if got is None:
                yield None
                continue
            seq, item = got
            if item is None:  # the agent is stopping
                return
            if seq <= last:
                continue
            yield seq, item
            last = seq
            if ends_stream(item):
                return
    finally:
        outbox.unlisten(listener)
