"""The open prompts one person may answer, as a feed: a snapshot, then what changed.

What JupyterLab's prompts panel shows comes from here (through the Jupyter server's
relay, :mod:`hitl_nb.server._relay`): every open prompt the caller may answer, soonest
deadline first, each a :class:`~hitl_nb.gateway._views.PromptItem` (no schema, the
question cut short); or (``registered``) the open prompts of the tasks the caller
registered, whoever may answer them (a kernel's cards hear what became of theirs).

- The gateway calls :meth:`PromptFeed.changed` whenever what it keeps about an open
  prompt changes: a prompt seen or closed, an answer counted, a forward settled. The
  hint names the task (and, for a new prompt, its envelope), so only followers it may
  concern read again, and only that task's prompts (a hint naming no task, or more
  than :data:`MAX_PARTIAL` tasks at once, or a list cut at the limit: the whole list).
- :meth:`PromptFeed.follow` yields a snapshot first (:class:`FeedChange` with
  ``reset``), then only what changed. Bursts coalesce: the list is read ``settle``
  seconds after the first hint, once for all the hints that came meanwhile (50 prompts
  registered at once are one change). A replica of the gateway does not hear another
  replica's hints: the list is read again every ``recheck`` seconds anyway.
- A store that cannot be reached is said once (``problem``), tried again with a
  growing pause (``retry`` seconds, doubling up to 30), and a snapshot follows when it
  answers again.

Over HTTP (``GET api/feed`` of both hosts) the feed is server-sent events
(:func:`sse_frames`), each event's data a JSON object::

    event: reset        {"total": n}           a snapshot follows
    event: upsert       {"items": [...]}       prompts added or changed (about 256 KiB an event)
    event: remove       {"keys": [...]}        prompts that left
    event: synced       {"total": n}           everything since the last synced is whole
    event: unavailable  {"message": "..."}     the gateway's database cannot be reached
    : ping                                     after 15 s without an event
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from hitl_nb._backoff import Backoff
from hitl_nb.a2a import encode_comment, encode_event
from hitl_nb.gateway._store import StoreUnavailable
from hitl_nb.gateway._views import Caller, PromptItem, refusal, responder_gate

__all__ = [
    "FEED_LIMIT",
    "MAX_FOLLOWERS",
    "PING",
    "FeedChange",
    "FeedFull",
    "FeedScope",
    "PromptFeed",
    "serve_feed",
    "sse_frames",
]


#: At most this many prompts in one follower's list (``total`` counts them all).
FEED_LIMIT = 10_000
#: At most this many followers at once (each holds a connection and reads the list).
MAX_FOLLOWERS = 2000
#: The size an ``upsert`` event of the HTTP feed grows to before the next one starts
#: (a reader's cap on one event is 1 MiB; one item is a few KiB at most).
SSE_BATCH_BYTES = 256 * 1024

#: What a host writes when nothing happened for a while (keeps proxies from closing).
PING = encode_comment("ping")


@dataclass(frozen=True)
class FeedScope:
    """Which open prompts a listing reads for a follower: those ``caller`` may answer,
    or (``registered``) those of the tasks ``caller`` registered, whoever may answer
    them; ``registration``: only that task's (a hint's re-read)."""

    caller: Caller
    registered: bool = False
    registration: str | None = None


#: Reads a follower's list: (items, soonest deadline first; how many in all).
Listing = Callable[[FeedScope, int], Awaitable[tuple[list[PromptItem], int]]]

#: More hinted tasks than this at once are read as one whole list instead.
MAX_PARTIAL = 20


class FeedFull(Exception):
    """As many followers as the feed takes follow it already."""


@dataclass(frozen=True)
class FeedChange:
    """What changed in one follower's list.

    ``reset``: ``items`` is the whole list (a snapshot), else the prompts added or
    changed (each :meth:`PromptItem.to_json <hitl_nb.gateway._views.PromptItem.to_json>`,
    as the HTTP feed sends it); ``removed``: keys of prompts that left; ``total``: how
    many open prompts the follower's list holds in all (at most :data:`FEED_LIMIT` are
    listed). ``problem``: the list could not be read (in words); nothing else is set then.
    """

    reset: bool
    items: list[dict[str, Any]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    total: int = 0
    problem: str | None = None


class _Follower:
    def __init__(self, scope: FeedScope) -> None:
        self.caller = scope.caller
        self.scope = scope
        self.wake = asyncio.Event()
        #: The tasks (registration ids) of the prompts listed last.
        self.regs: set[str] = set()
        #: The tasks hinted since the last read; ``everything``: read the whole list.
        self.hinted: set[str] = set()
        self.everything = False

    def concerns(self, reg_id: str | None, envelope: Mapping[str, Any] | None) -> bool:
        if reg_id is None or reg_id in self.regs:
            return True
        if envelope is None:
            return False
        if self.caller.name is None or self.scope.registered:
            # The server's one user hears of every prompt; a new prompt may be of a task
            # the caller registered (that task's read says).
            return True
        return refusal(responder_gate(dict(envelope)), self.caller) is None

    def hint(self, reg_id: str | None) -> None:
        if reg_id is None:
            self.everything = True
        else:
            self.hinted.add(reg_id)
        self.wake.set()

    def take(self) -> set[str] | None:
        """The tasks to read again (None: the whole list), and forget them."""
        hinted, everything = self.hinted, self.everything
        self.hinted, self.everything = set(), False
        return None if everything or len(hinted) > MAX_PARTIAL else hinted


class PromptFeed:
    """Open prompts, followed (see the module docstring). ``listing`` reads a
    follower's list (or one task's part of it) from the store."""

    def __init__(
        self,
        listing: Listing,
        *,
        settle: float = 0.05,
        recheck: float = 15.0,
        retry: float = 1.0,
        limit: int = FEED_LIMIT,
        max_followers: int = MAX_FOLLOWERS,
    ) -> None:
        self._listing = listing
        self.settle = settle
        self.recheck = recheck
        self.retry = retry
        self.limit = limit
        self.max_followers = max_followers
        self._followers: set[_Follower] = set()

    @property
    def followers(self) -> int:
        """How many follow the feed now."""
        return len(self._followers)

    @property
    def full(self) -> bool:
        """Does the feed take no more followers now (:data:`MAX_FOLLOWERS`)?"""
        return len(self._followers) >= self.max_followers

    def changed(self, reg_id: str | None = None, envelope: Mapping[str, Any] | None = None) -> None:
        """Something about the open prompts of task ``reg_id`` changed (None: maybe any
        task's); ``envelope``: a new prompt's, so those who may answer it hear of it."""
        for follower in self._followers:
            if follower.concerns(reg_id, envelope):
                follower.hint(reg_id)

    async def follow(
        self, caller: Caller, *, registered: bool = False
    ) -> AsyncIterator[FeedChange]:
        """The caller's list: a snapshot, then each change (see :class:`FeedChange`).
        ``registered``: the open prompts of the tasks the caller registered instead
        (whoever may answer them: a kernel hears what became of its cards' prompts).
        Raises :class:`FeedFull` when :data:`MAX_FOLLOWERS` follow already (a host
        answers 503 before it starts, when :attr:`full`)."""
        if self.full:
            raise FeedFull(f"the feed has {self.max_followers} followers already (its limit)")
        me = _Follower(FeedScope(caller, registered))
        self._followers.add(me)
        known: dict[str, PromptItem] | None = None
        total = 0
        pause = self.retry
        down = False
        whole = True  # the next read is of the whole list
        try:
            while True:
                hinted = me.take()
                if whole or known is None or hinted is None or total > len(known):
                    hinted = None
                if hinted is not None and not hinted:  # a wake whose hints a read took
                    whole = await self._wait(me, self.recheck)
                    await asyncio.sleep(self.settle)
                    continue
                try:
                    if hinted is None:
                        items, count = await self._listing(me.scope, self.limit)
                        current = {item.key: item for item in items}
                    else:
                        assert known is not None
                        current, count = await self._tasks(me.scope, known, hinted)
                except StoreUnavailable as exc:
                    if not down:  # said once an outage
                        yield FeedChange(False, problem=str(exc))
                    down, known = True, None  # a snapshot follows once it answers again
                    me.regs = set()
                    await self._wait(me, pause)
                    pause = Backoff(self.retry, 30.0).after(pause)
                    continue
                if count > self.limit and hinted is not None:
                    whole = True  # more than a list holds: which ones is the whole list's say
                    continue
                down, pause = False, self.retry
                me.regs = {item.registration for item in current.values()}
                if known is None:
                    yield FeedChange(True, [i.to_json() for i in current.values()], [], count)
                else:
                    upserts = [i.to_json() for k, i in current.items() if known.get(k) != i]
                    removed = [k for k in known if k not in current]
                    if upserts or removed or count != total:
                        yield FeedChange(False, upserts, removed, count)
                known, total = current, count
                whole = await self._wait(me, self.recheck)
                await asyncio.sleep(self.settle)  # the rest of a burst comes meanwhile
        finally:
            self._followers.discard(me)

    async def _tasks(
        self, scope: FeedScope, known: dict[str, PromptItem], hinted: set[str]
    ) -> tuple[dict[str, PromptItem], int]:
        """``known`` with the prompts of the ``hinted`` tasks read again (one read a task)."""
        current = {k: i for k, i in known.items() if i.registration not in hinted}
        for reg_id in sorted(hinted):
            items, _ = await self._listing(replace(scope, registration=reg_id), self.limit)
            current.update((item.key, item) for item in items)
        return current, len(current)

    @staticmethod
    async def _wait(me: _Follower, seconds: float) -> bool:
        """Until a hint or ``seconds``; True when the time ran out (a whole re-read is due)."""
        try:
            await asyncio.wait_for(me.wake.wait(), seconds)
        except asyncio.TimeoutError:
            return True
        finally:
            me.wake.clear()
        return False


def _json(body: Any) -> str:
    return json.dumps(body, separators=(",", ":"))


def _frame(event: str, body: dict[str, Any]) -> bytes:
    return encode_event(_json(body), event=event)


def sse_frames(change: FeedChange) -> list[bytes]:
    """One change as the HTTP feed's server-sent events (see the module docstring)."""
    if change.problem is not None:
        return [_frame("unavailable", {"message": change.problem})]
    frames = [_frame("reset", {"total": change.total})] if change.reset else []
    batch: list[str] = []
    size = 0
    for item in change.items:
        text = _json(item)
        if batch and size + len(text) > SSE_BATCH_BYTES:
            frames.append(encode_event('{"items":[' + ",".join(batch) + "]}", event="upsert"))
            batch, size = [], 0
        batch.append(text)
        size += len(text) + 1
    if batch:
        frames.append(encode_event('{"items":[' + ",".join(batch) + "]}", event="upsert"))
    if change.removed:
        frames.append(_frame("remove", {"keys": change.removed}))
    frames.append(_frame("synced", {"total": change.total}))
    return frames


async def serve_feed(
    changes: AsyncIterator[FeedChange],
    write: Callable[[bytes], Any],
    flush: Callable[[], Awaitable[Any]],
    *,
    ping: float = 15.0,
) -> None:
    """Write a follower's changes as server-sent events until the connection ends (the
    host cancels this, or ``flush`` raises), with a :data:`PING` after ``ping``
    seconds without a change. The follower is let go of whichever way it ends."""
    pending: asyncio.Future[FeedChange] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(changes.__anext__())
            done, _ = await asyncio.wait({pending}, timeout=ping)
            if not done:
                write(PING)
                await flush()
                continue
            change = pending.result()
            pending = None
            for frame in sse_frames(change):
                write(frame)
            await flush()
    finally:
        if pending is not None:
            pending.cancel()
            await asyncio.gather(pending, return_exceptions=True)
        aclose = getattr(changes, "aclose", None)
        if aclose is not None:
            await aclose()
