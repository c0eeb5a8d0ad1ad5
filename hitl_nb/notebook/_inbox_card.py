"""The card of a prompt opened from a gateway inbox: answered through the Jupyter server.

Like :class:`~hitl_nb.notebook.PromptCard` it shows the question as escaped text (S-1),
the deadline as a live countdown (S-4) and who may answer (S-3), with the form from the
prompt's ``response_schema``; but the answer goes to the server's gateway, which decides
whether the user it vouches for may answer, collects a consensus and forwards the answer
to the agent at most once. The kernel needs no connection to the agent. What the server
did with an answer is said in the same words as on a ``PromptCard`` in gateway mode
(:mod:`._gateway_answer`); a consensus' count after our answer replaces the listing's.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

import ipywidgets as W

from hitl_nb._waiting import wait_blocking
from hitl_nb.errors import FormClosed, FormInvalid, FormValueError
from hitl_nb.forms import Form

from ._deadline import deadline_html, deadline_text
from ._gateway_answer import GatewayVerdict, Tally
from ._inbox_sources import InboxItem
from ._outcome import Outcome, OutcomeRecord, status_html
from ._responder import responders_html, responders_text
from ._style import COLORS, MUTED, esc

__all__ = ["GatewayCard"]

#: Sends one answer and returns the gateway's verdict (runs on the shared loop).
Send = Callable[[InboxItem, Mapping[str, Any]], Awaitable[GatewayVerdict]]
#: Schedules a coroutine on the shared loop.
Submit = Callable[[Coroutine[Any, Any, Outcome]], "concurrent.futures.Future[Outcome]"]


class GatewayCard(OutcomeRecord):
    """One prompt from the gateway's inbox, its form, and what the server did with it.

    Attributes: ``item``, ``form``, ``outcomes``, ``state`` (``open``, ``sending``,
    ``done``), ``widget``.
    """

    def __init__(
        self, item: InboxItem, send: Send, submit: Submit, on_answered: Callable[[], Any]
    ) -> None:
        self.item = item
        self._send = send
        self._submit_coro = submit
        self._on_answered = on_answered
        self.outcomes: list[Outcome] = []
        self.state = "open"
        #: The gateway's count of a consensus after our answer (None: the listing's).
        self._tally: Tally | None = None
        self._lock = threading.Lock()
        self._next: concurrent.futures.Future[Outcome] = concurrent.futures.Future()
        self.form = Form(item.envelope.response_schema)
        self.form.status.layout = W.Layout(display="none")  # the card's status line speaks
        self.header = W.HTML(value=self._header_html())
        self.header.add_class("hitl-card-prompt")
        self.notes = W.HTML(value=self._notes_html())
        self.notes.add_class("hitl-card-findings")
        self.status = W.HTML(value="")
        self.status.add_class("hitl-card-status")
        self.widget = W.VBox([self.header, self.notes, self.form, self.status])
        self.widget.add_class("hitl-card")
        if item.may_answer is False:
            self.form.disabled = True
        self.form.on_submit(self._on_form_submit)

    @property
    def prompt_id(self) -> str:
        """The prompt's correlation id."""
        return self.item.prompt_id

    # --- answering ------------------------------------------------------------------------

    def answer(self, payload: Mapping[str, Any], *, timeout: float | None = 60.0) -> Outcome:
        """Fill the form with ``payload`` and submit it, as a person would; block for what
        the server did with it."""
        if self.item.may_answer is False:
            why = self.item.why_not or "the server says you may not answer this prompt"
            return self._record(Outcome("refused", f"{why}; nothing was sent"))
        try:
            self.form.value = dict(payload)
        except FormValueError as exc:
            return self._record(Outcome("invalid", f"the form cannot hold this value: {exc}"))
        with self._lock:
            waiting = self._next
        try:
            self.form.submit()
        except FormInvalid:
            issues = [e.to_json() for e in self.form.errors]
            return self._record(Outcome("invalid", "the answer does not match the form; "
                                        "nothing was sent", validation_errors=issues))  # fmt: skip
        except FormClosed as exc:
            return self._record(Outcome("failed", f"the card takes no answer now: {exc}"))
        try:
            return wait_blocking(lambda: waiting, timeout)
        except TimeoutError:
            return Outcome("failed", f"the server did not answer within {timeout} s")

    def _on_form_submit(self, payload: dict[str, Any]) -> None:
        with self._lock:
            if self.state != "open":
                return
            self.state = "sending"
        self.status.value = status_html("info", "sending", "the answer is on its way to the "
                                        "Jupyter server")  # fmt: skip
        self._submit_coro(self._deliver(payload))

    async def _deliver(self, payload: dict[str, Any]) -> Outcome:
        try:
            verdict = await self._send(self.item, payload)
        except Exception as exc:  # never leave the card saying "sending"
            verdict = GatewayVerdict(Outcome("failed", f"{type(exc).__name__}: {exc}"), True)
        outcome = verdict.outcome
        if verdict.tally is not None:  # held: the consensus' count goes in the notes
            self._tally = verdict.tally
            self.notes.value = self._notes_html()
        if outcome.status == "invalid":
            self.form.set_errors(outcome.validation_errors)  # opens the form again
        elif verdict.open_again:
            self.form.set_errors([])
        else:
            self.form.disabled = True
            self.header.value = self._header_html(live=False)
        if outcome.status not in ("invalid", "failed"):
            self._on_answered()  # the server acted on it: the list changes
        with self._lock:
            self.state = "open" if verdict.open_again else "done"
        return self._record(outcome)

    def gone(self) -> None:
        """The prompt left the inbox (answered elsewhere, closed, expired)."""
        with self._lock:
            if self.state != "open":
                return
            self.state = "done"
        self.form.disabled = True
        self.header.value = self._header_html(live=False)
        self.notes.value = (f'<div style="color:{COLORS["warn"]}">This prompt is no longer '
                            "open: it was answered, closed or expired.</div>")  # fmt: skip

    # --- display --------------------------------------------------------------------------

    def _header_html(self, live: bool = True) -> str:
        env, item = self.item.envelope, self.item
        meta = [deadline_html(env, live=live), responders_html(env),
                f'task <code style="font-size:inherit">{esc(item.task_id)}</code> at '
                f"{esc(item.agent_url)}"]  # fmt: skip
        return (
            f'<div style="white-space:pre-wrap;font-weight:600">{esc(env.prompt)}</div>'
            f'<div style="font-size:smaller;color:{MUTED}">{" · ".join(m for m in meta if m)}'
            "</div>"
        )

    def _notes_html(self) -> str:
        item = self.item
        lines = []
        if item.why_not:
            lines.append(f'<div style="color:{COLORS["warn"]}">You cannot answer this prompt: '
                         f"{esc(item.why_not)}</div>")  # fmt: skip
        tally = self._tally or Tally(item.agreeing, item.needed, item.answers, item.disagreement)
        if tally.needed > 1:
            lines.append(f'<div style="color:{MUTED}">{tally.answers} answer(s) so far, '
                         f"{tally.agreeing} of {tally.needed} needed agree"
                         f"{' (they differ)' if tally.disagreement else ''}.</div>")  # fmt: skip
        return "".join(lines)

    def to_text(self) -> str:
        """The card as plain text."""
        env = self.item.envelope
        lines = [f"? {env.prompt}"]
        if env.deadline:
            lines.append("  " + deadline_text(env))
        lines.append("  " + responders_text(env))
        if self.item.why_not:
            lines.append(f"  you cannot answer: {self.item.why_not}")
        lines += ["  " + line for line in self.form.to_text().splitlines()]
        if self.outcome is not None:
            lines += ["  " + line for line in str(self.outcome).splitlines()]
        return "\n".join(lines)

    def __repr__(self) -> str:
        state = self.outcome.status if self.outcome else self.state
        return f"<GatewayCard {self.item.envelope.prompt[:40]!r}: {state}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.to_text()
        return bundle
