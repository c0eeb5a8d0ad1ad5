"""The gateway watches its registered tasks: a subscription where the agent streams,
polling where it does not, so its store (and the inbox) knows every open prompt without
anybody asking.

One watcher per registered task, on the server's loop:

- an agent whose card says ``capabilities.streaming`` gets a SubscribeToTask through
  :meth:`HitlClient.subscribe` (which reconnects and replays after ``Last-Event-ID``
  itself); every event makes the gateway read the task again (GetTask), so what is
  stored is always the agent's own snapshot, never a guess from a partial event;
- at most :attr:`HitlServer.max_streams` subscriptions are open at once (each holds a
  connection); the other tasks, agents that do not stream, and subscriptions that
  failed are polled every :attr:`HitlServer.poll_interval` seconds;
- a task in a terminal state is no longer watched.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from hitl_nb.a2a import Task
from hitl_nb.client import HitlClient
from hitl_nb.errors import HitlError
from hitl_nb.server._store import Registration

__all__ = ["Watchers"]

log = logging.getLogger("hitl_nb.server")

#: How the gateway reads a task again and records what it shows; returns the task
#: (None when the agent could not be asked).
Refresh = Callable[[Registration], Awaitable[Task | None]]


class Watchers:
    """The watchers of all registered tasks (start one per registration)."""

    def __init__(
        self,
        refresh: Refresh,
        client_for: Callable[[str], HitlClient],
        *,
        poll_interval: float,
        max_streams: int,
    ) -> None:
        self._refresh = refresh
        self._client_for = client_for
        self.poll_interval = poll_interval
        self.max_streams = max_streams
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self.streaming: set[str] = set()

    def watch(self, reg: Registration) -> None:
        """Start watching ``reg`` (no-op when it is watched already)."""
        current = self._tasks.get(reg.id)
        if current is not None and not current.done():
            return
        task = asyncio.ensure_future(self._run(reg))
        self._tasks[reg.id] = task

    def watching(self, reg_id: str) -> bool:
        """Is the task of this registration being watched?"""
        task = self._tasks.get(reg_id)
        return task is not None and not task.done()

    async def close(self) -> None:
        """Stop every watcher."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()

    async def _run(self, reg: Registration) -> None:
        try:
            while True:
                task = await self._refresh(reg)
                if task is not None and task.status.state.is_terminal:
                    return
                if task is not None and await self._can_stream(reg):
                    await self._stream(reg)
                    continue  # the stream ended: read the task, maybe subscribe again
                await asyncio.sleep(self.poll_interval)
        except asyncio.CancelledError:
            raise
        except Exception:  # a watcher must never take the server down
            log.exception("hitl-nb gateway: watching task %s stopped", reg.task_id)

    async def _can_stream(self, reg: Registration) -> bool:
        if len(self.streaming) >= self.max_streams:
            return False
        try:
            card = await self._client_for(reg.agent_url).connect()
        except HitlError:
            return False
        return bool(card.capabilities.streaming)

    async def _stream(self, reg: Registration) -> None:
        self.streaming.add(reg.id)
        client = self._client_for(reg.agent_url)
        try:
            async for _event in client.subscribe(reg.task_id):
                task = await self._refresh(reg)
                if task is not None and task.status.state.is_terminal:
                    return
        except HitlError as exc:
            log.info("hitl-nb gateway: subscription to %s ended (%s); polling",
                     reg.task_id, exc)  # fmt: skip
            await asyncio.sleep(self.poll_interval)
        finally:
            self.streaming.discard(reg.id)
