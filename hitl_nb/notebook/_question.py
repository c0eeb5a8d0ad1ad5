"""An agent's plain-text question, answered with text (the A2A way).

An agent that did not activate hitl-prompt/v1 (or a client that did not ask for it)
still reaches INPUT_REQUIRED with a status message; A2A's answer is a message with text
in the same task. The card shows the question as text (S-1) and sends what is typed.
"""

from __future__ import annotations

import concurrent.futures
import threading
import weakref
from typing import Any, Protocol

import ipywidgets as W

from hitl_nb._waiting import wait_blocking
from hitl_nb.a2a import Task
from hitl_nb.errors import HitlError

from ._link import Link
from ._outcome import Outcome, OutcomeRecord, status_html
from ._parts import message_text
from ._style import MUTED, esc

__all__ = ["QuestionCard"]


class _Watcher(Protocol):
    @property
    def following(self) -> bool: ...

    def answer_accepted(self, card: Any, result: Any) -> None: ...


class QuestionCard(OutcomeRecord):
    """A question without an envelope: its text, a text box, Send, and the outcome."""

    def __init__(self, link: Link, task: Task, watcher: _Watcher | None = None) -> None:
        self.link = link
        self.task = task
        self.question = message_text(task.status.message).strip()
        self.outcomes: list[Outcome] = []
        self.state = "open"
        self._watcher = weakref.ref(watcher) if watcher is not None else None
        self._lock = threading.RLock()
        self._next: concurrent.futures.Future[Outcome] = concurrent.futures.Future()
        header = W.HTML(
            value=f'<div style="white-space:pre-wrap;font-weight:600">{esc(self.question)}</div>'
            f'<div style="font-size:smaller;color:{MUTED}">a question in plain text (the '
            "agent sent no hitl-prompt/v1 envelope): answer with text</div>"
        )
        header.add_class("hitl-card-prompt")
        self.text = W.Textarea(placeholder="your answer", layout=W.Layout(width="100%"))
        self.text.add_class("hitl-question-answer")
        self.send_button = W.Button(description="Send", button_style="primary")
        self.send_button.add_class("hitl-submit")
        self.send_button.on_click(lambda _b: self._click())
        self.status = W.HTML(value="")
        self.status.add_class("hitl-card-status")
        self.widget = W.VBox([header, self.text, self.send_button, self.status])
        self.widget.add_class("hitl-card")
        self.widget.add_class("hitl-question")

    @property
    def is_open(self) -> bool:
        """True while an answer may still be sent (not while one is on its way)."""
        return self.state == "open"

    def _click(self) -> None:
        if self.text.value.strip():
            self._submit(self.text.value)

    def answer(self, text: str, *, timeout: float | None = 300.0) -> Outcome:
        """Send ``text`` as the answer; block until the agent moved on (or ``timeout``)."""
        if not isinstance(text, str) or not text.strip():
            return self._record(Outcome("invalid", "the answer is empty; nothing was sent"))
        self.text.value = text
        pending = self._submit(text)
        if pending is None:
            assert self.outcome is not None
            return self.outcome
        try:
            return wait_blocking(lambda: pending, timeout)
        except TimeoutError:
            with self._lock:
                self.state = "done"
            return self._record(Outcome(
                "accepted", f"the agent took the answer but has not continued after {timeout} s",
                self.task))  # fmt: skip

    def _submit(self, text: str) -> concurrent.futures.Future[Outcome] | None:
        with self._lock:
            if self.state != "open":
                self._record(Outcome("failed", "this question is closed; nothing was sent"))
                return None
            self.state = "sending"
            pending = self._next
        self.text.disabled = self.send_button.disabled = True
        self.status.value = status_html("info", "sending", "the answer is on its way")
        self.link.submit(self._send(text))
        return pending

    async def _send(self, text: str) -> None:
        watcher = self._watcher() if self._watcher is not None else None
        following = watcher is not None and watcher.following
        try:
            result = await self.link.client.send(
                text, task_id=self.task.id, context_id=self.task.context_id,
                return_immediately=following,
            )  # fmt: skip
        except HitlError as exc:
            with self._lock:
                self.state = "open"
            self.text.disabled = self.send_button.disabled = False
            self._record(Outcome("failed", f"the answer could not be delivered: {exc}"))
            return
        with self._lock:
            self.state = "accepted"
        self.status.value = status_html("ok", "accepted", "the agent took the answer; waiting…")
        if following and watcher is not None:
            watcher.answer_accepted(self, result)
        else:
            self.settled(result if isinstance(result, Task) else self.task)

    def settled(self, task: Task) -> None:
        """The agent moved on after the answer."""
        with self._lock:
            if self.state != "accepted":
                return
            self.state = "done"
        self.task = task
        self._record(Outcome(
            "accepted", f"the agent took the answer; the task is now {task.status.state.name}",
            task))  # fmt: skip

    def closed_by(self, task: Task) -> None:
        """The task moved on without this answer."""
        with self._lock:
            if self.state != "open":
                return
            self.state = "done"
        self.text.disabled = self.send_button.disabled = True
        state = task.status.state.name
        self._record(Outcome("closed", f"the task moved on without this answer ({state})", task))

    def to_text(self) -> str:
        """The question as plain text."""
        lines = [f"? {self.question}", "  (plain-text question: answer with text)"]
        if self.outcome is not None:
            lines.append("  " + str(self.outcome))
        return "\n".join(lines)
