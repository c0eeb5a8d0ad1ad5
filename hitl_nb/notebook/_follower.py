"""Following in the background, on the notebook's shared loop: a task, or an inbox's list.

:class:`Follower` follows one task for a conversation.

Streams when the agent streams (the client resumes dropped streams with
``Last-Event-ID`` or the task snapshot, and says so through ``on_reconnect``), polls
GetTask when it does not. While a prompt is open nothing streams (A2A ends a stream at
INPUT_REQUIRED): the follower looks at the task every ``poll_interval`` seconds, when
the deadline passes, and soon after an answer is accepted, to notice a task that failed,
was canceled, or was answered elsewhere.

Each status goes to the conversation with the prompt the client found in it: the
client hands that prompt out as the next event, made from the same wire event, and the
follower gives the two together (the envelope is checked once, by the client).

The gateway's watcher (:mod:`hitl_nb.gateway._watcher`) follows registered tasks by the
same rule, through the same client and the same :class:`~hitl_nb._pace.Pace`, for
another reader. This one serves a person watching one task live, so: every event of a
stream is shown as it comes (the agent's messages, artifacts and statuses, not only its
prompts); a task it cannot stream is read soon and then less often (0.25 s doubling up to
``poll_interval``), and so is an open prompt after an answer (0.2 s doubling), so a card
moves on within a moment; the open prompt's deadline is watched here (the card closes at
it); an agent that cannot be reached is tried again with a growing pause (1 s doubling
up to :data:`MAX_RETRY_DELAY`); there is no cap on subscriptions (one per conversation)
and no push (a kernel cannot be reached by agents).

:class:`Looking` looks at an inbox's list every ``interval`` seconds and at once after
an answer, backing off while the list cannot be read; where the list is a gateway's, it
looks when the gateway's feed says the list changed, and otherwise only now and then. Both wait on a
:class:`~hitl_nb._pace.Pace` (sleep until the next look or a wake from any thread) and
hold what they report to only weakly: a conversation or inbox nobody refers to any more
is collected, and its following ends at its next step.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from typing import Any, Protocol

from hitl_nb._backoff import Backoff
from hitl_nb._pace import Pace
from hitl_nb._sync import LoopThread
from hitl_nb.a2a import Message, Task, TaskState
from hitl_nb.client import (
    ClientEvent,
    MalformedPromptEvent,
    MessageEvent,
    PromptEvent,
    StatusEvent,
    TaskEvent,
)
from hitl_nb.errors import AgentTimeout, AgentUnreachable, HitlError

from ._link import Link

__all__ = ["Follower", "Looking", "Prompt", "Sink"]

log = logging.getLogger("hitl_nb.notebook")

#: The longest pause between tries to reach an agent (or a list) that cannot be reached.
MAX_RETRY_DELAY = 60.0
#: After a wake, the inbox looks this much later: the agent moves on first.
SETTLE_DELAY = 0.2
#: While an inbox hears its gateway's feed, it still looks this often (seconds).
SAFETY_LOOK = 30.0

#: The prompt a status carries, as the client read it.
Prompt = PromptEvent | MalformedPromptEvent


#: The pauses between tries to reach an agent (or a list): 1 s, doubling, at most
#: :data:`MAX_RETRY_DELAY` (an inbox starts from its own interval).
RETRY = Backoff(1.0, MAX_RETRY_DELAY)


class Sink(Protocol):
    """What a follower reports to (a conversation)."""

    def receive(self, event: ClientEvent, prompt: Prompt | None = None) -> None:
        """Apply one event; ``prompt`` is the prompt a status carries, as the client read
        it (None for a status without one, and for a snapshot the follower read itself)."""

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
        self.pace = Pace()
        self._reconnecting = False
        self._stopped = False
        self.future = link.submit(self._run())

    # --- from other threads ---------------------------------------------------------------

    def wake(self) -> None:
        """Look at the task soon (an answer was accepted)."""
        self.pace.wake()

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

    def _deliver(self, event: ClientEvent, prompt: Prompt | None = None) -> None:
        event_id = getattr(event, "event_id", None)
        if event_id is not None:
            self.last_event_id = event_id
        sink = self._get()
        if self._reconnecting:
            self._reconnecting = False
            sink.link_state("live")
        try:
            sink.receive(event, prompt)
        except Exception:  # a drawing problem must not end the following
            log.exception("the conversation could not show an event")

    def _on_reconnect(self, attempt: int, delay: float, reason: Exception) -> None:
        self._reconnecting = True
        self._tell("reconnecting", f"the stream dropped ({reason}); reconnecting, try {attempt}")

    async def _run(self) -> None:
        self.pace.start()
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
        retry = RETRY.first
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
                retry = RETRY.first
            except (AgentUnreachable, AgentTimeout) as exc:
                self._tell(
                    "reconnecting",
                    f"the agent cannot be reached ({exc}); trying again in {retry:g} s",
                )
                self._reconnecting = True
                await asyncio.sleep(retry)
                retry = RETRY.after(retry)
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
            async with aclosing(_paired(events)) as stream:
                async for event, prompt in stream:
                    self._deliver(event, prompt)
                    if self._get().followed_task() is not None:
                        break  # the task is known: the cell may go on
                else:
                    return
                self._get().started(None)
                async for event, prompt in stream:
                    self._deliver(event, prompt)
            return
        self._tell("polling")
        result = await client.send(
            self._content, context_id=self._context_id, return_immediately=True
        )
        self._deliver(TaskEvent(result) if isinstance(result, Task) else _message(result))

    async def _consume(self, events: AsyncGenerator[ClientEvent, None]) -> None:
        async with aclosing(_paired(events)) as stream:
            async for event, prompt in stream:
                self._deliver(event, prompt)

    async def _watch_open(self, task: Task) -> None:
        """A prompt is open: look again until the task is somewhere else."""
        key = _key(task)
        delay = self.poll_interval
        while True:
            left = self._get().open_deadline()
            wait = delay
            if left is not None and left > -1.0:
                wait = min(wait, max(left, 0.0) + 0.25)
            woken = await self.pace.sleep(wait)
            delay = 0.2 if woken else Backoff(0.2, self.poll_interval).after(delay)
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
        pauses = Backoff(0.25, self.poll_interval)
        delay = pauses.first
        while True:
            await self.pace.sleep(delay)
            delay = pauses.after(delay)
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


async def _paired(
    events: AsyncGenerator[ClientEvent, None],
) -> AsyncGenerator[tuple[ClientEvent, Prompt | None], None]:
    """Each event of a client stream, a status together with the prompt it carries.

    The client hands a status's prompt out as the very next event, made from the same
    wire event (same task, same event id); only an INPUT_REQUIRED status carries one,
    and the stream ends after it (A2A §11.7), so waiting for the next event never holds
    a status back.
    """
    held: TaskEvent | StatusEvent | None = None
    async with aclosing(events) as stream:
        async for event in stream:
            if held is not None:
                if (
                    isinstance(event, PromptEvent | MalformedPromptEvent)
                    and event.task_id == held.task_id
                    and event.event_id == held.event_id
                ):
                    yield held, event
                    held = None
                    continue
                yield held, None
                held = None
            if (
                isinstance(event, TaskEvent | StatusEvent)
                and event.state is TaskState.INPUT_REQUIRED
            ):
                held = event
                continue
            yield event, None
    if held is not None:
        yield held, None


class Lister(Protocol):
    """What a :class:`Looking` reports to (an inbox)."""

    def _apply(self, listing: Any) -> None:
        """Show one look's listing."""

    def _unreadable(self, problem: str) -> None:
        """The list could not be read this time: say why (the last listing stays)."""


class ListSource(Protocol):
    """Where a :class:`Looking` reads the list (an inbox's source)."""

    async def list(self) -> Any:
        """One look at the list."""

    async def aclose(self) -> None:
        """Close the connections."""


class Looking:
    """An inbox's list, looked at again on the notebook's shared loop.

    Every ``interval`` seconds, and :data:`SETTLE_DELAY` after a :meth:`wake` (an
    answer was given), ``source`` is read and the listing handed to ``lister`` (held
    weakly). While the list cannot be read the problem is said and the pause doubles,
    up to :data:`MAX_RETRY_DELAY`. A lister that is collected ends the looking and
    closes the source's connections.

    ``feed`` (a gateway's, :meth:`~hitl_nb.client.GatewayClient.feed`): each change it
    tells wakes the looking, and while it is heard the timer is only a safety look
    every :data:`SAFETY_LOOK` seconds (the gateway's feed reads its own list again as
    often); a feed that cannot be heard is tried again (1 s doubling) and the looking
    keeps ``interval`` meanwhile.
    """

    def __init__(
        self,
        runner: LoopThread,
        lister: Lister,
        source: ListSource,
        interval: float,
        feed: Callable[[], AsyncIterator[Any]] | None = None,
    ) -> None:
        self.interval = interval
        self.pace = Pace()
        self._lister = weakref.ref(lister)
        self._source = source
        self._feed = feed
        #: True while the feed is heard (a snapshot came, no problem since).
        self.feed_heard = False
        self.future: concurrent.futures.Future[None] = runner.submit(self._run())

    def _steady(self) -> float:
        """The pause between looks while the list can be read."""
        return max(self.interval, SAFETY_LOOK) if self.feed_heard else self.interval

    async def _hear(self) -> None:
        """Follow the feed: each change after its first snapshot wakes the looking."""
        assert self._feed is not None
        delay = 1.0
        first = True  # the first snapshot is what the inbox read already
        while True:
            try:
                async for update in self._feed():
                    if getattr(update, "problem", None) is not None:
                        self.feed_heard = False
                        continue
                    if not first:
                        self.pace.wake()
                    first = False
                    self.feed_heard, delay = True, 1.0
            except HitlError as exc:
                log.info("hitl-nb: the inbox's feed is away (%s); again in %g s", exc, delay)
            except Exception:  # the timer still looks: never die silently
                log.exception("hitl-nb: following the inbox's feed failed")
            self.feed_heard = False
            await asyncio.sleep(delay)
            delay = RETRY.after(delay)

    def wake(self) -> None:
        """Look again soon (an answer was given); safe from any thread."""
        self.pace.wake()

    def stop(self) -> None:
        """Stop looking (idempotent; safe from any thread)."""
        self.future.cancel()

    async def _run(self) -> None:
        self.pace.start()
        hearing = asyncio.ensure_future(self._hear()) if self._feed is not None else None
        try:
            await self._look()
        finally:
            if hearing is not None:
                hearing.cancel()
                await asyncio.gather(hearing, return_exceptions=True)

    async def _look(self) -> None:
        delay = self.interval
        while True:
            if await self.pace.sleep(delay):
                await asyncio.sleep(SETTLE_DELAY)  # let the agent move on before looking
            if self._lister() is None:
                await self._source.aclose()  # forgotten: its connections go with it
                return
            problem = ""
            try:
                listing = await self._source.list()
            except HitlError as exc:
                listing, problem = None, str(exc)
                delay = RETRY.after(delay)
            else:
                delay = self._steady()
            lister = self._lister()
            if lister is None:
                await self._source.aclose()
                return
            try:
                if listing is not None:
                    lister._apply(listing)
                else:
                    lister._unreadable(problem)
            except Exception:  # a drawing problem must not end the looking
                log.exception("the inbox could not show the prompts")
            del lister
