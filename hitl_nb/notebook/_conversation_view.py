"""What a conversation shows: its cards, the task's state, what the agent says.

The widget stacks the prompt cards (and a plain-text question's card) above three lines:
the task's state (working and for how long, completed, failed, "reconnecting"), the
agent's own words (its status message, or a direct answer) and its artifacts. The same
content as plain text is what nbconvert and nbval read (``text/plain``).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import ipywidgets as W

from hitl_nb._display import stable_output
from hitl_nb.a2a import Message, Task, TaskState
from hitl_nb.client import MalformedPromptEvent, prompt_of

from ._card import PromptCard
from ._clock import css_elapsed
from ._parts import artifacts_html, artifacts_text, message_text, parts_html
from ._question import QuestionCard
from ._style import COLORS, MUTED, esc

__all__ = ["ConversationView"]

_ENDED_WORDS = {
    TaskState.COMPLETED: ("ok", "Completed"),
    TaskState.FAILED: ("error", "Failed"),
    TaskState.CANCELED: ("error", "Canceled"),
    TaskState.REJECTED: ("error", "Rejected"),
}


class ConversationView:
    """The display half of :class:`~hitl_nb.notebook.Conversation` (its base class).

    The attributes below are set by ``Conversation.__init__``.
    """

    cards: list[PromptCard]
    question: QuestionCard | None
    task: Task | None
    message: Message | None
    malformed: MalformedPromptEvent | None
    #: How the task is followed now: ``(state, detail)``.
    _link_state: tuple[str, str]
    #: When the task entered its present state (``time.monotonic()``).
    _since: float
    _lock: threading.RLock
    notice: W.HTML
    said: W.HTML
    artifacts: W.HTML
    widget: W.VBox

    @property
    def current(self) -> PromptCard | None:
        """The card of the prompt that is open now, if any."""
        with self._lock:
            if self.cards and self.cards[-1].is_open:
                return self.cards[-1]
        return None

    def _render(self) -> None:
        cards: list[Any] = [c.widget for c in self.cards]
        if self.question is not None:
            cards.append(self.question.widget)
        children = (*cards, self.notice, self.said, self.artifacts)
        if tuple(self.widget.children) != children:
            self.widget.children = children
        self.notice.value = self._state_html()
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
        if task is None or task.status.message is None or prompt_of(task) is not None:
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
            blocks.append(f"task is {task.status.state.name}")
            said = message_text(task.status.message).strip()
            if said and prompt_of(task) is None:
                blocks.append(f"agent: {said}")
            blocks += artifacts_text(task.artifacts)
        link, detail = self._link_state
        if link == "reconnecting":
            blocks.append(f"reconnecting: {detail}")
        return "\n".join(blocks)

    def __repr__(self) -> str:
        state = self.task.status.state.name if self.task else "no task"
        return f"<Conversation {len(self.cards)} prompt(s), task {state}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.to_text()
        return bundle


def malformed_words(event: MalformedPromptEvent) -> str:
    """Why a prompt cannot be answered, for a person: each error the check found with
    the spec section it breaks (not the envelope's JSON Pointers)."""
    errors = [f for f in event.findings if f.severity == "error"]
    if errors:
        why = "; ".join(f"{f.message} ({f.section})" for f in errors)
    else:
        why = event.reason.removeprefix("malformed prompt envelope: ")
    return f"The agent sent a prompt that cannot be answered safely: {why}"
