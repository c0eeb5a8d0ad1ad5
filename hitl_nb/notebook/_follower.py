"""Following one task in the background, on the client's loop.

Streams when the agent streams (the client resumes dropped streams with
``Last-Event-ID`` or the task snapshot, and says so through ``on_reconnect``), polls
GetTask when it does not. While a prompt is open nothing streams (A2A ends a stream at
INPUT_REQUIRED): the follower looks at the task every ``poll_interval`` seconds, when
the deadline passes, and soon after an answer is accepted, to notice a task that failed,
was canceled, or was answered elsewhere.

The follower holds its conversation only weakly: a conversation nobody refers to any
more is collected, and its follower ends at its next step.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from contextlib import aclosing
from typing import Any, Protocol

from hitl_nb.a2a import Message, Task
from hitl_nb.client import ClientEvent, MessageEvent, TaskEvent
from hitl_nb.errors import AgentTimeout, AgentUnreachable, HitlError

from ._link import Link

__all__ = ["Follower", "Sink"]

log = logging.getLogger("hitl_nb.notebook")

#: The longest pause between tries to reach an agent that cannot be reached.
MAX_RETRY_DELAY = 60.0


class Sink(Protocol):
    """What a follower reports to (a conversation)."""

    def receive(self, event: ClientEvent) -> None:
        """Apply one event."""

    def link_state(self, state: str, detail: str = "") -> None:
        """``live``, ``reconnecting``, ``polling``, ``stopped`` or ``lost``, with words."""

    def started(self, error: BaseException | None) -> None:
        """The first exchange is over: the task is known, or ``error`` says why not."""

    def followed_task(self) -> Task | None:
        """The task as last seen."""

    def open_deadline(self) -> float | None:
        """Seconds until the open prompt's deadline (negative once passed), or None."""

    def deadline_passed(self) -> None:
        """The open prompt's deadline has just passed."""


class _Gone(Exception):
    """The conversation was collected."""


class Follower:
    """Follow a task for ``sink``: start it with ``content``, or attach to ``task_id``."""

    def __init__(
        self,
        link: Link,
        sink: Sink,
        *,
        content: Any = None,
        context_id: str | None = None,
        poll_interval: float = 5.0,
    ) -> None:
        if not poll_interval > 0:
            raise ValueError(
                f"poll_interval must be a positive number of seconds, not {poll_interval!r}"
            )
        self.link = link
        self.poll_interval = float(poll_interval)
        self.last_event_id: str | None = None
        self._sink = weakref.ref(sink)
        self._content = content
        self._context_id = context_id
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._woken_early = False
        self._reconnecting = False
        self._stopped = False
        self.future = link.submit(self._run())

    # --- from other threads ---------------------------------------------------------------

    def wake(self) -> None:
        """Look at the task soon (an answer was accepted)."""
        loop, event = self._loop, self._wake
        if loop is None or event is None:
            self._woken_early = True
            return
        try:
            loop.call_soon_threadsafe(event.set)
        except RuntimeError:  # the loop is closed
            pass

    def stop(self) -> None:
        """Stop following (idempotent; safe from any thread)."""
        self._stopped = True
        self.future.cancel()

    @property
    def running(self) -> bool:
        """True until the follower has ended."""
        return not self.future.done()

    # --- on the loop ----------------------------------------------------------------------

    def _get(self) -> Sink:
        sink = self._sink()
        if sink is None:
            raise _Gone
        return sink

    def _tell(self, state: str, detail: str = "") -> None:
        self._get().link_state(state, detail)

    def _deliver(self, event: ClientEvent) -> None:
        event_id = getattr(event, "event_id", None)
        if event_id is not None:
            self.last_event_id = event_id
        sink = self._get()
        if self._reconnecting:
            self._reconnecting = False
            sink.link_state("live")
        try:
            sink.receive(event)
        except Exception:  # a drawing problem must not end the following
            log.exception("the conversation could not show an event")

    def _on_reconnect(self, attempt: int, delay: float, reason: Exception) -> None:
        self._reconnecting = True
        self._tell("reconnecting", f"the stream dropped ({reason}); reconnecting, try {attempt}")

    async def _sleep(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True when woken early by :meth:`wake`."""
        assert self._wake is not None
        if self._woken_early:
            self._woken_early = False
            return True
        try:
            await asyncio.wait_for(self._wake.wait(), max(seconds, 0.0))
        except asyncio.TimeoutError:
            return False
        self._wake.clear()
        return True

    async def _run(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        try:
            await self._follow()
        except _Gone:
            return
        except asyncio.CancelledError:
            sink = self._sink()
            if sink is not None:
                sink.started(None)
                if not self._stopped:  # not us: the client's loop is shutting down
                    sink.link_state("stopped", "the client was closed")
            raise
        except Exception as exc:  # never die silently: the card says what happened
            if self._stopped:
                return
            sink = self._sink()
            if isinstance(exc, RuntimeError) and "closed" in str(exc):
                # The user closed the client under the conversation: say so, no traceback.
                if sink is not None:
                    sink.started(exc)
                    sink.link_state("stopped", "the client was closed")
                return
            log.exception("following the task failed")
            if sink is not None:
                sink.started(exc)
                sink.link_state("lost", f"{type(exc).__name__}: {exc}")

    async def _follow(self) -> None:
        client = self.link.client
        if self._content is not None:
            try:
                await self._start()
            except HitlError as exc:
                self._get().started(exc)
                self._tell("lost", f"the task could not be started: {exc}")
                return
            self._get().started(None)
        retry = 1.0
        while True:
            task = self._get().followed_task()
            if task is None:
                self._tell("stopped", "the agent answered with a message, not a task")
                return
            state = task.status.state
            try:
                if state.is_terminal:
                    self._tell("stopped")
                    return
                if state.is_interrupted:
                    await self._watch_open(task)
                elif await self._streams():
                    self._tell("live")
                    events = client.subscribe(
                        task.id, last_event_id=self.last_event_id, on_reconnect=self._on_reconnect
                    )
                    await self._consume(events)
                else:
                    await self._poll_working(task)
                retry = 1.0
            except (AgentUnreachable, AgentTimeout) as exc:
                self._tell(
                    "reconnecting",
                    f"the agent cannot be reached ({exc}); trying again in {retry:g} s",
                )
                self._reconnecting = True
                await asyncio.sleep(retry)
                retry = min(retry * 2, MAX_RETRY_DELAY)
            except HitlError as exc:
                self._tell("lost", f"stopped following the task: {exc}")
                return

    async def _streams(self) -> bool:
        card = await self.link.client.connect()
        return bool(card.capabilities.streaming)

    async def _start(self) -> None:
        client = self.link.client
        if await self._streams():
            self._tell("live")
            events = client.stream(
                self._content, context_id=self._context_id, on_reconnect=self._on_reconnect
            )
            async with aclosing(events) as stream:
                async for event in stream:
                    self._deliver(event)
                    if self._get().followed_task() is not None:
                        break  # the task is known: the cell may go on
                else:
                    return
                self._get().started(None)
                async for event in stream:
                    self._deliver(event)
            return
        self._tell("polling")
        result = await client.send(
            self._content, context_id=self._context_id, return_immediately=True
        )
        self._deliver(TaskEvent(result) if isinstance(result, Task) else _message(result))

    async def _consume(self, events: Any) -> None:
        async with aclosing(events) as stream:
            async for event in stream:
                self._deliver(event)

    async def _watch_open(self, task: Task) -> None:
        """A prompt is open: look again until the task is somewhere else."""
        key = _key(task)
        delay = self.poll_interval
        while True:
            left = self._get().open_deadline()
            wait = delay
            if left is not None and left > -1.0:
                wait = min(wait, max(left, 0.0) + 0.25)
            woken = await self._sleep(wait)
            delay = 0.2 if woken else min(max(delay * 2, 0.2), self.poll_interval)
            after = self._get().open_deadline()
            if after is not None and after <= 0:
                self._get().deadline_passed()
            fresh = await self.link.client.get_task(task.id)
            self._deliver(TaskEvent(fresh))
            if _key(fresh) != key:
                return

    async def _poll_working(self, task: Task) -> None:
        """No streaming: GetTask with a growing pause until the task changes state."""
        self._tell("polling")
        key = _key(task)
        delay = 0.25
        while True:
            await self._sleep(delay)
            delay = min(delay * 2, self.poll_interval)
            fresh = await self.link.client.get_task(task.id)
            self._deliver(TaskEvent(fresh))
            if (
                _key(fresh) != key
                or fresh.status.state.is_terminal
                or fresh.status.state.is_interrupted
            ):
                return


def _key(task: Task) -> tuple[object, ...]:
    message = task.status.message
    return (task.status.state, message.message_id if message is not None else None)


def _message(result: Any) -> ClientEvent:
    assert isinstance(result, Message)
    return MessageEvent(result)
