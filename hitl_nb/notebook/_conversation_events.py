"""How a conversation takes in what its follower brings: events applied once, in order.

The follower (:mod:`._follower`, on the shared loop thread) hands every event to
:meth:`TaskEvents.receive`. A replayed event, or a GetTask snapshot of a status a stream
already brought, is applied once; a snapshot older than the status shown is not applied.
A new prompt gets a :class:`~hitl_nb.notebook.PromptCard` (the previous card is settled
or closed), a plain-text question gets a text card, and whoever waits for "the next
prompt" is told.
"""

from __future__ import annotations

import concurrent.futures
import copy
import threading
import time
from collections import deque
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from hitl_nb.a2a import Task, TaskState
from hitl_nb.client import (
    ArtifactEvent,
    ClientEvent,
    MalformedPromptEvent,
    MessageEvent,
    PromptEvent,
    StatusEvent,
    TaskEvent,
    prompt_of,
)
from hitl_nb.spec import parse_rfc3339

from ._card import PromptCard
from ._conversation_gateway import GatewayRegistration
from ._conversation_view import ConversationView
from ._deadline import seconds_left
from ._follower import Follower
from ._parts import message_text
from ._question import QuestionCard

__all__ = ["TaskEvents", "event_id_of"]


class TaskEvents(GatewayRegistration, ConversationView):
    """The event side of :class:`~hitl_nb.notebook.Conversation` (its base class): what
    the follower tells it, and how the cards follow the task.

    The attributes below are set by ``Conversation.__init__``.
    """

    responder: str | None
    ui: Mapping[str, Any] | None
    events: deque[ClientEvent]
    #: How the task was followed, in order: ``(state, detail)``.
    link_log: deque[tuple[str, str]]
    _seen_ids: set[str]
    _seen_keys: set[tuple[object, ...]]
    _known: threading.Event
    _settled: threading.Event
    _start_error: BaseException | None
    _prompt_future: concurrent.futures.Future[PromptCard | None]
    #: The follower, boxed so that a finalizer can stop it without the conversation.
    _box: list[Follower | None]

    @property
    def following(self) -> bool:
        """True while the task is followed in the background."""
        follower = self._box[0]
        return follower is not None and follower.running

    def started(self, error: BaseException | None) -> None:
        """The first exchange is over (``error``: the task could not be started)."""
        if error is not None and not self._known.is_set():
            self._start_error = error
        self._known.set()
        if error is not None:
            self._settled.set()

    def followed_task(self) -> Task | None:
        """The task as last seen."""
        return self.task

    def open_deadline(self) -> float | None:
        """Seconds to the open prompt's deadline (negative once passed), or None."""
        card = self.current
        return seconds_left(card.envelope) if card is not None else None

    def deadline_passed(self) -> None:
        """The open prompt's deadline passed: its card says so (whether the agent still
        takes answers shows with the next look at the task)."""
        card = self.current
        if card is not None:
            card.deadline_passed()

    def link_state(self, state: str, detail: str = "") -> None:
        """How the task is followed: live, polling, reconnecting, stopped, lost."""
        with self._lock:
            self._link_state = (state, detail)
            self.link_log.append((state, detail))
            if state in ("stopped", "lost"):
                self._settled.set()
                self._resolve_prompt(None)
            self._render()

    def receive(self, event: ClientEvent) -> None:
        """Apply one event; :attr:`events` logs each event once.

        The same status seen twice (a replayed event, a GetTask snapshot of a status a
        stream already brought) is logged once; a snapshot older than the status shown
        is not applied.
        """
        with self._lock:
            fresh = self._first_time(event)
            if fresh:
                self.events.append(event)
            elif event_id_of(event) is not None:
                return  # a replay: applied already
            if isinstance(event, TaskEvent):
                if self._older(event.task.status.timestamp):
                    return
                self._set_task(copy.deepcopy(event.task))
            elif isinstance(event, StatusEvent):
                if fresh or not self._older(event.status.timestamp):
                    self._on_status(event)
            elif isinstance(event, ArtifactEvent):
                self._on_artifact(event)
            elif isinstance(event, PromptEvent | MalformedPromptEvent):
                pass  # the status that carries it was applied just before
            elif isinstance(event, MessageEvent):
                self.message = event.message
                self._known.set()
                self._settled.set()
                self._resolve_prompt(None)
            self._render()

    def _older(self, timestamp: str | None) -> bool:
        now = self.task.status.timestamp if self.task is not None else None
        return bool(timestamp and now and _instant(timestamp) < _instant(now))

    def _first_time(self, event: ClientEvent) -> bool:
        event_id = event_id_of(event)
        if event_id is not None:
            key: Any = (type(event).__name__, event_id)
            if key in self._seen_ids:
                return False
            self._seen_ids.add(key)
        if isinstance(event, TaskEvent | StatusEvent):
            status = event.task.status if isinstance(event, TaskEvent) else event.status
            message = status.message.message_id if status.message is not None else None
            content_key = (status.state, status.timestamp, message)
            seen = content_key in self._seen_keys
            self._seen_keys.add(content_key)
            if event_id is None or isinstance(event, TaskEvent):
                return not seen
        return True

    def _on_status(self, event: StatusEvent) -> None:
        signal = (event.metadata or {}).get("hitlTimeout")
        if isinstance(signal, dict):
            for card in self.cards:
                if card.prompt_id == signal.get("promptId"):
                    card.timeout_signaled = True
                    card.deadline_passed(still_open=event.state is TaskState.INPUT_REQUIRED)
        if self.task is None:
            task = Task(event.task_id, event.context_id, copy.deepcopy(event.status))
        else:
            task = copy.copy(self.task)
            task.status = copy.deepcopy(event.status)
        self._set_task(task)

    def _on_artifact(self, event: ArtifactEvent) -> None:
        if self.task is None:
            return
        task = copy.copy(self.task)
        artifacts = list(task.artifacts)
        for i, old in enumerate(artifacts):
            if old.artifact_id == event.artifact.artifact_id:
                if event.append:
                    merged = copy.copy(old)
                    merged.parts = [*old.parts, *event.artifact.parts]
                    artifacts[i] = merged
                else:
                    artifacts[i] = event.artifact
                break
        else:
            artifacts.append(event.artifact)
        task.artifacts = artifacts
        self.task = task

    def _set_task(self, task: Task) -> None:
        if self.task is None and self.gateway is not None and not task.status.state.is_terminal:
            self._register(task.id)
        previous = self.task
        if previous is not None and previous.status.state is not task.status.state:
            self._since = time.monotonic()
        if previous is not None and not task.artifacts and previous.artifacts:
            task.artifacts = previous.artifacts  # a status update does not drop artifacts
        self.task = task
        self._known.set()
        state = task.status.state
        found = prompt_of(task)
        last = self.cards[-1] if self.cards else None
        if isinstance(found, PromptEvent):
            if last is None or last.prompt_id != found.prompt_id:
                if last is not None:
                    self._leave(last, task)
                self._add_card(task, found)
            else:
                left = seconds_left(last.envelope)
                if left is not None and left <= 0:
                    last.deadline_passed(still_open=True)  # S-4: the agent keeps it open
                if last.is_open:
                    self._show_count(last)  # the gateway's consensus count
            self.malformed = None
        else:
            if isinstance(found, MalformedPromptEvent):
                self.malformed = found
            if last is not None and (state.is_terminal or state.is_interrupted):
                self._leave(last, task)
            elif last is not None and last.state == "open":
                last.closed_by(task)  # the agent moved on without our answer
            self._question_for(task)
        if state.is_terminal or state.is_interrupted:
            self._settled.set()
        if state.is_terminal:
            self._resolve_prompt(None)

    def _leave(self, card: PromptCard, task: Task) -> None:
        if card.state == "accepted":
            card.settled(task)
        else:
            card.closed_by(task)

    def _add_card(self, task: Task, event: PromptEvent) -> None:
        card = PromptCard(
            self.link, task, event.envelope, responder=self.responder, ui=self.ui,
            watcher=self, gateway=self.gateway, registration=self.registration,
        )  # fmt: skip
        self._show_count(card)
        self.cards.append(card)
        self._settled.set()
        self._resolve_prompt(card)

    def _question_for(self, task: Task) -> None:
        question = self.question
        if question is not None and question.state == "accepted":
            if task.status.state.is_terminal or task.status.state.is_interrupted:
                question.settled(task)
        elif question is not None and question.is_open and not task.status.state.is_interrupted:
            question.closed_by(task)
        if (
            task.status.state is TaskState.INPUT_REQUIRED
            and prompt_of(task) is None
            and message_text(task.status.message).strip()
            and (question is None or not question.is_open)
            and (question is None or question.task.status.message is not task.status.message)
        ):
            if question is None or question.state == "done":
                self.question = QuestionCard(self.link, task, watcher=self)
                self._settled.set()

    def _resolve_prompt(self, card: PromptCard | None) -> None:
        waiting = self._prompt_future
        if (
            card is not None
            or self.task is None
            or self.task.status.state.is_terminal
            or (self._link_state[0] in ("stopped", "lost"))
        ):
            self._prompt_future = concurrent.futures.Future()
            if not waiting.done():
                waiting.set_result(card)

    def answer_accepted(self, card: Any, result: Any) -> None:
        """A card's answer was accepted: show the task as the agent returned it, look again."""
        if isinstance(result, Task):
            self.receive(TaskEvent(result))
        follower = self._box[0]
        if follower is not None and follower.running:
            follower.wake()
        elif self.task is not None:
            card.settled(self.task)


def event_id_of(event: ClientEvent) -> str | None:
    """The event's id on the wire (None when the agent does not number its events)."""
    value = getattr(event, "event_id", None)
    return value if isinstance(value, str) else None


def _instant(timestamp: str) -> datetime:
    parsed = parse_rfc3339(timestamp)
    return parsed if parsed is not None else datetime.min.replace(tzinfo=timezone.utc)
