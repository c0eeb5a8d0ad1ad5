"""Conversation: one task followed live in the notebook, its prompts answered in cards.

::

    from hitl_nb.notebook import Conversation
    chat = Conversation.start(agent_url, {"scenario": "approval"})
    chat                                   # the card follows the task by itself
    chat.answer({"approve": True})         # ... or answer from code (scripts, nbval)
    card = chat.next_prompt(timeout=60)    # wait for the next prompt (blocking)
    card = await chat.next_prompt_async(timeout=60)   # ... or awaiting, in a cell

:meth:`Conversation.start` returns as soon as the agent has named the task (and, for a
quick agent, its first prompt is in: at most ``settle`` seconds); the task is followed
in the background (:mod:`._follower`) on one shared thread, and the card shows what
happens: working (and for how long), the next prompt, completed, failed, canceled,
"reconnecting" when a stream drops. :meth:`Conversation.attach` follows an existing
task. Closing the conversation, running its cell again, or interrupting a cell stops
the following; so does forgetting the conversation (it is garbage-collected).

What the follower brings goes through :meth:`Conversation.receive`, each event applied
once and in order, by one method per kind of event (``_on_task``, ``_on_status``,
``_on_artifact``, ``_on_message``, ``_on_prompt``). A status comes with the prompt the
client found in it, so its envelope is checked once; the prompt of a snapshot the
notebook read itself (GetTask) is read here, once per new status. Every status then
goes through ``_apply_status``, where the cards follow the task: a new prompt gets a
:class:`~hitl_nb.notebook.PromptCard` (the previous card is settled or closed), a
plain-text question a text card, and whoever waits for "the next prompt" is told.

In a Jupyter server with the hitl-nb extension whose users have names (JupyterHub), the
cards answer through the server's responder gateway (``gateway=``, see
:mod:`._gateway_link`): the conversation registers its task there as soon as the agent
names it, in the background (the cell goes on), and the server says who is answering
(S-3). A registration that fails is said on the card at its first answer, which tries
again. Elsewhere (a plain ``jupyter lab`` with a token: the cards answer the agent
directly) the task is still registered with the kernel's gateway, to be watched only
(:mod:`._announce`): JupyterLab's prompts panel lists its prompts and shows this cell.
"""

from __future__ import annotations

import concurrent.futures
import copy
import threading
import time
import weakref
from collections import deque
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

import ipywidgets as W

from hitl_nb._display import stable_output
from hitl_nb._waiting import wait_async, wait_blocking
from hitl_nb.a2a import Message, Task, TaskState, TaskStatus
from hitl_nb.client import (
    ArtifactEvent,
    ClientEvent,
    MalformedPromptEvent,
    MessageEvent,
    PromptEvent,
    StatusEvent,
    SyncHitlClient,
    TaskEvent,
    Trace,
    prompt_of,
)
from hitl_nb.errors import AgentTimeout, HitlError
from hitl_nb.forms import bare
from hitl_nb.spec import parse_rfc3339
from hitl_nb.validation import compile_schema

from ._announce import announce, place
from ._card import PromptCard, QuestionCard
from ._clock import css_elapsed
from ._deadline import seconds_left
from ._feed_waker import listen
from ._follower import Follower, Prompt
from ._gateway_link import GatewayChoice, GatewayLink, gateway_link
from ._link import Link
from ._outcomes import Outcome
from ._parts import artifacts_html, artifacts_text, message_text, parts_html
from ._style import COLORS, CSS, MUTED, esc
from ._worker import track

__all__ = ["Conversation", "event_id_of", "malformed_words"]

#: The conversation's frame, carried by its state line (see :mod:`._style`).
_STYLE = f"<style>{CSS}</style>"

#: How many events a conversation keeps in :attr:`Conversation.events`.
MAX_EVENTS = 2000

_ENDED_WORDS = {
    TaskState.COMPLETED: ("ok", "Completed"),
    TaskState.FAILED: ("error", "Failed"),
    TaskState.CANCELED: ("error", "Canceled"),
    TaskState.REJECTED: ("error", "Rejected"),
}


class Conversation:
    """One task and its prompts, followed and answered in the notebook.

    Start one with :meth:`start` (sends the first message), follow an existing task
    with :meth:`attach`, or build one from a send result: ``Conversation(client, task)``.
    Each prompt gets a :class:`~hitl_nb.notebook.PromptCard`; the conversation shows the
    task's state, what the agent says (status messages, artifacts) and, for an agent that
    asks in plain text, a text answer card.

    ``gateway``: answer through the Jupyter server's responder gateway. ``None`` (the
    default) uses the gateway of the server running this kernel when that server can
    name its users; ``False`` answers the agent directly; ``True`` requires the
    gateway (:class:`~hitl_nb.errors.GatewayUnavailable` without one); a
    :class:`~hitl_nb.client.GatewayClient` or :class:`~hitl_nb.notebook.GatewayLink`
    uses that one. Once a gateway is in use, answers go only through it.

    Use it as a context manager or call :meth:`close`. Attributes: ``cards``, ``task``
    (as last seen), ``events`` (every event received, each once), ``widget``,
    ``gateway`` (the :class:`~hitl_nb.notebook.GatewayLink` in use, or None) and
    ``registration`` (the gateway's id of the task, once registered).
    """

    def __init__(
        self,
        client: SyncHitlClient | Link,
        result: Any = None,
        *,
        responder: str | None = None,
        ui: Mapping[str, Any] | None = None,
        poll_interval: float = 5.0,
        follow: bool = True,
        gateway: GatewayChoice | GatewayLink = None,
    ) -> None:
        self.link = client if isinstance(client, Link) else Link(client)
        self.client = self.link.sync
        try:
            self.gateway: GatewayLink | None = gateway_link(gateway)
        except BaseException:
            if not isinstance(client, Link):
                self.link.close()
            raise
        self.registration: str | None = None
        #: The gateway watching the task while the cards answer directly, and its id of
        #: the task (JupyterLab's prompts panel lists its prompts): None until registered.
        self.watched: tuple[GatewayLink, str] | None = None
        #: Why the task could not be registered with the gateway (None: no problem).
        self.registration_error: str | None = None
        self._registering = False
        self.responder = responder
        self.ui = ui
        self.poll_interval = poll_interval
        self.cards: list[PromptCard] = []
        self.question: QuestionCard | None = None
        self.task: Task | None = None
        self.message: Message | None = None
        self.malformed: MalformedPromptEvent | None = None
        #: The prompt the task's status carries now, as checked once (None: none).
        self._prompt: Prompt | None = None
        self._status_key: tuple[object, ...] | None = None
        self.events: deque[ClientEvent] = deque(maxlen=MAX_EVENTS)
        self._seen_ids: set[str] = set()
        self._seen_keys: set[tuple[object, ...]] = set()
        self._lock = threading.RLock()
        self._known = threading.Event()
        self._settled = threading.Event()
        self._start_error: BaseException | None = None
        self._prompt_future: concurrent.futures.Future[PromptCard | None] = (
            concurrent.futures.Future()
        )
        #: How the task is followed now: ``(state, detail)``.
        self._link_state = ("", "")
        #: How the task was followed, in order: ``(state, detail)`` (the last 100).
        self.link_log: deque[tuple[str, str]] = deque(maxlen=100)
        #: When the task entered its present state (``time.monotonic()``).
        self._since = time.monotonic()
        self._closed = False
        #: The follower, boxed so that a finalizer can stop it without the conversation.
        self._box: list[Follower | None] = [None]
        # Lines without Layout or Style models of their own (see the card's).
        self.notice = bare(W.HTML, ("hitl-conversation-state",), value=_STYLE)
        self.said = bare(W.HTML, ("hitl-agent-says",), value="")
        self.artifacts = bare(W.HTML, ("hitl-artifacts",), value="")
        self.widget = W.VBox([self.notice, self.said, self.artifacts])
        self.widget.add_class("hitl-conversation")
        weakref.finalize(self, _forget, self._box, self.link)
        if result is not None:
            self.receive(TaskEvent(result) if isinstance(result, Task) else _as_message(result))
            self._known.set()
        if follow and self.task is not None and not self.task.status.state.is_terminal:
            self._follow()
        track(self)

    # --- starting -------------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        agent: str | SyncHitlClient,
        content: Any = "approval",
        *,
        responder: str | None = None,
        ui: Mapping[str, Any] | None = None,
        poll_interval: float = 5.0,
        context_id: str | None = None,
        settle: float = 2.0,
        start_timeout: float = 60.0,
        gateway: GatewayChoice | GatewayLink = None,
        **client_options: Any,
    ) -> Conversation:
        """Send ``content`` to ``agent`` (a URL or a client) and follow the task.

        ``content`` is text, a data part (a dict, e.g. ``{"scenario": "approval"}`` for
        the mock agent) or a Message. Returns once the agent has named the task and its
        first prompt (or end) is in, or after ``settle`` seconds, whichever comes first:
        the conversation keeps following in the background. Raises the agent's error when
        the task could not be started, :class:`~hitl_nb.errors.AgentTimeout` when the
        agent names no task within ``start_timeout`` seconds. ``poll_interval`` is how
        often an open prompt's task is looked at (seconds). ``client_options`` go to
        :class:`~hitl_nb.client.HitlClient` when ``agent`` is a URL (``timeout=``:
        seconds for each request, as in httpx; an option the client does not take is
        refused with the list of those it does). ``gateway``: see :class:`Conversation`.
        """
        link = Link(agent, client_options, call="Conversation.start")
        try:
            chat = cls(
                link,
                responder=responder,
                ui=ui,
                poll_interval=poll_interval,
                follow=False,
                gateway=gateway,
            )
        except BaseException:
            link.close()
            raise
        chat._follow(content=content, context_id=context_id)
        # While the agent answers: load what checking its prompt takes (jsonschema, the
        # metaschema's check; 60-90 ms for a kernel's first prompt), not after it came.
        compile_schema({"type": "object"})
        return chat._await_start(start_timeout, settle)

    @classmethod
    def attach(
        cls,
        agent: str | SyncHitlClient,
        task_id: str,
        *,
        responder: str | None = None,
        ui: Mapping[str, Any] | None = None,
        poll_interval: float = 5.0,
        start_timeout: float = 60.0,
        gateway: GatewayChoice | GatewayLink = None,
        **client_options: Any,
    ) -> Conversation:
        """Follow an existing task (after a kernel restart, or one started elsewhere).

        Reads the task (GetTask) and follows it from there; raises
        :class:`~hitl_nb.errors.TaskNotFound` for a task the agent does not know.
        ``client_options``: as for :meth:`start`.
        """
        link = Link(agent, client_options, call="Conversation.attach")
        try:
            task = link.run(link.client.get_task(task_id), start_timeout)
        except BaseException:
            link.close()
            raise
        try:
            return cls(
                link, task, responder=responder, ui=ui, poll_interval=poll_interval, gateway=gateway
            )
        except BaseException:
            link.close()
            raise

    def _await_start(self, start_timeout: float, settle: float) -> Conversation:
        try:
            if not self._known.wait(start_timeout):
                raise AgentTimeout(f"the agent named no task within {start_timeout} s")
            if self._start_error is not None:
                raise self._start_error
        except BaseException:
            self.close()
            raise
        self._settled.wait(settle)
        return self

    def _follow(self, content: Any = None, context_id: str | None = None) -> None:
        follower = Follower(
            self.link,
            self,
            content=content,
            context_id=context_id,
            poll_interval=self.poll_interval,
        )
        self._box[0] = follower

    # --- reading and answering ------------------------------------------------------------

    @property
    def current(self) -> PromptCard | None:
        """The card of the prompt that is open now, if any."""
        with self._lock:
            if self.cards and self.cards[-1].is_open:
                return self.cards[-1]
        return None

    @property
    def following(self) -> bool:
        """True while the task is followed in the background."""
        follower = self._box[0]
        return follower is not None and follower.running

    @property
    def trace(self) -> Trace | None:
        """The client's wire trace (start with ``trace=True``), else None."""
        return self.client.trace

    def answer(
        self,
        payload: Mapping[str, Any] | str,
        *,
        responder: str | None = None,
        override: bool = False,
        timeout: float | None = 300.0,
        validate: bool = True,
    ) -> Outcome:
        """Answer the open prompt from code; block until the agent has moved on.

        When the agent is still working towards its first (or next) prompt, waits for
        it (up to ``timeout`` seconds). A ``str`` answers a plain-text question. See
        :meth:`PromptCard.answer` for ``responder``, ``override``, ``timeout`` and
        ``validate`` (``False`` sends a payload the form would refuse, to test the 422).
        """
        if isinstance(payload, str):
            question = self.question
            if question is None or not question.is_open:
                raise HitlError("no plain-text question is open; answer prompts with a dict")
            return question.answer(payload, timeout=timeout)
        card = self.current
        if card is None and self.following and self.task is not None:
            state = self.task.status.state
            if not (state.is_terminal or state.is_interrupted):
                card = self._wait_prompt(timeout)
        if card is None:
            state_name = self.task.status.state.name if self.task else "unknown"
            raise HitlError(f"no prompt is open: the task is {state_name}")
        return card.answer(
            payload, responder=responder, override=override, timeout=timeout, validate=validate
        )

    def _wait_prompt(self, timeout: float | None) -> PromptCard | None:
        with self._lock:
            if self.current is not None:
                return self.current
            pending = self._prompt_future
        try:
            return wait_blocking(lambda: pending, timeout)
        except TimeoutError:
            return None

    def next_prompt(self, timeout: float | None = None) -> PromptCard:
        """The open prompt's card, waiting for the agent's next prompt when none is open.

        Blocks up to ``timeout`` seconds (``TimeoutError`` then); raises
        :class:`~hitl_nb.errors.HitlError` when the task ends without another prompt.
        In a cell, ``await chat.next_prompt_async(timeout)`` waits the same way.
        """
        with self._lock:
            card = self.current
            pending = self._prompt_future
            over = self._no_more_prompts()
        if card is None and not over:
            card = wait_blocking(lambda: pending, timeout)
        return self._prompt_or_raise(card)

    async def next_prompt_async(self, timeout: float | None = None) -> PromptCard:
        """``await`` form of :meth:`next_prompt`."""
        with self._lock:
            card = self.current
            pending = self._prompt_future
            over = self._no_more_prompts()
        if card is None and not over:
            card = await wait_async(lambda: pending, timeout)
        return self._prompt_or_raise(card)

    def _no_more_prompts(self) -> bool:
        task = self.task
        return (
            self.message is not None
            or (task is not None and task.status.state.is_terminal)
            or self._link_state[0] in ("stopped", "lost")
        )

    def _prompt_or_raise(self, card: PromptCard | None) -> PromptCard:
        if card is not None:
            return card
        state = self.task.status.state.name if self.task else "unknown"
        follow = self._link_state[1] or self._link_state[0]
        raise HitlError(f"no further prompt: the task is {state} ({follow})")

    def refresh(self) -> Task:
        """Read the task again (GetTask) and show what changed."""
        if self.task is None:
            raise HitlError("no task to refresh: the agent has not named one")
        task = self.link.run(self.link.client.get_task(self.task.id), 60.0)
        self.receive(TaskEvent(task))
        return task

    # --- what the follower tells -------------------------------------------------------

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

    def receive(self, event: ClientEvent, prompt: Prompt | None = None) -> None:
        """Apply one event; :attr:`events` logs each event once.

        ``prompt`` is the prompt a status carries, as the client read it (the follower
        hands each status with its own). The same status seen twice (a replayed event,
        a GetTask snapshot of a status a stream already brought) is logged once; a
        snapshot older than the status shown is not applied.
        """
        with self._lock:
            fresh = self._first_time(event)
            if fresh:
                self.events.append(event)
                if prompt is not None:
                    self.events.append(prompt)
            elif event_id_of(event) is not None:
                return  # a replay: applied already
            if isinstance(event, TaskEvent):
                self._on_task(event, prompt)
            elif isinstance(event, StatusEvent):
                if fresh or not self._older(event.status.timestamp):
                    self._on_status(event, prompt)
            elif isinstance(event, ArtifactEvent):
                self._on_artifact(event)
            elif isinstance(event, MessageEvent):
                self._on_message(event)
            else:
                self._on_prompt(event)
            self._render()

    def drawn(self) -> None:
        """Return once the event being applied, if any, is drawn. A card settles while
        the conversation applies the status that settles it, and the conversation's own
        widgets are redrawn at the end of that update: a card's wait returns after it."""
        with self._lock:
            pass

    def answer_accepted(self, card: Any, result: Any) -> None:
        """A card's answer was accepted: show the task as the agent returned it, look again.

        The follower may have seen the task move on while the answer was on its way
        (the card was still sending then, so it did not settle): the card settles now,
        since a follower that has seen the last state looks no more.
        """
        if isinstance(result, Task):
            self.receive(TaskEvent(result))
        with self._lock:
            task, moved_on = self.task, self._moved_past(card)
        follower = self._box[0]
        if not moved_on and follower is not None and follower.running:
            follower.wake()
        elif task is not None:
            card.settled(task)

    def _moved_past(self, card: Any) -> bool:
        """The task as last seen has left ``card``'s prompt: it ended, or (a prompt
        card) waits on another prompt or question."""
        if self.task is None:
            return False
        state = self.task.status.state
        if state.is_terminal:
            return True
        if not isinstance(card, PromptCard) or not state.is_interrupted:
            return False
        prompt = self._prompt
        return not (isinstance(prompt, PromptEvent) and prompt.prompt_id == card.prompt_id)

    # --- one method per event -----------------------------------------------------------

    def _on_task(self, event: TaskEvent, prompt: Prompt | None) -> None:
        """A whole-task snapshot (a stream's first event, GetTask, a send's result).

        One older than the status shown is not applied, nor one that is not final after
        a final one (a task in a terminal state stays there): a send's result, the
        task as it was when the answer arrived, can be read after the follower saw the
        task end, with the same timestamp to the millisecond."""
        shown = self.task.status.state if self.task is not None else None
        if self._older(event.task.status.timestamp) or (
            shown is not None and shown.is_terminal and not event.task.status.state.is_terminal
        ):
            return
        task = copy.deepcopy(event.task)
        self._apply_status(task, self._prompt_for(task, prompt))

    def _on_status(self, event: StatusEvent, prompt: Prompt | None) -> None:
        """The task changed state (a stream's status update)."""
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
        self._apply_status(task, self._prompt_for(task, prompt))

    def _on_artifact(self, event: ArtifactEvent) -> None:
        """An artifact, or a chunk of one (appended to the artifact of the same id)."""
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

    def _on_message(self, event: MessageEvent) -> None:
        """The agent answered with a message, not a task: nothing more to follow."""
        self.message = event.message
        self._known.set()
        self._settled.set()
        self._resolve_prompt(None)

    def _on_prompt(self, event: PromptEvent | MalformedPromptEvent) -> None:
        """A prompt on its own (the follower hands each with its status): nothing to do,
        the status that carries it was applied just before, its envelope checked."""

    def _prompt_for(self, task: Task, given: Prompt | None) -> Prompt | None:
        """The prompt ``task``'s status carries, each envelope checked once: the one the
        client read (``given``), the one shown when it is the status shown, else read
        here (a snapshot the notebook read itself, GetTask)."""
        if given is not None:
            return given
        if _status_key(task.status) == self._status_key:
            return self._prompt
        found = prompt_of(task)
        return found if isinstance(found, PromptEvent | MalformedPromptEvent) else None

    def _apply_status(self, task: Task, prompt: Prompt | None) -> None:
        """Show ``task`` (its status carrying ``prompt``); the cards follow it."""
        if self.task is None and not task.status.state.is_terminal:
            if self.gateway is not None:
                self._register(task.id)
            else:
                self.link.submit(self._watch(task.id))
        previous = self.task
        if previous is not None and previous.status.state is not task.status.state:
            self._since = time.monotonic()
        if previous is not None and not task.artifacts and previous.artifacts:
            task.artifacts = previous.artifacts  # a status update does not drop artifacts
        self.task = task
        self._prompt = prompt
        self._status_key = _status_key(task.status)
        self._known.set()
        state = task.status.state
        last = self.cards[-1] if self.cards else None
        if isinstance(prompt, PromptEvent):
            if last is None or last.prompt_id != prompt.prompt_id:
                if last is not None:
                    self._leave(last, task)
                self._add_card(task, prompt)
            else:
                left = seconds_left(last.envelope)
                if left is not None and left <= 0:
                    last.deadline_passed(still_open=True)  # S-4: the agent keeps it open
                if last.is_open:
                    last.show_count()  # the gateway's consensus count
            self.malformed = None
        else:
            if isinstance(prompt, MalformedPromptEvent):
                self.malformed = prompt
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
            self.link,
            task,
            event.envelope,
            responder=self.responder,
            ui=self.ui,
            watcher=self,
            gateway=self.gateway,
            registration=self.registration,
        )
        if self.watched is not None:
            card.watch(*self.watched)
        card.show_count()
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
            and self._prompt is None
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
            content_key = _status_key(status)
            seen = content_key in self._seen_keys
            self._seen_keys.add(content_key)
            if event_id is None or isinstance(event, TaskEvent):
                return not seen
        return True

    # --- the gateway (S-3) -------------------------------------------------------------

    def _register(self, task_id: str) -> None:
        """Register the task with the gateway, in the background (the cell goes on)."""
        agent = self.link.client.agent
        if self._registering or self.gateway is None:
            return
        if not isinstance(agent, str):
            self.registration_error = (
                "the responder gateway needs the agent's URL; this conversation was made "
                "from an agent card, so its task is not registered there"
            )
            return
        self._registering = True
        self.link.submit(self._register_async(self.gateway, agent, task_id))

    async def _register_async(self, gateway: GatewayLink, agent: str, task_id: str) -> None:
        try:
            registration = await gateway.register(agent, task_id)
        except HitlError as exc:
            # Said on the card at the first answer (which tries again), not raised here.
            self.registration_error = f"{exc}"
            return
        finally:
            self._registering = False
        self.registration_error = None
        self.registration = registration
        listen(gateway, registration, self)  # the gateway's feed says when it is answered
        for card in self.cards:
            card.registered(registration)

    async def _watch(self, task_id: str) -> None:
        """Have the kernel's gateway watch the task (the cards still answer directly)."""
        found = await announce(self.link.client.agent, task_id)
        if found is None:
            return
        self.watched = found
        listen(*found, self)  # answered in the prompts panel: the feed says so at once
        for card in self.cards:
            card.watch(*found)

    # --- the gateway's feed (._feed_waker) --------------------------------------------------

    @property
    def listening(self) -> bool:
        """Does this conversation still look at its task (for the gateway's feed)?"""
        follower = self._box[0]
        return not self._closed and (follower is None or follower.running)

    def heard(self) -> None:
        """The gateway's feed says the task's prompt changed: look at the task now."""
        follower = self._box[0]
        if follower is not None and follower.running:
            follower.wake()

    # --- stopping -------------------------------------------------------------------------

    def stop_following(self, reason: str) -> None:
        """Stop the background work (answers can still be given from the cards)."""
        follower = self._box[0]
        if follower is not None and follower.running:
            follower.stop()
            self.link_state("stopped", reason)
            for card in self.cards:
                card.stop(reason)

    def close(self) -> None:
        """Stop following; close the client when the conversation made it (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self.stop_following("the conversation was closed")
        self.link.close()

    def __enter__(self) -> Conversation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- display ------------------------------------------------------------------------

    def _render(self) -> None:
        cards: list[Any] = [c.widget for c in self.cards]
        if self.question is not None:
            cards.append(self.question.widget)
        children = (*cards, self.notice, self.said, self.artifacts)
        if tuple(self.widget.children) != children:
            self.widget.children = children
        self.notice.value = _STYLE + self._state_html()
        self.said.value = self._said_html()
        self.artifacts.value = artifacts_html(self.task.artifacts) if self.task else ""

    def _state_html(self) -> str:
        link, detail = self._link_state
        parts = []
        if self.malformed is not None:
            words = esc(malformed_words(self.malformed))
            parts.append(f'<div style="color:{COLORS["error"]}">{words}</div>')
        task = self.task
        if task is None:
            if self.message is None:
                parts.append(f'<div style="color:{MUTED}">starting…</div>')
        else:
            state = task.status.state
            if state in _ENDED_WORDS:
                kind, word = _ENDED_WORDS[state]
                parts.append(f'<div style="color:{COLORS[kind]}"><b>{word}</b></div>')
            elif not state.is_interrupted:
                clock = (
                    ""
                    if stable_output()
                    else " for " + css_elapsed(time.monotonic() - self._since, "")
                )
                parts.append(f"<div><b>Working</b>{clock}</div>")
            if link == "reconnecting":
                parts.append(
                    f'<div style="color:{COLORS["warn"]}">reconnecting: {esc(detail)}</div>'
                )
            elif link in ("stopped", "lost") and detail and not state.is_terminal:
                kind = "error" if link == "lost" else "warn"
                parts.append(
                    f'<div style="color:{COLORS[kind]}">Not following the task any more: '
                    f"{esc(detail)}</div>"
                )
        return "".join(parts)

    def _said_html(self) -> str:
        if self.message is not None:
            return f"<div><b>The agent answered:</b>{parts_html(self.message.parts)}</div>"
        task = self.task
        if task is None or task.status.message is None or self._prompt is not None:
            return ""
        if self.question is not None and self.question.is_open:
            return ""
        words = parts_html(task.status.message.parts)
        return (
            f'<div class="hitl-agent-message"><b>The agent says:</b>{words}</div>' if words else ""
        )

    def to_text(self) -> str:
        """The conversation as plain text (what nbconvert and nbval read)."""
        blocks = [card.to_text() for card in self.cards]
        if self.question is not None:
            blocks.append(self.question.to_text())
        if self.malformed is not None:
            blocks.append(malformed_words(self.malformed))
        if self.message is not None:
            blocks.append(f"the agent answered: {message_text(self.message)}")
        task = self.task
        open_question = self.question is not None and self.question.is_open
        if task is None and self.message is None:
            blocks.append("starting")
        elif task is not None and self.current is None and not open_question:
            blocks.append(f"the task is {task.status.state.name}")
            said = message_text(task.status.message).strip()
            if said and self._prompt is None:
                blocks.append(f"the agent says: {said}")
            blocks += artifacts_text(task.artifacts)
        link, detail = self._link_state
        if link == "reconnecting":
            blocks.append(f"reconnecting: {detail}")
        return "\n".join(blocks)

    def __repr__(self) -> str:
        state = self.task.status.state.name if self.task else "no task"
        return f"<Conversation {len(self.cards)} prompt(s), task {state}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        if self.task is not None:
            place(self.link.client.agent, self.task.id)  # where the prompts panel shows it
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.to_text()
        return bundle


def event_id_of(event: ClientEvent) -> str | None:
    """The event's id on the wire (None when the agent does not number its events)."""
    value = getattr(event, "event_id", None)
    return value if isinstance(value, str) else None


def malformed_words(event: MalformedPromptEvent) -> str:
    """Why a prompt cannot be answered, for a person: each error the check found with
    the spec section it breaks (not the envelope's JSON Pointers)."""
    errors = [f for f in event.findings if f.severity == "error"]
    if errors:
        why = "; ".join(f"{f.message} ({f.section})" for f in errors)
    else:
        why = event.reason.removeprefix("malformed prompt envelope: ")
    return f"The agent sent a prompt that cannot be answered safely: {why}"


def _status_key(status: TaskStatus) -> tuple[object, ...]:
    """What tells two statuses apart: state, time and message."""
    message = status.message.message_id if status.message is not None else None
    return (status.state, status.timestamp, message)


def _instant(timestamp: str) -> datetime:
    parsed = parse_rfc3339(timestamp)
    return parsed if parsed is not None else datetime.min.replace(tzinfo=timezone.utc)


def _as_message(result: Any) -> ClientEvent:
    if isinstance(result, Message):
        return MessageEvent(result)
    raise TypeError(
        f"a Conversation is built from a Task or a Message, not {type(result).__name__}"
    )


def _forget(box: list[Follower | None], link: Link) -> None:
    # The conversation was garbage-collected: stop its follower, close its own client.
    follower = box[0]
    if follower is not None:
        follower.stop()
    try:
        link.close()
    except Exception:  # best effort at garbage collection
        pass
