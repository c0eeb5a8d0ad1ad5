"""A task's outbox: every event it emitted, with monotonic ids, for replay (§Outbox / Replay).

Ids start at 1 and grow by one per event of that task; they go out as the SSE ``id:``
line, so a client reconnecting with ``Last-Event-ID: N`` gets exactly the events after N.
Listeners are asyncio queues fed on the agent's loop: a subscriber registers its queue
and reads the backlog in the same synchronous step, so it sees every event once.
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import AsyncIterator, Iterable

from hitl_nb.a2a.model import Message, StreamEvent, Task, TaskStatusUpdateEvent

__all__ = ["CLOSED", "Outbox", "ends_stream", "follow"]

#: Put on every listener's queue when the outbox is closed (the agent stops).
CLOSED: tuple[int, None] = (0, None)


class Outbox:
    """The ordered event log of one task, plus the queues of its live subscribers."""

    def __init__(self, events: Iterable[tuple[int, StreamEvent]] = ()) -> None:
        self._ids: list[int] = []
        self._events: list[StreamEvent] = []
        for seq, event in events:
            if self._ids and seq <= self._ids[-1]:
                raise ValueError(f"outbox ids must increase: {seq} after {self._ids[-1]}")
            self._ids.append(seq)
            self._events.append(event)
        self._listeners: set[asyncio.Queue[tuple[int, StreamEvent | None]]] = set()

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
        for queue in self._listeners:
            queue.put_nowait((seq, event))
        return seq

    def after(self, seq: int) -> list[tuple[int, StreamEvent]]:
        """Every event whose id is greater than ``seq``, oldest first."""
        start = bisect.bisect_right(self._ids, seq)
        return list(zip(self._ids[start:], self._events[start:], strict=True))

    def listen(self) -> asyncio.Queue[tuple[int, StreamEvent | None]]:
        """A queue that receives ``(id, event)`` for every event appended from now on."""
        queue: asyncio.Queue[tuple[int, StreamEvent | None]] = asyncio.Queue()
        self._listeners.add(queue)
        return queue

    def unlisten(self, queue: asyncio.Queue[tuple[int, StreamEvent | None]]) -> None:
        """Stop feeding ``queue``."""
        self._listeners.discard(queue)

    @property
    def listeners(self) -> int:
        """How many subscribers are listening."""
        return len(self._listeners)

    def close(self) -> None:
        """Tell every listener the stream is over (:data:`CLOSED`)."""
        for queue in self._listeners:
            queue.put_nowait(CLOSED)


def ends_stream(event: StreamEvent) -> bool:
    """True for the event after which a stream closes: a terminal or interrupted status."""
    if isinstance(event, (Task, TaskStatusUpdateEvent)):
        state = event.status.state
        return state.is_terminal or state.is_interrupted
    return isinstance(event, Message)


async def follow(
    outbox: Outbox, after: int, *, ping_interval: float = 15.0
) -> AsyncIterator[tuple[int, StreamEvent] | None]:
    """The events after id ``after``, then live ones, until one ends the stream.

    Yields ``(id, event)``, or ``None`` when nothing happened for ``ping_interval``
    seconds (time for a keep-alive). The backlog is read and the listener registered in
    one step on the loop, so no event is missed or repeated (§Outbox / Replay).
    """
    queue = outbox.listen()
    try:
        last = after
        for seq, event in outbox.after(after):
            yield seq, event
            last = seq
            if ends_stream(event):
                return
        while True:
            try:
                seq, item = await asyncio.wait_for(queue.get(), ping_interval)
            except asyncio.TimeoutError:
                yield None
                continue
            if item is None:  # the agent is stopping
                return
            if seq <= last:
                continue
            yield seq, item
            last = seq
            if ends_stream(item):
                return
    finally:
        outbox.unlisten(queue)
