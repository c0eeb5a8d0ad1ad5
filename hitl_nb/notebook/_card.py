"""PromptCard: one prompt, its form, and what the agent did with the answer.

The question is escaped plain text (S-1); the header says when the deadline is (a live
countdown, S-4) and who may answer (S-3, with an "Answering as" field when the prompt
names its responders); the orchestrator check's warnings are listed; the form comes from
the prompt's ``response_schema``; the status line says what became of each answer in
plain words (:class:`~hitl_nb.notebook.Outcome`).

Answers are sent on the conversation's background loop, whether clicked or given from
code, so the kernel stays free while the agent works. An answer is ``accepted`` once
the agent took it; the card records that outcome when the agent has moved on (the task
is interrupted again or has ended). A task that fails or is canceled while the card is
open closes the card without anyone clicking.

With a responder gateway (``gateway=``, :mod:`._gateway_link`) the card answers through
the Jupyter server instead (:mod:`._via_gateway`): the server says who is answering
and enforces ``allowed_responders`` (S-3).

This module is the part a cell calls: the card, answering from code and waiting.
:class:`PromptCard` reads the rest from its bases: :mod:`._card_send` (the answer to
the agent and its outcome) and :mod:`._card_view` (header, notes, status line, the
record of outcomes); :mod:`._via_gateway` answers through the gateway.
"""

from __future__ import annotations

import concurrent.futures
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as W

from hitl_nb._waiting import wait_async, wait_blocking
from hitl_nb.a2a import Task
from hitl_nb.client import SyncHitlClient
from hitl_nb.forms import Form, FormClosed, FormInvalid, FormValueError
from hitl_nb.policy import ResponderGate
from hitl_nb.spec import PromptEnvelope

from ._card_send import CardSending
from ._card_send import Watcher as _Watcher
from ._gateway_link import GatewayLink
from ._link import Link
from ._outcome import Outcome, status_html
from ._responder import ResponderField
from ._via_gateway import ViaGateway

__all__ = ["PromptCard"]

#: What to do instead of blocking a cell for a click (ClickNeeded's advice).
_CLICK = "in a cell, `await card.wait_async(timeout)`; or answer from code: `card.answer({...})`"


class PromptCard(CardSending):
    """One prompt: its question, its form, and what the agent did with the answer.

    ``client`` is a :class:`~hitl_nb.client.SyncHitlClient` (or the conversation's
    link). ``responder`` is who is answering (default: ``JUPYTERHUB_USER``); it is
    checked against the prompt's ``allowed_responders`` before anything is sent (S-3).
    ``on_outcome(callback)`` calls ``callback(outcome)`` after every outcome.

    ``gateway`` (a :class:`~hitl_nb.notebook.GatewayLink`): answer through the Jupyter
    server's responder gateway, as the user the server vouches for; ``registration`` is
    the gateway's id of the task (None: the card registers the task on its first answer).

    Attributes: ``widget`` (the card), ``form``, ``outcomes``, ``gate`` (the S-3 gate,
    its ``ballots`` for a consensus), ``state`` (``open``, ``sending``, ``accepted``,
    ``done``).
    """

    def __init__(
        self,
        client: SyncHitlClient | Link,
        task: Task,
        envelope: PromptEnvelope,
        *,
        responder: str | None = None,
        ui: Mapping[str, Any] | None = None,
        watcher: _Watcher | None = None,
        gateway: GatewayLink | None = None,
        registration: str | None = None,
    ) -> None:
        self.link = client if isinstance(client, Link) else Link(client)
        self.client = self.link.sync
        self.task = task
        self.envelope = envelope
        #: How this card answers through a gateway (None: directly to the agent).
        self.via = ViaGateway(self, gateway, registration) if gateway is not None else None
        server_user = None if gateway is None else gateway.name or gateway.display
        self.who = ResponderField(envelope, responder, server_user=server_user)
        self.form = Form(envelope.response_schema, ui=ui)
        # The card's own status line speaks. A Layout of its own: the form shares its
        # Layout objects between widgets.
        self.form.status.layout = W.Layout(display="none")
        self.outcomes: list[Outcome] = []
        self.state = "open"
        # Weakly: the widgets keep the card alive, and must not keep the conversation.
        self._watcher = weakref.ref(watcher) if watcher is not None else None
        self._callbacks: list[Callable[[Outcome], Any]] = []
        self._lock = threading.RLock()
        self._pending = False  # an answer is on its way or accepted and not settled
        self._next: concurrent.futures.Future[Outcome] = concurrent.futures.Future()
        # How answer() wants the next form submit sent: Form calls its callbacks with the
        # payload only, so answer() leaves its options here for _on_form_submit.
        self._options: dict[str, Any] = {}
        self._deadline_shown_passed = False
        self._late_note = False
        self._note = ""
        #: The agent signalled that this prompt's deadline passed (e.g. ``hitlTimeout``).
        self.timeout_signaled = False
        self.header = W.HTML(value=self._header_html())
        self.header.add_class("hitl-card-prompt")
        self.notes = W.HTML(value=self._findings_html())
        self.notes.add_class("hitl-card-findings")
        self.status = W.HTML(value="")
        self.status.add_class("hitl-card-status")
        self.widget = W.VBox(
            [self.header, self.notes, self.who.widget, self.form.widget, self.status]
        )
        self.widget.add_class("hitl-card")
        self.form.on_submit(self._on_form_submit)

    # --- reading --------------------------------------------------------------------------

    @property
    def responder(self) -> str | None:
        """Who is answering now (the "Answering as" field)."""
        return self.who.value

    @property
    def gate(self) -> ResponderGate:
        """The S-3 gate of this prompt (``ballots`` holds a consensus' answers)."""
        return self.who.gate

    def on_outcome(self, callback: Callable[[Outcome], Any]) -> None:
        """Call ``callback(outcome)`` after every outcome."""
        self._callbacks.append(callback)

    # --- answering ------------------------------------------------------------------------

    def answer(
        self,
        payload: Mapping[str, Any],
        *,
        responder: str | None = None,
        override: bool = False,
        timeout: float | None = 300.0,
        validate: bool = True,
    ) -> Outcome:
        """Fill the form with ``payload`` and submit it, as a person would; block for the outcome.

        A payload the form cannot hold, or one that does not validate, comes back as
        ``invalid`` with its issues; nothing is sent then. An accepted answer returns once
        the agent has moved on (asked again or ended), or after ``timeout`` seconds
        (then the outcome says the agent has not continued yet). ``responder`` answers
        as someone else than the field says; ``override=True`` sends for a responder the
        prompt does not name (S-3), deliberately. ``validate=False`` sends ``payload``
        as it is, past the form and the local schema check (the responder policy still
        applies): to test on purpose that the agent refuses it with 422.
        """
        if not validate:
            self._submit(dict(payload), responder=responder, override=override, validate=False)
            return self._await_outcome(timeout)
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
        self._options = {"responder": responder, "override": override}
        try:
            self.form.submit()
        except (FormClosed, FormInvalid) as exc:
            return self._record(Outcome("failed", f"the card takes no answer now: {exc}"))
        finally:
            self._options = {}
        return self._await_outcome(timeout)

    def _await_outcome(self, timeout: float | None) -> Outcome:
        with self._lock:
            if not self._pending:
                return self.outcomes[-1]
            pending = self._next
        try:
            return wait_blocking(lambda: pending, timeout)
        except TimeoutError:
            with self._lock:
                if not self._pending:
                    return self.outcomes[-1]
                state = self.task.status.state.name
                self._pending = False
                self.state = "done"
            return self._record(
                Outcome(
                    "accepted",
                    f"the agent accepted the answer but has not continued after {timeout} s "
                    f"(the task is {state})",
                    self.task,
                )
            )

    def wait(self, timeout: float | None = None) -> Outcome:
        """Block until the outcome of the answer sent (or of the next one) is in.

        Returns at once when the last answer's outcome is already in and no answer is
        on its way. :class:`~hitl_nb.errors.WaitTimedOut` (a ``TimeoutError``) when
        nothing came within ``timeout`` seconds (None: no limit). In a notebook cell an
        answer on its way (a click made before the cell ran, ``answer()`` from another
        thread) is waited for; one that needs a click cannot come while the cell blocks,
        so there ``wait`` raises :class:`~hitl_nb.errors.ClickNeeded` at once:
        ``await card.wait_async(timeout)`` waits for the click. Waiting never cancels
        anything: wait again after a timeout.
        """
        pending, click, outcome = self._waiting()
        if outcome is not None:
            return outcome
        return wait_blocking(lambda: pending, timeout, click=click)

    async def wait_async(self, timeout: float | None = None) -> Outcome:
        """``await`` form of :meth:`wait`, for a notebook cell: the click is handled while
        the cell awaits (ipykernel >= 7.4). Same timeout and result."""
        pending, click, outcome = self._waiting()
        if outcome is not None:
            return outcome
        return await wait_async(lambda: pending, timeout, click=click)

    def _waiting(self) -> tuple[concurrent.futures.Future[Outcome], str | None, Outcome | None]:
        """What a wait waits on: the next outcome's future, whether only a click can
        bring it (the advice then), and the outcome to return at once, if any."""
        with self._lock:
            if self.outcome is not None and not self._pending:
                return self._next, None, self.outcome
            click = None if self._pending or not self.is_open else _CLICK
            return self._next, click, None

    def _on_form_submit(self, payload: dict[str, Any]) -> None:
        # A click (no options: the "Answering as" field and the override box speak) or
        # answer() (its options).
        self._submit(payload, **self._options)

    def _submit(
        self,
        payload: dict[str, Any],
        *,
        responder: str | None = None,
        override: bool = False,
        validate: bool = True,
    ) -> None:
        self.form.status.value = ""  # the card's status line says what happens next
        if self.via is not None:
            self.via.submit(payload, responder, override)
            return
        decision = self.who.decide(payload, responder, override)
        if decision.action == "refuse":
            self._reopen()
            self._record(Outcome("refused", decision.reason))
            return
        if decision.action == "hold":
            self._reopen()
            self._record(Outcome("held", f"{decision.reason}; waiting for more responders"))
            return
        assert decision.payload is not None
        if not self._start_sending():
            return
        # Only an override is worth a note: it is what the outcome must not hide (S-3).
        note = decision.reason if self.who.overridden else ""
        self.status.value = status_html("info", "sending", "the answer is on its way" + (
            f" ({note})" if note else ""))  # fmt: skip
        self.link.submit(self._send(decision.payload, note, validate))

    # --- told by the conversation ---------------------------------------------------------

    def closed_by(self, task: Task) -> None:
        """The task left this prompt without our answer: say why, close the form.

        Through a gateway, with our consensus answer held there, the gateway is asked
        whether the answer it forwarded was the one we agreed to."""
        with self._lock:
            if self.state != "open":
                return  # an answer in flight reports for itself
            self.task = task
            if self.via is not None and self.via.ballot is not None:
                self.state = "sending"  # our held answer may be the one that went
                self._pending = True
                self.form.disabled = True
                self.link.submit(self.via.after_close(task))
                return
            self.state = "done"
        self._finish(self._closing_outcome(task), state="done")

    def deadline_passed(self, still_open: bool = False) -> None:
        """Redraw the header once the deadline has passed (S-4: a soft signal).

        ``still_open``: the agent showed the prompt open after the deadline, so a late
        answer may still be sent; the card says so.
        """
        if not self._deadline_shown_passed:
            self._deadline_shown_passed = True
            self.header.value = self._header_html()
        if still_open and self.is_open and not self._late_note:
            self._late_note = True
            self.notes.value = self._findings_html(
                "The deadline passed; the agent still takes answers to this prompt."
            )

    def stop(self, reason: str) -> None:
        """The conversation stopped following: an open card says so (answers still go)."""
        if self.is_open:
            self.notes.value = self._findings_html(f"Not following the task any more: {reason}.")
