"""Conversation: one task and its prompts, answered in the notebook.

::

    from hitl_nb.notebook import Conversation
    chat = Conversation.start(agent_url, {"scenario": "approval"})
    chat                                   # the prompt as a card with its form
    chat.answer({"approved": True})        # ... or answer from code (tests, nbval)

An accepted answer brings the next prompt's card, or the task's final state and
artifacts. An answer given from code (``answer()``) blocks until the agent has moved on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import ipywidgets as W

from hitl_nb.a2a import Task, TaskState
from hitl_nb.client import MalformedPromptEvent, PromptEvent, SyncHitlClient, prompt_of
from hitl_nb.errors import HitlError

from ._card import PromptCard
from ._outcome import Outcome
from ._style import COLORS, esc

__all__ = ["Conversation"]


class Conversation:
    """One task and its prompts, answered in the notebook.

    Start one with :meth:`start` (sends the first message) or build it from a send
    result. Each accepted answer adds the next prompt's card, or the task's final
    state and artifacts when it is done.
    """

    def __init__(
        self,
        client: SyncHitlClient,
        result: Any,
        *,
        responder: str | None = None,
        ui: Mapping[str, Any] | None = None,
    ) -> None:
        self.client = client
        self.responder = responder
        self.ui = ui
        self.cards: list[PromptCard] = []
        self.task: Task | None = None
        self.notice = W.HTML(value="")
        self.notice.add_class("hitl-conversation-state")
        self.widget = W.VBox([self.notice])
        self.widget.add_class("hitl-conversation")
        self._advance(result)

    @classmethod
    def start(
        cls,
        agent: str | SyncHitlClient,
        content: Any = "approval",
        *,
        responder: str | None = None,
        ui: Mapping[str, Any] | None = None,
        **client_options: Any,
    ) -> Conversation:
        """Send ``content`` to ``agent`` (a URL or a client) and follow the task.

        ``content`` is text, a data part (a dict, e.g. ``{"scenario": "approval"}`` for
        the mock agent) or a Message. ``client_options`` go to
        :class:`~hitl_nb.client.SyncHitlClient` when ``agent`` is a URL.
        """
        client = agent if isinstance(agent, SyncHitlClient) else SyncHitlClient(
            agent, **client_options
        )  # fmt: skip
        return cls(client, client.send(content), responder=responder, ui=ui)

    @property
    def current(self) -> PromptCard | None:
        """The card of the prompt that is open now, if any."""
        if (
            self.cards
            and self.task is not None
            and self.task.status.state is TaskState.INPUT_REQUIRED
        ):
            card = self.cards[-1]
            if card.outcome is None or card.outcome.status != "accepted":
                return card
        return None

    def answer(
        self, payload: Mapping[str, Any], *, responder: str | None = None, validate: bool = True
    ) -> Outcome:
        """Answer the open prompt from code; see :meth:`PromptCard.answer`
        (``validate=False`` sends a payload the form would refuse, to test the 422)."""
        card = self.current
        if card is None:
            state = self.task.status.state.name if self.task else "unknown"
            raise HitlError(f"no prompt is open: the task is {state}")
        return card.answer(payload, responder=responder, validate=validate)

    def refresh(self) -> Task:
        """Read the task again (GetTask) and show what changed."""
        assert self.task is not None
        task = self.client.get_task(self.task.id)
        self._advance(task)
        return task

    def _on_outcome(self, outcome: Outcome) -> None:
        if outcome.status == "accepted" and outcome.task is not None:
            self._advance(outcome.task)

    def _advance(self, result: Any) -> None:
        if not isinstance(result, Task):
            text = json.dumps(getattr(result, "parts", None), default=str)[:500]
            self.notice.value = f"<div>The agent answered with a message: {esc(text)}</div>"
            return
        self.task = result
        event = prompt_of(result)
        if isinstance(event, PromptEvent):
            known = {card.prompt_id for card in self.cards}
            if event.prompt_id not in known:
                card = PromptCard(
                    self.client, result, event.envelope, responder=self.responder, ui=self.ui
                )
                card.on_outcome(self._on_outcome)
                self.cards.append(card)
                self.widget.children = (*[c.widget for c in self.cards], self.notice)
            self.notice.value = ""
        elif isinstance(event, MalformedPromptEvent):
            self.notice.value = (
                f'<div style="color:{COLORS["error"]}">The agent sent a malformed prompt: '
                f"{esc(event.reason)}</div>"
            )
        else:
            self.notice.value = self._state_html(result)

    def _state_html(self, task: Task) -> str:
        parts = [f"<div>Task <code>{esc(task.id)}</code> is <b>{task.status.state.name}</b></div>"]
        for artifact in task.artifacts or []:
            for part in artifact.parts:
                body = part.text if part.text is not None else json.dumps(part.data, indent=2)
                parts.append(f"<pre>{esc(body)}</pre>")
        return "".join(parts)

    def to_text(self) -> str:
        """The conversation as plain text."""
        blocks = [card.to_text() for card in self.cards]
        if self.task is not None and self.current is None:
            blocks.append(f"task is {self.task.status.state.name}")
            for artifact in self.task.artifacts or []:
                for part in artifact.parts:
                    data = part.text if part.text is not None else json.dumps(part.data)
                    blocks.append(f"artifact: {data}")
        return "\n".join(blocks)

    def __repr__(self) -> str:
        state = self.task.status.state.name if self.task else "no task"
        return f"<Conversation {len(self.cards)} prompt(s), task {state}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.to_text()
        return bundle

    def close(self) -> None:
        """Close the client (when the conversation created it)."""
        self.client.close()
