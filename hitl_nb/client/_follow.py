"""Following a stream across dropped connections, never delivering an event twice.

A dropped connection (or one the agent closes before the task is terminal or
interrupted) is resumed with SubscribeToTask: with ``Last-Event-ID`` when the agent
numbers its events (hitl-prompt/v1 §Outbox / Replay), otherwise from the task snapshot
the subscription starts with (A2A §3.1.6). An event seen before under the same id is
skipped; an id reused for a different event counts for nothing. Without ids, a snapshot
or status equal to one already delivered (same state, timestamp and message metadata; a
snapshot that brings new artifacts excepted) and a prompt already delivered are skipped.
Retries are bounded, with exponential backoff; an attempt that delivered something new
resets the count.

An answer sent as a stream (a message carrying ``hitl_response_for``) names the prompt
it answers. Agents built on the SDKs open every streamed turn with the stored Task
(A2A 1.0 §3.1.2: "the stream MUST begin with the Task object"), which is still
``INPUT_REQUIRED`` and still carries that prompt. That prompt is never a new one: it is
not handed out as a :class:`PromptEvent`, and a task interrupted on it (the opening
snapshot, or a snapshot after a reconnect) does not end the stream, which goes on to the
next real interruption or the end.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from hitl_nb._backoff import Backoff
from hitl_nb.a2a import StreamEvent, Task, TaskState, TaskStatus, TaskStatusUpdateEvent
from hitl_nb.errors import AgentTimeout, AgentUnreachable, TaskNotFound, UnsupportedOperation

from ._events import (
    ArtifactEvent,
    ClientEvent,
    MalformedPromptEvent,
    PromptEvent,
    StatusEvent,
    TaskEvent,
    ends_stream,
    neutral_events,
    prompt_in_status,
)

__all__ = ["Reconnect", "ReconnectHook", "follow"]

log = logging.getLogger("hitl_nb.client")

#: An opener yields ``(event_id, event)`` or ``(event_id, event, wire_json)`` (the JSON
#: the event was decoded from, which the neutral events then carry).
Opener = Callable[
    [str | None],
    AsyncGenerator[tuple[str | None, StreamEvent] | tuple[str | None, StreamEvent, Any], None],
]
#: Called before each reconnect: ``(attempt, delay_seconds, reason)``.
ReconnectHook = Callable[[int, float, Exception], None]


@dataclass(frozen=True)
class Reconnect:
    """How hard a client tries again after a dropped connection (times in seconds).

    ``max_reconnects``: attempts in a row that bring nothing new (a stream resumed, an
    answer whose fate is unknown asked after); ``backoff``: the first delay, doubled on
    each attempt up to ``max_backoff``; ``max_total_reconnects``: attempts over a whole
    stream, progress or not (a hostile agent could otherwise cut every connection after
    one new event, forever).

    >>> HitlClient(url, reconnect=Reconnect(max_reconnects=2, backoff=0.1))  # doctest: +SKIP
    """

    max_reconnects: int = 5
    backoff: float = 0.25
    max_backoff: float = 5.0
    max_total_reconnects: int = 100

    def __post_init__(self) -> None:
        for name in ("max_reconnects", "max_total_reconnects"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"Reconnect: {name} must be an integer >= 0, got {value!r}")
        for name in ("backoff", "max_backoff"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise ValueError(f"Reconnect: {name} must be a number >= 0, got {value!r}")

    def delay(self, attempt: int) -> float:
        """Delay before reconnect number ``attempt`` (1-based)."""
        return Backoff(self.backoff, self.max_backoff).delay(attempt)


def _status_key(status: TaskStatus) -> tuple[object, ...]:
    meta = status.message.metadata if status.message is not None else None
    return (status.state, status.timestamp, repr(meta))


@dataclass
class _State:
    task_id: str | None = None
    last_event_id: str | None = None
    #: Each event id delivered, with a digest of the event it named (not the event:
    #: a long stream of large events would all stay in memory).
    seen_ids: dict[str, bytes] = field(default_factory=dict)
    reused_id_warned: bool = False
    prompts: set[str] = field(default_factory=set)
    statuses: set[tuple[object, ...]] = field(default_factory=set)
    artifacts: set[str] = field(default_factory=set)
    #: The prompt this stream answers (its snapshots still show it open).
    answered: str | None = None


def _fresh(
    state: _State, event_id: str | None, event: StreamEvent, wire_json: Any = None
) -> list[ClientEvent]:
    """The neutral events not yet delivered, updating what was delivered."""
    by_content = event_id is None
    if event_id is not None:
        digest = hashlib.blake2b(repr(event).encode(), digest_size=16).digest()
        earlier = state.seen_ids.get(event_id)
        if earlier == digest:
            return []  # a replay
        state.last_event_id = event_id
        if earlier is not None:
            # The id was used for another event (e.g. an agent numbering each connection
            # from 1, against §Outbox / Replay): judge this one by its content instead.
            if not state.reused_id_warned:
                state.reused_id_warned = True
                log.warning("the agent reused event id %r for a different event", event_id)
            by_content = True
        else:
            state.seen_ids[event_id] = digest
    if isinstance(event, Task):
        state.task_id = state.task_id or event.id
    elif isinstance(event, TaskStatusUpdateEvent):
        state.task_id = state.task_id or event.task_id
    out: list[ClientEvent] = []
    for item in neutral_events(event, event_id, wire_json):
        if isinstance(item, (PromptEvent, MalformedPromptEvent)):
            if state.answered is not None and item.prompt_id == state.answered:
                continue  # the prompt this stream answers, not a new one
            key = item.prompt_id or repr(item.raw if isinstance(item, MalformedPromptEvent) else "")
            if key in state.prompts:
                continue
            state.prompts.add(key)
        elif isinstance(item, (TaskEvent, StatusEvent)):
            status = item.task.status if isinstance(item, TaskEvent) else item.status
            key_s = _status_key(status)
            # A snapshot also stands for artifacts made while disconnected.
            news: set[str] = set()
            if isinstance(item, TaskEvent):
                news = {a.artifact_id for a in item.task.artifacts} - state.artifacts
                state.artifacts |= news
            if by_content and key_s in state.statuses and not news:
                continue
            state.statuses.add(key_s)
        elif isinstance(item, ArtifactEvent):
            state.artifacts.add(item.artifact.artifact_id)
        out.append(item)
    return out


def _stale(state: _State, event: StreamEvent) -> bool:
    """Does ``event`` show the task interrupted on the prompt this stream answers?"""
    if state.answered is None:
        return False
    if isinstance(event, Task):
        status, task_id, context_id = event.status, event.id, event.context_id
    elif isinstance(event, TaskStatusUpdateEvent):
        status, task_id, context_id = event.status, event.task_id, event.context_id
    else:
        return False
    if status.state is not TaskState.INPUT_REQUIRED:
        return False
    shown = prompt_in_status(task_id, context_id, status)
    return shown is not None and shown.prompt_id == state.answered


async def follow(
    first: Opener,
    resubscribe: Callable[[str], Opener],
    get_task: Callable[[str], Awaitable[Task]],
    policy: Reconnect,
    task_id: str | None = None,
    *,
    first_is_subscription: bool = False,
    on_reconnect: ReconnectHook | None = None,
    answered: str | None = None,
) -> AsyncGenerator[ClientEvent, None]:
    """Yield neutral events from ``first``, resuming with ``resubscribe(task_id)``.

    Ends after an event that ends the stream (terminal or interrupted state, a message);
    an interruption on ``answered`` (the prompt an answer stream answers) does not.
    A subscription refused because the task is terminal yields its final snapshot.
    Raises :class:`AgentUnreachable` / :class:`AgentTimeout` once the reconnects are
    spent; other errors (protocol violations, agent errors) end the stream at once.
    ``on_reconnect(attempt, delay, reason)`` is called before each reconnect (e.g. to
    show "reconnecting"); an exception it raises is logged and ignored.
    """
    state = _State(task_id=task_id, answered=answered)
    opener = first
    resuming = False
    attempt = total = 0
    while True:
        progressed = False
        reason: Exception
        try:
            async with aclosing(opener(state.last_event_id)) as events:
                async for wire in events:
                    event_id, event = wire[0], wire[1]
                    fresh = _fresh(state, event_id, event, wire[2] if len(wire) > 2 else None)
                    progressed = progressed or bool(fresh)
                    for item in fresh:
                        yield item
                    if ends_stream(event) and not _stale(state, event):
                        return
            reason = AgentUnreachable("the agent closed the stream before the task finished")
        except (AgentUnreachable, AgentTimeout) as exc:
            reason = exc
        except (UnsupportedOperation, TaskNotFound) as exc:
            # A terminal task cannot be subscribed to (A2A §3.1.6): read its end state.
            if state.task_id is None or (not resuming and not first_is_subscription):
                raise
            task = await get_task(state.task_id)
            for item in _fresh(state, None, task):
                yield item
            if ends_stream(task) and not _stale(state, task):
                return
            raise AgentUnreachable(f"cannot resubscribe to task {state.task_id}: {exc}") from exc
        if state.task_id is None:
            raise AgentUnreachable(f"stream lost before the agent named the task: {reason}")
        attempt = 1 if progressed else attempt + 1
        total += 1
        if attempt > policy.max_reconnects or total > policy.max_total_reconnects:
            error = type(reason) if isinstance(reason, AgentTimeout) else AgentUnreachable
            raise error(
                f"stream of task {state.task_id} lost; gave up after {total - 1} "
                f"reconnect attempts: {reason}"
            ) from reason
        delay = policy.delay(attempt)
        log.info(
            "stream of task %s dropped (%s); reconnecting in %.2fs", state.task_id, reason, delay
        )
        if on_reconnect is not None:
            try:
                on_reconnect(attempt, delay, reason)
            except Exception:  # a display hook must not end the stream
                log.exception("on_reconnect hook failed")
        await asyncio.sleep(delay)
        opener = resubscribe(state.task_id)
        resuming = True
