"""The gateway watches its registered tasks: a subscription where the agent streams,
polling where it does not, so its store (and the inbox) knows every open prompt without
anybody asking.

One watcher per registered task, on the host's event loop:

- while the task works (no prompt open) and its agent's card says
  ``capabilities.streaming``, a SubscribeToTask through :meth:`HitlClient.subscribe`
  (which reconnects and replays after ``Last-Event-ID`` itself) waits for the next
  prompt: A2A ends a stream at an interrupted state, so the stream ends when the agent
  asks; then the gateway reads the task (GetTask) and stores the agent's own snapshot;
- while a prompt is open nothing streams: the task is read again every
  ``poll_interval`` seconds (someone may answer at the agent directly), and at once
  when the gateway itself forwards an answer (:meth:`Watchers.poke`, a
  :class:`~hitl_nb._pace.Pace` per task);
- at most ``max_streams`` subscriptions are open at once (each holds a connection);
  other tasks and agents that do not stream are polled;
- a task in a terminal state is no longer watched (``ended`` is told, so no replica
  of the gateway watches it again);
- when the agent's card advertises push notifications, the watcher first asks the agent
  to push the task's updates to this gateway (``arrange_push``, see
  :mod:`hitl_nb.gateway._push`); once it agreed nothing streams for that task (no
  connection held) and the task is read every ``poll_interval`` only as a fallback.

A notebook's card follows its task by the same rule (A2A's: a stream while the task
works, reads while a prompt is open, a read soon after an answer), through the same
client and the same :class:`~hitl_nb._pace.Pace`, but for another reader
(:mod:`hitl_nb.notebook._follower`), so the two loops differ where their readers do.
The gateway wants the prompts of many tasks, not their progress: a stream's events are
dropped and the task's snapshot read once the stream ends (that snapshot is what the
store keeps); subscriptions are capped and push preferred (connections are shared by
every task of the server); reads of a task not streamed are ``poll_interval`` apart,
flat, with no back-off (a task whose agent is down is read again at the same pace, as
the agent may come back any time); and deadlines are the gateway's own timers
(:mod:`hitl_nb.gateway._replicas`), not the watcher's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from hitl_nb._pace import Pace
from hitl_nb._stopping import stop_tasks
from hitl_nb.a2a import Task
from hitl_nb.client import HitlClient
from hitl_nb.errors import HitlError
from hitl_nb.gateway._store import Registration

__all__ = ["Watchers"]

log = logging.getLogger("hitl_nb.gateway")

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
        arrange_push: Callable[[Registration], Awaitable[bool]] | None = None,
        ended: Callable[[Registration], Awaitable[None]] | None = None,
    ) -> None:
        self._refresh = refresh
        self._ended = ended
        self._arrange_push = arrange_push
        #: Registrations whose agent pushes their updates.
        self.pushed: set[str] = set()
        self._client_for = client_for
        self.poll_interval = poll_interval
        self.max_streams = max_streams
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._paces: dict[str, Pace] = {}
        self.streaming: set[str] = set()

    def watch(self, reg: Registration) -> None:
        """Start watching ``reg`` (no-op when it is watched already)."""
        current = self._tasks.get(reg.id)
        if current is not None and not current.done():
            return
        self._paces[reg.id] = Pace()
        task = asyncio.ensure_future(self._run(reg))
        self._tasks[reg.id] = task

    def unwatch(self, reg_id: str) -> None:
        """Stop watching this task (another replica of the gateway watches it now)."""
        task = self._tasks.pop(reg_id, None)
        if task is not None:
            task.cancel()

    def poke(self, reg_id: str) -> None:
        """Read this task again now (the gateway just forwarded an answer to it)."""
        pace = self._paces.get(reg_id)
        if pace is not None and self.watching(reg_id):
            # Kept until the watcher next pauses, so a poke while it is busy (reading
            # the task, setting up push) is not lost.
            pace.wake()

    def watching(self, reg_id: str) -> bool:
        """Is the task of this registration being watched?"""
        task = self._tasks.get(reg_id)
        return task is not None and not task.done()

    async def close(self) -> None:
        """Stop every watcher (see :func:`~hitl_nb._stopping.stop_tasks`: one whose
        cancellation was lost is cancelled again; the wait is bounded)."""
        tasks = list(self._tasks.values())
        self._tasks.clear()
        await stop_tasks(tasks, what="a gateway's task watcher")

    async def _run(self, reg: Registration) -> None:
        pace = self._paces[reg.id]
        pace.start()
        me = asyncio.current_task()
        try:
            arrange = self._arrange_push
            # Watched while this is the registration's watcher: after unwatch() or
            # close() it no longer is, and it stops at the next turn even when its
            # cancellation was lost on the way (hitl_nb._stopping says how).
            while self._tasks.get(reg.id) is me:
                task = await self._refresh(reg)
                if task is not None and task.status.state.is_terminal:
                    if self._ended is not None:
                        await self._ended(reg)
                    return
                if arrange is not None and task is not None:
                    # Once per watch (a restarted host asks again, with its new URL).
                    asking, arrange = arrange, None
                    if await asking(reg):
                        self.pushed.add(reg.id)
                        continue  # read the task again: nothing said before push is lost
                if reg.id in self.pushed:
                    await pace.sleep(self.poll_interval)  # the fallback read
                    continue
                working = task is not None and not task.status.state.is_interrupted
                if working and await self._can_stream(reg):
                    loop = asyncio.get_running_loop()
                    began = loop.time()
                    await self._stream(reg, pace)
                    if loop.time() - began < 1.0:  # never a tight subscribe loop
                        await pace.sleep(min(1.0, self.poll_interval))
                    continue  # the agent asks (or ended): read the task again
                await pace.sleep(self.poll_interval)
        except asyncio.CancelledError:
            raise
        except Exception:  # a watcher must never take the host down
            log.exception("hitl-nb gateway: watching task %s stopped", reg.task_id)
        finally:
            if self._paces.get(reg.id) is pace:
                del self._paces[reg.id]
            self.pushed.discard(reg.id)

    async def _can_stream(self, reg: Registration) -> bool:
        if len(self.streaming) >= self.max_streams:
            return False
        try:
            card = await self._client_for(reg.agent_url).connect()
        except HitlError:
            return False
        return bool(card.capabilities.streaming)

    async def _stream(self, reg: Registration, pace: Pace) -> None:
        self.streaming.add(reg.id)
        client = self._client_for(reg.agent_url)
        try:
            async for _event in client.subscribe(reg.task_id):
                pass  # the stream ends when the task is interrupted (a prompt) or ends
        except HitlError as exc:
            log.info("hitl-nb gateway: subscription to %s ended (%s); polling", reg.task_id, exc)
            await pace.sleep(self.poll_interval)
        finally:
            self.streaming.discard(reg.id)
