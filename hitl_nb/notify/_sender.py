"""The sender: claims due notes from the outbox, sends them, and marks what happened.

It runs in the background of the host's event loop (:meth:`Sender.start`), one round
after another: every ``poll`` seconds, soon after :meth:`Sender.wake` is called (the
gateway calls it after writing notes, so a message leaves within moments; wakes within
``gap`` seconds of a round make one round, so a burst of prompts is not a burst of
claims), and again straight away while claims come back full. A round:

1. now and then, gives up the notes that waited past the bound
   (:meth:`~hitl_nb.notify.Outbox.give_up_stale`, each with an audit entry);
2. claims up to as many recipients as the ceiling has room for
   (:class:`~hitl_nb.notify.Limits`), each with all their due notes;
3. for each, at most ``concurrency`` at a time: finds where it goes
   (:class:`~hitl_nb.notify.Router`), makes one message (one note, or a digest:
   :func:`~hitl_nb.notify._messages.compose`), sends it by its channel, and marks the batch:
   sent (the recipient's next message not before ``every`` seconds), to retry (with
   backoff), or given up (nowhere to send; or the receiver refused it for good).

Nothing here waits on the gateway or makes it wait: SMTP runs on threads, webhooks are
bounded by their timeout, and a store that cannot be reached only ends the round (the
claims it held lapse after ``lease`` seconds and are taken again: at-least-once).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hitl_nb._sync import wait_event
from hitl_nb.errors import DeliveryFailed, NotifyRefused
from hitl_nb.notify._channels import Channels
from hitl_nb.notify._links import AnswerLinks
from hitl_nb.notify._messages import compose
from hitl_nb.notify._notes import Batch, Note
from hitl_nb.notify._outbox import Outbox
from hitl_nb.notify._plan import (
    Ceiling,
    Limits,
    decide,
    next_allowed,
    retry_at,
    stale_before,
    stale_reason,
)
from hitl_nb.notify._routes import NoRoute, Router

__all__ = ["Round", "Sender"]

log = logging.getLogger("hitl_nb.notify")


@dataclass
class Round:
    """What one round did: recipients ``claimed``, messages ``sent``, batches
    ``retried``, ``deferred`` and ``given_up``, and stale notes given up (``stale``)."""

    claimed: int = 0
    sent: int = 0
    retried: int = 0
    deferred: int = 0
    given_up: int = 0
    stale: int = 0
    #: The claim came back as large as asked: more may be due now.
    full: bool = False


class Sender:
    """Sends what the outbox holds (see the module docstring). ``owner``: this
    sender's name in claims (a replica's id); ``lease``: how long a claim holds (longer
    than the slowest send); ``clock`` and ``jitter`` are the time and the randomness
    (``[0, 1)``) its decisions use; ``delivered``: told of each message's end, its
    channel's kind (``none``: nowhere to send), ``sent``, ``retried`` or
    ``given_up``, and the notes it told (the metrics, the traces)."""

    def __init__(
        self,
        outbox: Outbox,
        router: Router,
        channels: Channels,
        links: AnswerLinks,
        *,
        limits: Limits | None = None,
        owner: str | None = None,
        lease: float = 120.0,
        poll: float = 1.0,
        gap: float = 0.05,
        concurrency: int = 8,
        sweep_every: float = 10.0,
        clock: Callable[[], float] = time.time,
        jitter: Callable[[], float] = random.random,
        delivered: Callable[[str, str, Sequence[Note]], None] | None = None,
    ) -> None:
        self.outbox = outbox
        self.router = router
        self.channels = channels
        self.links = links
        self.limits = limits or Limits()
        self.owner = owner or uuid.uuid4().hex
        self.lease = lease
        self.poll = poll
        self.gap = gap
        self.concurrency = concurrency
        self.sweep_every = sweep_every
        self._clock = clock
        self._jitter = jitter
        self._delivered = delivered
        self.ceiling = Ceiling(self.limits.per_minute)
        self._next_sweep = 0.0
        #: Rounds done so far (for tests and metrics).
        self.rounds = 0
        self._wake = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None

    # -- life --------------------------------------------------------------------------

    def start(self) -> None:
        """Start sending in the background of the running loop."""
        if self._task is None:
            self._stopping = False
            self._task = asyncio.ensure_future(self._run())

    def wake(self) -> None:
        """Something was written to the outbox: look now rather than at the next poll."""
        self._wake.set()

    async def stop(self, grace: float = 5.0) -> None:
        """Stop after the round under way (at most ``grace`` seconds, then cut short:
        what it held is sent again after its lease)."""
        task, self._task = self._task, None
        if task is None:
            return
        self._stopping = True
        self._wake.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), grace)
        except asyncio.TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while not self._stopping:
            self._wake.clear()
            try:
                done = await self.round()
            except Exception:  # the store went away: the next round tries again
                log.warning("hitl-nb notify: a round failed", exc_info=True)
                done = Round()
            if self._stopping:
                break
            if done.full:
                await asyncio.sleep(0)
                continue
            now = self._clock()
            ended = asyncio.get_running_loop().time()
            wait = max(self.poll, self.ceiling.free_at(now) - now)
            await wait_event(self._wake, wait)  # a stop while woken still stops
            if self._wake.is_set() and not self._stopping:
                # woken: the writes of the moment gather into one round
                left = ended + self.gap - asyncio.get_running_loop().time()
                await asyncio.sleep(max(0.0, left))

    # -- one round ---------------------------------------------------------------------

    async def round(self) -> Round:
        """One round (see the module docstring); what it did."""
        self.rounds += 1
        done = Round()
        now = self._clock()
        if now >= self._next_sweep:
            self._next_sweep = now + self.sweep_every
            stale = await self.outbox.give_up_stale(now, stale_before(now, self.limits))
            for note in stale:
                log.warning(
                    "hitl-nb notify: gave up a message (%s) to %s: %s",
                    note.kind,
                    note.recipient,
                    stale_reason(note, now),
                )
            done.stale = len(stale)
        room = self.ceiling.room(now)
        if room <= 0:
            return done
        want = min(room, self.concurrency * 4)
        batches = await self.outbox.claim(
            self.owner, now, self.lease, recipients=want, listed=self.limits.listed
        )
        done.claimed = len(batches)
        done.full = len(batches) >= want
        gate = asyncio.Semaphore(self.concurrency)

        async def one(batch: Batch) -> str:
            async with gate:
                return await self._handle(batch)

        for outcome in await asyncio.gather(*(one(b) for b in batches)):
            setattr(done, outcome, getattr(done, outcome) + 1)
        return done

    async def _handle(self, batch: Batch) -> str:
        try:
            return await self._send(batch)
        except Exception:  # a bug, or the store went away while marking: the claim lapses
            log.exception("hitl-nb notify: a message to %s failed unexpectedly", batch.recipient)
            return "retried"

    def _channel(self, target: object) -> str:
        try:
            return self.channels.kinds.of(target).name
        except NotifyRefused:
            return "unknown"

    def _ended(self, channel: str, result: str, batch: Batch) -> str:
        if self._delivered is not None:
            self._delivered(channel, result, batch.notes)
        return result

    async def _send(self, batch: Batch) -> str:
        now = self._clock()
        channel = "none"
        decision = decide(batch, now, self.limits)
        if decision.action == "defer":
            await self.outbox.mark_retry(batch, decision.until, None)
            return "deferred"
        self.ceiling.count(now)
        try:
            target = await self.router.route(batch.recipient)
            if isinstance(target, NoRoute):
                await self.outbox.give_up(batch, now, target.reason)
                log.info("hitl-nb notify: nothing sent to %s: %s", batch.recipient, target.reason)
                return self._ended(channel, "given_up", batch)
            channel = self._channel(target)
            message = compose(batch, self.links, now)
            await self.channels.deliver(message, target)
        except DeliveryFailed as exc:
            at = self._clock()
            if exc.permanent:
                await self.outbox.give_up(batch, at, str(exc))
                log.warning("hitl-nb notify: gave up a message to %s: %s", batch.recipient, exc)
                return self._ended(channel, "given_up", batch)
            attempts = 1 + max((n.attempts for n in batch.notes), default=0)
            when = retry_at(at, attempts, self.limits, self._jitter())
            if exc.retry_after is not None:  # the receiver said when (a 429's Retry-After)
                when = max(when, at + min(exc.retry_after, self.limits.max_retry))
            await self.outbox.mark_retry(batch, when, str(exc))
            log.info("hitl-nb notify: a message to %s waits: %s", batch.recipient, exc)
            return self._ended(channel, "retried", batch)
        at = self._clock()
        await self.outbox.mark_sent(batch, at, next_allowed(at, self.limits))
        return self._ended(channel, "sent", batch)
