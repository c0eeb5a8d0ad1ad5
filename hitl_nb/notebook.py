"""What a notebook cell calls: ask an agent, answer its prompts in forms, see the outcome.

::

    from hitl_nb.notebook import Conversation
    chat = Conversation.start(agent_url, {"scenario": "approval"})
    chat                                   # the prompt as a card with its form
    chat.answer({"approved": True})        # ... or answer from code (tests, nbval)

Each prompt becomes a :class:`PromptCard`: the question as escaped plain text (S-1),
its deadline and responders, the form generated from its ``response_schema``, and a
status line saying what the agent did with the answer: accepted, 409 (already answered
or unknown), 422 (its ``validation_errors`` shown on the fields), or held / refused by
the responder policy (S-3). A :class:`Conversation` follows one task: an accepted answer
brings the next prompt's card, or the task's final state and artifacts.

An answer given from code (``answer()``) blocks until the agent has moved on: the client
sends a blocking answer and returns once the task is interrupted again or terminal. An
answer given by a click is sent from a worker thread, so the kernel stays free while the
agent works; ``card.wait()`` blocks until its outcome is in.
"""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import ipywidgets as W

from .a2a._model import Task, TaskState
from .client import MalformedPromptEvent, PromptEvent, SyncHitlClient, prompt_of
from .errors import HitlError, PromptConflict, ResponseInvalid
from .forms import Form, FormValueError
from .policy import ResponderGate, current_responder
from .spec import PromptEnvelope

__all__ = ["Conversation", "Outcome", "PromptCard"]

Status = Literal["accepted", "held", "refused", "invalid", "conflict", "failed"]

_COLORS = {
    "accepted": "#1b5e20",
    "held": "#8a6d00",
    "refused": "#b00020",
    "invalid": "#b00020",
    "conflict": "#b00020",
    "failed": "#b00020",
}


@dataclass(frozen=True)
class Outcome:
    """What became of one answer.

    ``status``: ``accepted`` (the agent took it), ``held`` (a consensus is still
    gathering), ``refused`` (the responder may not answer, S-3), ``invalid`` (checked
    locally or 422 from the agent: see ``validation_errors``), ``conflict`` (409: the
    prompt was answered already or is unknown) or ``failed`` (the agent could not be
    reached, or answered with another error).
    """

    status: Status
    message: str
    task: Task | None = None
    validation_errors: list[dict[str, Any]] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"{self.status}: {self.message}"]
        lines += [f"  {e.get('path') or '/'}: {e.get('message')}" for e in self.validation_errors]
        return "\n".join(lines)


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


class PromptCard:
    """One prompt: its question, its form, and what the agent did with the answer.

    ``responder`` is who is answering (default: ``JUPYTERHUB_USER``); it is checked
    against the prompt's ``allowed_responders`` before anything is sent (S-3).
    ``on_outcome(callback)`` calls ``callback(outcome)`` after every answer.
    """

    def __init__(
        self,
        client: SyncHitlClient,
        task: Task,
        envelope: PromptEnvelope,
        *,
        responder: str | None = None,
        ui: Mapping[str, Any] | None = None,
    ) -> None:
        self.client = client
        self.task = task
        self.envelope = envelope
        self.responder = current_responder(responder)
        self.gate = ResponderGate(envelope.responders)
        self.form = Form(envelope.response_schema, ui=ui)
        self.outcomes: list[Outcome] = []
        self._callbacks: list[Callable[[Outcome], Any]] = []
        self._pending_responder: str | None = None
        self._from_code = False
        self._worker: threading.Thread | None = None
        self.status = W.HTML(value="")
        self.status.add_class("hitl-card-status")
        header = W.HTML(value=self._header_html())
        header.add_class("hitl-card-prompt")
        self.widget = W.VBox([header, self.form.widget, self.status])
        self.widget.add_class("hitl-card")
        self.form.on_submit(self._on_form_submit)

    # --- reading --------------------------------------------------------------------------

    @property
    def prompt_id(self) -> str:
        """The prompt's correlation id."""
        return self.envelope.prompt_id

    @property
    def outcome(self) -> Outcome | None:
        """The last answer's outcome (None before any answer)."""
        return self.outcomes[-1] if self.outcomes else None

    def on_outcome(self, callback: Callable[[Outcome], Any]) -> None:
        """Call ``callback(outcome)`` after every answer."""
        self._callbacks.append(callback)

    # --- answering ------------------------------------------------------------------------

    def answer(self, payload: Mapping[str, Any], *, responder: str | None = None) -> Outcome:
        """Fill the form with ``payload`` and submit it, as a person would.

        Returns the :class:`Outcome`. A payload the form cannot hold, or one that does not
        validate, comes back as ``invalid`` with its issues; nothing is sent then.
        """
        try:
            self.form.value = dict(payload)
        except FormValueError as exc:
            return self._record(Outcome("invalid", f"the form cannot hold this value: {exc}"))
        if not self.form.is_valid:
            issues = [e.to_json() for e in self.form.errors]
            return self._record(
                Outcome(
                    "invalid",
                    "the answer does not match the schema; nothing was sent",
                    validation_errors=issues,
                )  # fmt: skip
            )
        self._from_code = True
        self._pending_responder = responder
        try:
            self.form.submit()
        finally:
            self._from_code = False
            self._pending_responder = None
        assert self.outcome is not None
        return self.outcome

    def wait(self, timeout: float | None = None) -> Outcome | None:
        """Block until an answer sent by a click has its outcome (None on timeout)."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
        return self.outcome

    def _on_form_submit(self, payload: dict[str, Any]) -> None:
        from_code = self._from_code
        responder = self._pending_responder or self.responder
        decision = self.gate.submit(responder, payload)
        if decision.action == "refuse":
            self._reopen()
            self._record(Outcome("refused", decision.reason))
            return
        if decision.action == "hold":
            self._reopen()
            self._record(Outcome("held", f"{decision.reason}; waiting for more responders"))
            return
        assert decision.payload is not None
        if from_code:
            self._record(self._send(decision.payload))
            return
        # A click: the kernel must stay free while the agent takes its time, so the answer
        # is sent (and its outcome shown) from a worker thread.
        self.status.value = "<div>sending…</div>"
        answer = decision.payload
        self._worker = threading.Thread(
            target=lambda: self._record(self._send(answer)), name="hitl-answer", daemon=True
        )
        self._worker.start()

    def _send(self, payload: dict[str, Any]) -> Outcome:
        try:
            result = self.client.respond(
                self.task.id, self.prompt_id, payload, prompt=self.envelope, wait=True
            )
        except ResponseInvalid as exc:
            self.form.set_errors(exc.validation_errors)
            self.gate = ResponderGate(self.envelope.responders)  # a corrected answer may follow
            return Outcome("invalid", f"422 {exc.message}", None, exc.validation_errors)
        except PromptConflict as exc:
            self.form.disabled = True
            return Outcome("conflict", f"409 {exc.message}: this prompt is already answered")
        except HitlError as exc:
            self._reopen()
            self.gate = ResponderGate(self.envelope.responders)
            return Outcome("failed", f"{type(exc).__name__}: {exc}")
        task = result if isinstance(result, Task) else None
        if task is not None:
            self.task = task
        state = task.status.state.name if task is not None else "unknown"
        return Outcome("accepted", f"the agent accepted the answer; the task is now {state}", task)

    def _reopen(self) -> None:
        self.form.set_errors([])

    def _record(self, outcome: Outcome) -> Outcome:
        self.outcomes.append(outcome)
        color = _COLORS[outcome.status]
        details = "".join(
            f"<li><code>{_esc(e.get('path') or '/')}</code> {_esc(e.get('message'))}</li>"
            for e in outcome.validation_errors
        )
        self.status.value = (
            f'<div style="color:{color}"><b>{_esc(outcome.status)}</b>: '
            f"{_esc(outcome.message)}{f'<ul>{details}</ul>' if details else ''}</div>"
        )
        for callback in list(self._callbacks):
            callback(outcome)
        return outcome

    # --- display --------------------------------------------------------------------------

    def _header_html(self) -> str:
        env = self.envelope
        meta = [f"prompt <code>{_esc(env.prompt_id)}</code>"]
        if env.deadline:
            meta.append(f"deadline <code>{_esc(env.deadline)}</code>")
        meta.append("responders " + ", ".join(f"<code>{_esc(r)}</code>" for r in env.responders))
        return (
            f'<div style="white-space:pre-wrap;font-weight:600">{_esc(env.prompt)}</div>'
            f'<div style="font-size:smaller;color:#555">{" · ".join(meta)}</div>'
        )

    def to_text(self) -> str:
        """The card as plain text (terminals, nbconvert, no widget front end)."""
        lines = [f"? {self.envelope.prompt}"]
        if self.envelope.deadline:
            lines.append(f"  deadline: {self.envelope.deadline}")
        lines.append("  responders: " + ", ".join(str(r) for r in self.envelope.responders))
        lines += ["  " + line for line in self.form.to_text().splitlines()]
        if self.outcome is not None:
            lines += ["  " + line for line in str(self.outcome).splitlines()]
        return "\n".join(lines)

    def __repr__(self) -> str:
        state = self.outcome.status if self.outcome else "open"
        return f"<PromptCard {self.envelope.prompt[:40]!r}: {state}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.to_text()
        return bundle


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

    def answer(self, payload: Mapping[str, Any], *, responder: str | None = None) -> Outcome:
        """Answer the open prompt from code; see :meth:`PromptCard.answer`."""
        card = self.current
        if card is None:
            state = self.task.status.state.name if self.task else "unknown"
            raise HitlError(f"no prompt is open: the task is {state}")
        return card.answer(payload, responder=responder)

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
            self.notice.value = f"<div>The agent answered with a message: {_esc(text)}</div>"
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
                f'<div style="color:#b00020">The agent sent a malformed prompt: '
                f"{_esc(event.reason)}</div>"
            )
        else:
            self.notice.value = self._state_html(result)

    def _state_html(self, task: Task) -> str:
        parts = [f"<div>Task <code>{_esc(task.id)}</code> is <b>{task.status.state.name}</b></div>"]
        for artifact in task.artifacts or []:
            for part in artifact.parts:
                body = part.text if part.text is not None else json.dumps(part.data, indent=2)
                parts.append(f"<pre>{_esc(body)}</pre>")
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
