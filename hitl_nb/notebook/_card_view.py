"""What a prompt card shows and records: its header, notes, status line and outcomes.

The header is the question as escaped plain text (S-1) with the deadline (a live
countdown, S-4), who may answer (S-3) and the prompt id; the notes list the orchestrator
check's warnings; the status line says what became of the last answer
(:class:`~hitl_nb.notebook.Outcome`). Every outcome is recorded in ``outcomes``, wakes
whoever waits for it and goes to the ``on_outcome`` callbacks.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from hitl_nb.forms import Form
from hitl_nb.spec import PromptEnvelope

from ._deadline import deadline_html, deadline_text
from ._outcome import Outcome, OutcomeRecord
from ._responder import ResponderField, responders_html, responders_text
from ._style import COLORS, MUTED, esc

__all__ = ["CardView"]


class CardView(OutcomeRecord):
    """The display and record of :class:`~hitl_nb.notebook.PromptCard` (its base class).

    The attributes below are set by ``PromptCard.__init__``.
    """

    envelope: PromptEnvelope
    who: ResponderField
    form: Form
    header: W.HTML
    notes: W.HTML
    widget: W.VBox
    _lock: threading.RLock
    #: An answer is on its way, or accepted and not settled.
    _pending: bool
    _callbacks: list[Callable[[Outcome], Any]]

    @property
    def prompt_id(self) -> str:
        """The prompt's correlation id."""
        return self.envelope.prompt_id

    # --- recording ------------------------------------------------------------------------

    def _finish(self, outcome: Outcome, state: str) -> None:
        with self._lock:
            self.state = state
            self._pending = False
        if state == "done":
            self.form.disabled = True
            self.who.disable()
            self.notes.value = self._findings_html()  # notes about answering are moot now
            self.header.value = self._header_html()  # no countdown on a closed prompt
        self._record(outcome)

    def _reopen(self) -> None:
        self.form.set_errors([])

    def _record(self, outcome: Outcome) -> Outcome:
        if outcome.validation_errors and outcome.where is None:
            # the status line and str(outcome) name fields as the form labels them
            outcome = dataclasses.replace(outcome, where=self.form.where)
        super()._record(outcome)
        for callback in list(self._callbacks):
            callback(outcome)
        return outcome

    # --- display --------------------------------------------------------------------------

    def _header_html(self) -> str:
        env = self.envelope
        meta = [
            deadline_html(env, live=self.state != "done"),
            responders_html(env),
            f"prompt <code>{esc(env.prompt_id)}</code>",
        ]
        return (
            f'<div style="white-space:pre-wrap;font-weight:600">{esc(env.prompt)}</div>'
            f'<div style="font-size:smaller;color:{MUTED}">{" · ".join(m for m in meta if m)}'
            "</div>"
        )

    def _findings_html(self, extra: str = "") -> str:
        notes = [f.message for f in self.envelope.findings if f.severity == "warning"]
        lines = "".join(f"<li>{esc(n)}</li>" for n in notes)
        warn = COLORS["warn"]
        out = ""
        if lines:
            out += (
                f'<div style="font-size:smaller;color:{warn}">The orchestrator check noted:'
                f"<ul>{lines}</ul></div>"
            )
        if extra:
            out += f'<div style="color:{warn}">{esc(extra)}</div>'
        return out

    def to_text(self) -> str:
        """The card as plain text (terminals, nbconvert, no widget front end)."""
        lines = [f"? {self.envelope.prompt}"]
        if self.envelope.deadline:
            lines.append("  " + deadline_text(self.envelope))
        lines.append("  " + responders_text(self.envelope))
        if self.who.text():
            lines.append("  " + self.who.text())
        lines += ["  " + line for line in self.form.to_text().splitlines()]
        if self.outcome is not None:
            lines += ["  " + line for line in str(self.outcome).splitlines()]
        elif self.state in ("sending", "accepted"):
            lines.append("  " + ("sending" if self.state == "sending" else "accepted, waiting"))
        return "\n".join(lines)

    def __repr__(self) -> str:
        state = self.outcome.status if self.outcome else self.state
        return f"<PromptCard {self.envelope.prompt[:40]!r}: {state}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.to_text()
        return bundle
