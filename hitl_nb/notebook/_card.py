"""PromptCard: one prompt, its form, and what the agent did with the answer.

The question is escaped plain text (S-1); the form comes from the prompt's
``response_schema``; the status line says what became of each answer (see
:class:`~hitl_nb.notebook._outcome.Outcome`). An answer given by a click is sent from a
worker thread, so the kernel stays free while the agent works; :meth:`PromptCard.wait`
blocks until its outcome is in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as W

from hitl_nb.a2a import Task
from hitl_nb.client import SyncHitlClient
from hitl_nb.errors import HitlError, PromptConflict, ResponseInvalid
from hitl_nb.forms import Form, FormValueError
from hitl_nb.policy import ResponderGate, current_responder
from hitl_nb.spec import PromptEnvelope

from ._deadline import deadline_html, deadline_text
from ._outcome import Outcome, outcome_html
from ._responder import responders_html, responders_text
from ._style import MUTED, esc

__all__ = ["PromptCard"]


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
        self._unchecked = False  # answer(validate=False): past the form and the local check
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

    def answer(
        self, payload: Mapping[str, Any], *, responder: str | None = None, validate: bool = True
    ) -> Outcome:
        """Fill the form with ``payload`` and submit it, as a person would.

        Returns the :class:`Outcome`. A payload the form cannot hold, or one that does not
        validate, comes back as ``invalid`` with its issues; nothing is sent then.

        ``validate=False`` sends ``payload`` as it is, past the form and the local
        schema check (the responder policy still applies): to test on purpose that the
        agent refuses it with 422.
        """
        if not validate:
            self._from_code = True
            self._pending_responder = responder
            self._unchecked = True
            try:
                self._on_form_submit(payload)  # type: ignore[arg-type]
            finally:
                self._from_code = False
                self._pending_responder = None
                self._unchecked = False
            assert self.outcome is not None
            return self.outcome
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
            self._record(self._send(decision.payload, validate=not self._unchecked))
            return
        # A click: the kernel must stay free while the agent takes its time, so the answer
        # is sent (and its outcome shown) from a worker thread.
        self.status.value = "<div>sending…</div>"
        answer = decision.payload
        self._worker = threading.Thread(
            target=lambda: self._record(self._send(answer)), name="hitl-answer", daemon=True
        )
        self._worker.start()

    def _send(self, payload: dict[str, Any], validate: bool = True) -> Outcome:
        try:
            result = self.client.respond(
                self.task.id,
                self.prompt_id,
                payload,
                prompt=self.envelope,
                wait=True,
                validate=validate,
            )
        except ResponseInvalid as exc:
            self.form.set_errors(exc.validation_errors)
            self.gate = ResponderGate(self.envelope.responders)  # a corrected answer may follow
            return Outcome("invalid", f"422 {exc.message}", None, exc.validation_errors, error=exc)
        except PromptConflict as exc:
            self.form.disabled = True
            return Outcome(
                "conflict", f"409 {exc.message}: this prompt is already answered", error=exc
            )
        except HitlError as exc:
            self._reopen()
            self.gate = ResponderGate(self.envelope.responders)
            return Outcome("failed", f"{type(exc).__name__}: {exc}", error=exc)
        task = result if isinstance(result, Task) else None
        if task is not None:
            self.task = task
        state = task.status.state.name if task is not None else "unknown"
        return Outcome("accepted", f"the agent accepted the answer; the task is now {state}", task)

    def _reopen(self) -> None:
        self.form.set_errors([])

    def _record(self, outcome: Outcome) -> Outcome:
        self.outcomes.append(outcome)
        self.status.value = outcome_html(outcome)
        for callback in list(self._callbacks):
            callback(outcome)
        return outcome

    # --- display --------------------------------------------------------------------------

    def _header_html(self) -> str:
        env = self.envelope
        meta = [f"prompt <code>{esc(env.prompt_id)}</code>", deadline_html(env)]
        meta.append(responders_html(env))
        return (
            f'<div style="white-space:pre-wrap;font-weight:600">{esc(env.prompt)}</div>'
            f'<div style="font-size:smaller;color:{MUTED}">{" · ".join(m for m in meta if m)}'
            "</div>"
        )

    def to_text(self) -> str:
        """The card as plain text (terminals, nbconvert, no widget front end)."""
        lines = [f"? {self.envelope.prompt}"]
        if self.envelope.deadline:
            lines.append("  " + deadline_text(self.envelope))
        lines.append("  " + responders_text(self.envelope))
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
