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

In a Jupyter server with the hitl-nb extension whose users have names (JupyterHub), the
cards answer through the server's responder gateway (``gateway=``, see
:mod:`._gateway_link`): the conversation registers its task there as soon as the agent
names it, and the server says who is answering (S-3).

This module is the part a cell calls: starting or attaching, answering from code,
waiting for the next prompt, stopping. :class:`Conversation` reads the rest from its
bases: :mod:`._conversation_events` (what the follower brings, applied once; the cards
follow the task), :mod:`._conversation_gateway` (the task registered with the gateway)
and :mod:`._conversation_view` (what it shows, as a widget and as text).
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
import weakref
from collections import deque
from collections.abc import Mapping
from typing import Any

import ipywidgets as W

from hitl_nb._waiting import wait_async, wait_blocking
from hitl_nb.a2a import Message, Task
from hitl_nb.client import (
    ClientEvent,
    MalformedPromptEvent,
    MessageEvent,
    SyncHitlClient,
    TaskEvent,
    Trace,
)
from hitl_nb.errors import AgentTimeout, HitlError

from ._card import PromptCard
from ._conversation_events import TaskEvents
from ._follower import Follower
from ._gateway_link import GatewayChoice, GatewayLink, gateway_link
from ._link import Link
from ._outcome import Outcome
from ._question import QuestionCard
from ._worker import track

__all__ = ["Conversation"]

#: How many events a conversation keeps in :attr:`Conversation.events`.
MAX_EVENTS = 2000


class Conversation(TaskEvents):
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
        self._link_state = ("", "")
        #: How the task was followed, in order: ``(state, detail)`` (the last 100).
        self.link_log: deque[tuple[str, str]] = deque(maxlen=100)
        self._since = time.monotonic()
        self._closed = False
        self._box: list[Follower | None] = [None]
        self.notice = W.HTML(value="")
        self.notice.add_class("hitl-conversation-state")
        self.said = W.HTML(value="")
        self.said.add_class("hitl-agent-says")
        self.artifacts = W.HTML(value="")
        self.artifacts.add_class("hitl-artifacts")
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
        :class:`~hitl_nb.client.HitlClient` when ``agent`` is a URL. ``gateway``: see
        :class:`Conversation`.
        """
        link = Link(agent, client_options)
        try:
            chat = cls(link, responder=responder, ui=ui, poll_interval=poll_interval,
                       follow=False, gateway=gateway)  # fmt: skip
        except BaseException:
            link.close()
            raise
        chat._follow(content=content, context_id=context_id)
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
        """
        link = Link(agent, client_options)
        try:
            task = link.run(link.client.get_task(task_id), start_timeout)
        except BaseException:
            link.close()
            raise
        try:
            return cls(link, task, responder=responder, ui=ui, poll_interval=poll_interval,
                       gateway=gateway)  # fmt: skip
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
            self.link, self, content=content, context_id=context_id,
            poll_interval=self.poll_interval,
        )  # fmt: skip
        self._box[0] = follower

    # --- reading and answering (what the follower tells: ._conversation_events) ----------

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

    # --- display: see ConversationView (._conversation_view) ---------------------------

    @property
    def trace(self) -> Trace | None:
        """The client's wire trace (start with ``trace=True``), else None."""
        return self.client.trace


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
