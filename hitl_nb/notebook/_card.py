"""The cards: one prompt or question each, how it is answered, and what became of it.

:class:`Card` is what every card is made of, once: the question as escaped plain text
(S-1) over a line about it (the header), notes, the card's own body (a form, or a text
box), a status line saying what became of the last answer in the words of
:mod:`._outcomes`, the record of every outcome (``outcomes``, ``on_outcome`` and a
future for whoever waits), and the card as text (``to_text``, ``text/plain``). Three
cards are built on it:

- :class:`PromptCard`: a hitl-prompt/v1 prompt of a task: the deadline as a live
  countdown (S-4), who may answer with an "Answering as" field (S-3), the orchestrator
  check's warnings, the form from the prompt's ``response_schema``. Its answer goes
  straight to the agent (:class:`~._senders.DirectSender`) or, with ``gateway=``,
  through the Jupyter server's responder gateway (:class:`~._senders.GatewaySender`),
  which then says who is answering and enforces ``allowed_responders``. A card that
  answers directly still has its task watched by the kernel's gateway (:mod:`._announce`:
  JupyterLab's prompts panel lists it); when the task moves on without the card's
  answer, the gateway says whether it forwarded one (given in the panel, or another
  card) and who gave it.
- :class:`GatewayCard`: a prompt from the gateway's inbox, answered only through the
  gateway (the kernel needs no connection to the agent).
- :class:`QuestionCard`: an agent's plain-text question (no envelope), answered with
  text (:class:`~._senders.TextSender`).

Answers are sent on the notebook's background loop, whether clicked or given from code,
so the kernel stays free while the agent works. An answer is ``accepted`` once the
agent took it; the card records that outcome when the agent has moved on (the task is
interrupted again or has ended: the conversation that follows the task says so). A task
that fails, is canceled or is answered elsewhere closes the card without a click.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, ClassVar, Protocol

import ipywidgets as W

from hitl_nb._waiting import wait_async, wait_blocking
from hitl_nb.a2a import Task
from hitl_nb.client import SyncHitlClient
from hitl_nb.errors import HitlError, PromptConflict
from hitl_nb.forms import Form, FormClosed, FormInvalid, FormValueError, bare
from hitl_nb.policy import ResponderGate, Tally
from hitl_nb.spec import PromptEnvelope

from ._announce import place
from ._deadline import deadline_html, deadline_text
from ._gateway_link import GatewayLink
from ._inbox_sources import InboxItem
from ._link import Link
from ._outcomes import (
    ACCEPTED,
    GONE,
    Outcome,
    Verdict,
    broken,
    cannot_hold,
    closed_already,
    closing,
    does_not_match,
    empty_text,
    gateway_silent,
    held,
    not_continued,
    not_yours,
    outcome_html,
    question_closed,
    refused,
    sending_html,
    settled,
    takes_no_answer,
    tally_words,
    waiting_html,
)
from ._parts import message_text
from ._responder import ResponderField, responders_html, responders_text
from ._senders import DirectSender, GatewaySender, TextSender
from ._style import COLORS, MUTED, esc

__all__ = ["Card", "GatewayCard", "PromptCard", "QuestionCard", "Watcher"]

#: What to do instead of blocking a cell for a click (ClickNeeded's advice).
_CLICK = "in a cell, `await card.wait_async(timeout)`; or answer from code: `card.answer({...})`"


class Watcher(Protocol):
    """What a card needs of the conversation that follows its task."""

    @property
    def following(self) -> bool: ...

    def answer_accepted(self, card: Any, result: Task | None) -> None: ...

    def drawn(self) -> None:
        """Return once the update being applied, if any, is drawn (a card settles in the
        middle of the conversation's update; its own widgets are redrawn at its end)."""


class Card:
    """What every card is made of (the base of the three cards of this module).

    ``widget`` stacks ``header`` (the question and a line about it), ``notes``, the
    card's own ``body`` widgets and ``status`` (what became of the last answer). A card
    with a ``form`` hides the form's own status line (the card's speaks) and names
    validation errors by the form's labels. Attributes: ``question``, ``outcomes``,
    ``state`` (``open``, ``sending``, ``accepted``, ``done``).

    A card fills in :meth:`_meta` (the line under the question), :meth:`_notes`,
    :meth:`_text_lines` (its plain text before the form) and what closing
    (:meth:`_disable`), opening again (:meth:`_reopen`) and being done
    (:meth:`_put_away`) do to its inputs.
    """

    #: Whether the card has a notes line (a plain-text question has none).
    has_notes: ClassVar[bool] = True
    #: The conversation following the card's task, weakly (None: the card is alone).
    _watcher: weakref.ref[Watcher] | None = None

    def __init__(self, question: str, body: Sequence[W.Widget], form: Form | None = None) -> None:
        self.question = question
        self.outcomes: list[Outcome] = []
        self.state = "open"
        self._form = form
        self._lock = threading.RLock()
        self._next: concurrent.futures.Future[Outcome] = concurrent.futures.Future()
        self._callbacks: list[Callable[[Outcome], Any]] = []
        if form is not None:
            # The card's status line speaks. The form's status line has a Layout of its
            # own (the fields share theirs), for callers to change.
            form.status.layout.display = "none"
        # Lines without Layout or Style models of their own (their look never changes):
        # each model is one more message the kernel sends and the front end builds.
        self.header = bare(W.HTML, ("hitl-card-prompt",), value=self._header_html())
        notes: list[W.Widget] = []
        if self.has_notes:  # a widget model only where something may be noted
            self.notes = bare(W.HTML, ("hitl-card-findings",), value=self._notes_html())
            notes.append(self.notes)
        self.status = bare(W.HTML, ("hitl-card-status",), value="")
        self._body = list(body)
        self.widget = W.VBox([self.header, *notes, *body, self.status])
        self.widget.add_class("hitl-card")

    def _drawn(self, outcome: Outcome) -> Outcome:
        """``outcome``, once the conversation following the task has drawn the update
        that brought it: what a wait returns, the conversation's widgets already say.
        Called without the card's lock (the conversation's update takes it)."""
        watcher = self._watcher() if self._watcher is not None else None
        if watcher is not None:
            watcher.drawn()
        return outcome

    # --- what a card fills in -------------------------------------------------------------

    def _meta(self) -> list[str]:
        """The fragments (HTML) of the line under the question."""
        return []

    def _notes(self) -> list[str]:
        """The notes (HTML blocks)."""
        return []

    def _text_lines(self) -> list[str]:
        """The card's lines of plain text between the question and the form."""
        return []

    def _disable(self) -> None:
        """No more answers: grey the card's inputs out."""

    def _reopen(self) -> None:
        """The card takes another answer."""

    def _put_away(self) -> None:
        """The card is done: its Submit button goes, and so do inputs nobody filled in
        (the outcome says why the card closed); an answer given stays in view, read-only."""
        form = self._form
        if form is None:
            return
        form.submit_button.layout.display = "none"
        sent = form.submitted.done() and not form.submitted.cancelled()
        if not sent and not form.touched:
            self._drop(self._body)

    def _drop(self, widgets: Sequence[W.Widget]) -> None:
        """Take ``widgets`` off the card."""
        self.widget.children = tuple(c for c in self.widget.children if c not in widgets)

    # --- reading --------------------------------------------------------------------------

    @property
    def outcome(self) -> Outcome | None:
        """The last outcome (None before any)."""
        return self.outcomes[-1] if self.outcomes else None

    @property
    def is_open(self) -> bool:
        """True while an answer may still be given (nothing accepted, not closed)."""
        return self.state in ("open", "sending")

    def on_outcome(self, callback: Callable[[Outcome], Any]) -> None:
        """Call ``callback(outcome)`` after every outcome."""
        self._callbacks.append(callback)

    # --- recording ------------------------------------------------------------------------

    def _record(self, outcome: Outcome) -> Outcome:
        """Keep ``outcome``, show it on the status line, wake whoever waits for it."""
        if outcome.validation_errors and outcome.where is None and self._form is not None:
            # the status line and str(outcome) name fields as the form labels them
            outcome = dataclasses.replace(outcome, where=self._form.where)
        with self._lock:
            self.outcomes.append(outcome)
            # a form lists the fields at fault itself (its summary, under each field)
            self.status.value = outcome_html(outcome, places=self._form is None)
            waiting, self._next = self._next, concurrent.futures.Future()
        waiting.set_result(outcome)
        for callback in list(self._callbacks):
            callback(outcome)
        return outcome

    def _finish(self, outcome: Outcome, state: str = "done") -> Outcome:
        """Record ``outcome`` and move to ``state``; a card that is done takes no answer."""
        with self._lock:
            self.state = state
        if state == "done":
            self._disable()
            self._put_away()
            self.redraw()  # no countdown on a closed prompt, no notes about answering
        return self._record(outcome)

    # --- display --------------------------------------------------------------------------

    def redraw(self) -> None:
        """Draw the header and the notes again (only what changed reaches the browser)."""
        self.header.value = self._header_html()
        if self.has_notes:
            self.notes.value = self._notes_html()

    def _header_html(self) -> str:
        meta = " · ".join(m for m in self._meta() if m)
        return (
            f'<div style="white-space:pre-wrap;font-weight:600;line-height:1.4;'
            f'margin:4px 0 2px">{esc(self.question)}</div>'
            f'<div style="font-size:smaller;color:{MUTED};line-height:1.4">{meta}</div>'
        )

    def _notes_html(self) -> str:
        return "".join(self._notes())

    def to_text(self) -> str:
        """The card in a few lines of plain text (terminals, nbconvert, nbval: what a
        notebook shows before it runs): the question, who may answer and the deadline,
        the form's state in one line (the answer, once sent), the last outcome. The
        fields themselves are the form's :meth:`~hitl_nb.forms.Form.to_text`."""
        lines = [f"? {self.question}", *self._text_lines(), *self._form_lines()]
        if self.outcome is not None:
            lines += str(self.outcome).splitlines()
        elif self.state in ("sending", "accepted"):
            lines.append("sending" if self.state == "sending" else "accepted, waiting")
        return "\n  ".join(lines)

    def _form_lines(self) -> list[str]:
        """The form in a line (and the problems its fields show, each on a line)."""
        form = self._form
        if form is None:
            return []
        if form.submitted.done() and not form.submitted.cancelled():
            return ["answer: " + json.dumps(form.submitted.result(), ensure_ascii=False)]
        if self.state == "done":
            return []  # closed without our answer: the outcome says why
        lines = [f"form: {form.state_text()}"]
        outcome = self.outcome
        if outcome is None or not outcome.validation_errors:  # else the outcome lists them
            lines += [f"  {problem}" for problem in form.problems()]
        return lines

    def __repr__(self) -> str:
        state = self.outcome.status if self.outcome else self.state
        return f"<{type(self).__name__} {self.question[:40]!r}: {state}>"

    def _shown(self) -> None:
        """The card is being displayed (in the cell running now)."""

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        self._shown()
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.to_text()
        return bundle


class PromptCard(Card):
    """One prompt: its question, its form, and what the agent did with the answer.

    ``client`` is a :class:`~hitl_nb.client.SyncHitlClient` (or the conversation's
    link). ``responder`` is who is answering (default: ``JUPYTERHUB_USER``); it is
    checked against the prompt's ``allowed_responders`` before anything is sent (S-3).
    ``on_outcome(callback)`` calls ``callback(outcome)`` after every outcome.

    ``gateway`` (a :class:`~hitl_nb.notebook.GatewayLink`): answer through the Jupyter
    server's responder gateway, as the user the server vouches for; ``registration`` is
    the gateway's id of the task (None: the card registers the task on its first answer).
    Without ``gateway``, a card shown alone (no conversation follows it) has its task
    watched by the kernel's gateway (``watched``, once registered).

    Attributes: ``widget`` (the card), ``form``, ``outcomes``, ``gate`` (the S-3 gate,
    its ``ballots`` for a consensus), ``state`` (``open``, ``sending``, ``accepted``,
    ``done``), ``sender`` (how its answers travel).
    """

    def __init__(
        self,
        client: SyncHitlClient | Link,
        task: Task,
        envelope: PromptEnvelope,
        *,
        responder: str | None = None,
        ui: Mapping[str, Any] | None = None,
        watcher: Watcher | None = None,
        gateway: GatewayLink | None = None,
        registration: str | None = None,
    ) -> None:
        self.link = client if isinstance(client, Link) else Link(client)
        self.client = self.link.sync
        self.task = task
        self.envelope = envelope
        #: The gateway this card answers through (None: straight to the agent).
        self.gateway = gateway
        server_user = None if gateway is None else gateway.name or gateway.display
        host = None if gateway is None else gateway.host
        self.who = ResponderField(envelope, responder, server_user=server_user, host=host)
        self.sender: DirectSender | GatewaySender
        direct = None
        if gateway is None:
            self.sender = direct = DirectSender(self.link, envelope)
        else:
            self.sender = GatewaySender(
                gateway,
                envelope.prompt_id,
                self.who.gate.needed,
                registration=registration,
                task=(self.link.client.agent, task.id),
            )
        self.form = Form(envelope.response_schema, ui=ui)
        # Weakly: the widgets keep the card alive, and must not keep the conversation.
        self._watcher = weakref.ref(watcher) if watcher is not None else None
        # How answer() wants the next form submit sent: Form calls its callbacks with the
        # payload only, so answer() leaves its options here for _on_form_submit.
        self._options: dict[str, Any] = {}
        self._deadline_shown_passed = False
        self._late_note = False
        #: A note under the warnings (the deadline passed, not followed any more).
        self._note = ""
        #: The words of the accepted answer, kept for its outcome once the agent moved on.
        self._words = ACCEPTED
        #: The agent signalled that this prompt's deadline passed (e.g. ``hitlTimeout``).
        self.timeout_signaled = False
        body = [self.form] if self.who.widget is None else [self.who.widget, self.form]
        super().__init__(envelope.prompt, body, self.form)
        self.form.on_submit(self._on_form_submit)
        if direct is not None and watcher is None:  # shown alone: watched all the same
            self.link.submit(direct.announce(task.id))

    # --- reading --------------------------------------------------------------------------

    @property
    def prompt_id(self) -> str:
        """The prompt's correlation id."""
        return self.envelope.prompt_id

    @property
    def responder(self) -> str | None:
        """Who is answering now (the "Answering as" field)."""
        return self.who.value

    @property
    def watched(self) -> tuple[GatewayLink, str] | None:
        """The gateway watching this card's task while the card answers directly, and
        its id of the task (set by the conversation, or by the card shown alone)."""
        return self.sender.watched if isinstance(self.sender, DirectSender) else None

    @property
    def gate(self) -> ResponderGate:
        """The S-3 gate of this prompt (``ballots`` holds a consensus' answers)."""
        return self.who.gate

    @property
    def _pending(self) -> bool:
        """An answer is on its way, or accepted and not settled."""
        return self.state in ("sending", "accepted")

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
            return self._record(cannot_hold(exc))
        if not self.form.is_valid:
            return self._record(does_not_match([e.to_json() for e in self.form.errors]))
        self._options = {"responder": responder, "override": override}
        try:
            self.form.submit()
        except (FormClosed, FormInvalid) as exc:
            return self._record(takes_no_answer(exc))
        finally:
            self._options = {}
        return self._await_outcome(timeout)

    def _await_outcome(self, timeout: float | None) -> Outcome:
        # A card that stops pending (closed by the task, settled) records its outcome
        # just after: with none recorded yet, that outcome is the one to wait for.
        # The conversation's redraw is waited for outside the card's lock: its update
        # holds the conversation's lock and takes the card's.
        with self._lock:
            done = self.outcomes[-1] if not self._pending and self.outcomes else None
            pending = self._next
        if done is not None:
            return self._drawn(done)
        try:
            return self._drawn(wait_blocking(lambda: pending, timeout))
        except TimeoutError:
            with self._lock:
                if not self._pending and self.outcomes:
                    return self.outcomes[-1]
                self.state = "done"
            return self._record(not_continued(timeout, self.task))

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
        if outcome is None:
            outcome = wait_blocking(lambda: pending, timeout, click=click)
        return self._drawn(outcome)

    async def wait_async(self, timeout: float | None = None) -> Outcome:
        """``await`` form of :meth:`wait`, for a notebook cell: the click is handled while
        the cell awaits (ipykernel >= 7.4). Same timeout and result."""
        pending, click, outcome = self._waiting()
        if outcome is None:
            outcome = await wait_async(lambda: pending, timeout, click=click)
        return self._drawn(outcome)

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
        sender = self.sender
        if isinstance(sender, GatewaySender):  # the gateway says who is answering (S-3)
            reason = sender.refusal(responder, override)
            if reason is not None:
                self._reopen()
                self._record(refused(reason))
            elif self._start_sending():
                self.status.value = sending_html(to=sender.host)
                self.link.submit(self._deliver(sender.send(payload), waited=False))
            return
        decision = self.who.decide(payload, responder, override)
        if decision.action == "refuse":
            self._reopen()
            self._record(refused(decision.reason))
            return
        if decision.action == "hold":
            self._reopen()
            self._record(held(decision.reason))
            return
        assert decision.payload is not None
        if not self._start_sending():
            return
        # Only an override is worth a note: it is what the outcome must not hide (S-3).
        note = decision.reason if self.who.overridden else ""
        self.status.value = sending_html(note)
        # Not followed, a card waits for the agent in the send itself.
        waited = self._followed() is None
        sending = sender.send(
            self.task, decision.payload, note=note, wait=waited, validate=validate
        )
        self.link.submit(self._deliver(sending, waited=waited))

    def _start_sending(self) -> bool:
        """Mark the card ``sending`` (False, and said on the card, when it is closed)."""
        with self._lock:
            if not self.is_open:
                self._record(closed_already())
                return False
            self.state = "sending"
        return True

    def _followed(self) -> Watcher | None:
        """The conversation following this card's task, if it still does."""
        watcher = self._watcher() if self._watcher is not None else None
        return watcher if watcher is not None and watcher.following else None

    async def _deliver(self, sending: Awaitable[Verdict], *, waited: bool) -> None:
        """Show what the sender says became of the answer (never left saying "sending").
        ``waited``: the send itself waited for the agent to move on."""
        try:
            verdict = await sending
        except Exception as exc:
            self._reopen()
            self.who.reset()
            self._finish(broken(exc), state="open")
            raise
        outcome = verdict.outcome
        if verdict.tally is not None:  # a consensus' count, on the responder line
            self.who.show_tally(verdict.tally)
        if outcome.accepted:
            await self._accepted(verdict, waited)
        elif isinstance(outcome.error, PromptConflict):  # the task tells why it was closed
            task = await self._look()
            self._finish(self._closing(task, outcome.error))
        elif outcome.status == "invalid":
            self.form.set_errors(outcome.validation_errors)  # opens the form again
            self.who.reset()  # a corrected answer may follow
            self._finish(outcome, state="open")
        elif verdict.open_again:
            if outcome.status == "refused" and outcome.error is not None:
                self.who.show_refusal(str(outcome.error))
            self._reopen()
            self.who.reset()
            self._finish(outcome, state="open")
        else:
            self._finish(outcome)

    async def _accepted(self, verdict: Verdict, waited: bool) -> None:
        """The agent took our answer: the conversation follows it on, or it is recorded."""
        with self._lock:
            self.state = "accepted"
            if verdict.task is not None:
                self.task = verdict.task
        self._words = verdict.words
        self.status.value = waiting_html(self._words)
        result = verdict.task
        if result is None and self._followed() is None:
            result = await self._look()  # through a gateway (no task in its answer): look once
        watcher = self._watcher() if self._watcher is not None else None
        if not waited and watcher is not None:
            watcher.answer_accepted(self, result)
        else:
            self.settled(result or self.task)

    async def _look(self) -> Task | None:
        """The task as the agent has it now, kept on the card (None: it cannot be read)."""
        try:
            task = await self.link.client.get_task(self.task.id)
        except HitlError:
            return None
        self.task = task
        return task

    def _closing(self, task: Task | None, conflict: PromptConflict | None = None) -> Outcome:
        return closing(task, self.envelope, signaled=self.timeout_signaled, conflict=conflict)

    def _reopen(self) -> None:
        self.form.set_errors([])

    def _disable(self) -> None:
        self.form.disabled = True
        self.who.disable()
        self._note = ""  # notes about answering are moot now

    # --- told by the conversation ---------------------------------------------------------

    def settled(self, task: Task) -> None:
        """The agent moved on after our accepted answer: record the outcome."""
        with self._lock:
            if self.state != "accepted":
                return
            self.state = "done"
            self.task = task
        self._finish(settled(self._words, task))

    def closed_by(self, task: Task) -> None:
        """The task left this prompt without our answer: say why, close the form.

        A gateway that knows the task is asked first whether it forwarded an answer
        (given in the prompts panel, or another card), and whose: through a gateway,
        with our consensus answer held there, whether it was the one we agreed to."""
        with self._lock:
            if self.state != "open":
                return  # an answer in flight reports for itself
            self.task = task
            if self.sender.knows:
                self.state = "sending"  # the gateway may have forwarded an answer, ours too
                self.form.disabled = True
                self.link.submit(self._after_close(task))
                return
            self.state = "done"
        self._finish(self._closing(task))

    async def _after_close(self, task: Task) -> None:
        """What the gateway says became of the prompt, on the card (never left saying
        "sending")."""
        try:
            outcome, tally = await self.sender.moved_on(task, self.who.value)
        except Exception:
            outcome, tally = None, None
        if tally is not None:
            self.who.show_tally(tally)
        self._finish(outcome or self._closing(task))

    def watch(self, gateway: GatewayLink, registration: str) -> None:
        """The kernel's gateway watches this card's task (the card answers directly)."""
        if isinstance(self.sender, DirectSender):
            self.sender.watch(gateway, registration)

    def registered(self, registration: str) -> None:
        """The conversation registered the task with the gateway: answers use it, and a
        consensus card shows the gateway's count."""
        if isinstance(self.sender, GatewaySender) and self.sender.registered(registration):
            self.show_count()

    def show_count(self) -> None:
        """Ask the gateway for a consensus card's count, in the background."""
        sender = self.sender
        if isinstance(sender, GatewaySender) and sender.needed > 1:
            self.link.submit(self._show_count(sender))

    async def _show_count(self, sender: GatewaySender) -> None:
        tally = await sender.count()
        if tally is not None:
            self.who.show_tally(tally)

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
            self._note = "The deadline passed; the agent still takes answers to this prompt."
            self.notes.value = self._notes_html()

    def stop(self, reason: str) -> None:
        """The conversation stopped following: an open card says so (answers still go)."""
        if self.is_open:
            self._note = f"Not following the task any more: {reason}."
            self.notes.value = self._notes_html()

    # --- display --------------------------------------------------------------------------

    def _shown(self) -> None:
        place(self.link.client.agent, self.task.id)  # where the prompts panel shows it

    def _meta(self) -> list[str]:
        env = self.envelope
        return [
            deadline_html(env, live=self.state != "done"),
            responders_html(env),
            f"prompt <code>{esc(env.prompt_id)}</code>",
        ]

    def _notes(self) -> list[str]:
        warnings = [f.message for f in self.envelope.findings if f.severity == "warning"]
        lines = "".join(f"<li>{esc(n)}</li>" for n in warnings)
        warn = COLORS["warn"]
        out = []
        if lines:
            out.append(
                f'<div style="font-size:smaller;color:{warn}">The orchestrator check noted:'
                f"<ul>{lines}</ul></div>"
            )
        if self._note:
            out.append(f'<div style="color:{warn}">{esc(self._note)}</div>')
        return out

    def _text_lines(self) -> list[str]:
        lines = [responders_text(self.envelope)]
        if self.envelope.deadline:
            lines.append(deadline_text(self.envelope))
        if self.who.text():
            lines.append(self.who.text())
        return lines


#: Schedules a coroutine on the shared loop.
Submit = Callable[[Coroutine[Any, Any, Outcome]], "concurrent.futures.Future[Outcome]"]


class GatewayCard(Card):
    """One prompt from the gateway's inbox, its form, and what the server did with it.

    Like a :class:`PromptCard` it shows the question, the deadline counting down (S-4)
    and who may answer (S-3); but its answer goes only to the Jupyter server's gateway
    (``sender``, a gateway sender), which decides whether the user it vouches for may
    answer, collects a consensus and forwards the answer to the agent at most once, in
    the same words as a ``PromptCard`` in gateway mode. A consensus' count after our
    answer replaces the listing's. ``submit`` schedules on the shared loop;
    ``on_answered`` is called when the server acted on an answer (the list changes).

    Attributes: ``item``, ``form``, ``outcomes``, ``state`` (``open``, ``sending``,
    ``done``), ``widget``.
    """

    def __init__(
        self,
        item: InboxItem,
        sender: GatewaySender,
        submit: Submit,
        on_answered: Callable[[], Any],
    ) -> None:
        self.item = item
        self.sender = sender
        self._submit_coro = submit
        self._on_answered = on_answered
        #: The gateway's count of a consensus after our answer (None: the listing's).
        self._tally: Tally | None = None
        self._gone = False
        self.form = Form(item.envelope.response_schema)
        super().__init__(item.envelope.prompt, [self.form], self.form)
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
            return self._record(not_yours(self.item.why_not))
        try:
            self.form.value = dict(payload)
        except FormValueError as exc:
            return self._record(cannot_hold(exc))
        with self._lock:
            waiting = self._next
        try:
            self.form.submit()
        except FormInvalid:
            return self._record(does_not_match([e.to_json() for e in self.form.errors]))
        except FormClosed as exc:
            return self._record(takes_no_answer(exc))
        try:
            return wait_blocking(lambda: waiting, timeout)
        except TimeoutError:
            return gateway_silent(timeout, self.sender.host)

    def _on_form_submit(self, payload: dict[str, Any]) -> None:
        with self._lock:
            if self.state != "open":
                return
            self.state = "sending"
        self.status.value = sending_html(to=self.sender.host)
        self._submit_coro(self._deliver(payload))

    async def _deliver(self, payload: dict[str, Any]) -> Outcome:
        try:
            verdict = await self.sender.send(payload)
        except Exception as exc:  # never leave the card saying "sending"
            verdict = Verdict(broken(exc), True)
        outcome = verdict.outcome
        if verdict.tally is not None:  # the consensus' count goes in the notes
            self._tally = verdict.tally
            self.notes.value = self._notes_html()
        if outcome.status == "invalid":
            self.form.set_errors(outcome.validation_errors)  # opens the form again
        elif verdict.open_again:
            self._reopen()
        if outcome.status not in ("invalid", "failed"):
            self._on_answered()  # the server acted on it: the list changes
        return self._finish(outcome, "open" if verdict.open_again else "done")

    def _reopen(self) -> None:
        self.form.set_errors([])

    def _disable(self) -> None:
        self.form.disabled = True

    def gone(self) -> None:
        """The prompt left the inbox (answered elsewhere, closed, expired)."""
        with self._lock:
            if self.state != "open":
                return
            self.state = "done"
        self._gone = True
        self._disable()
        self._put_away()
        self.redraw()

    # --- display --------------------------------------------------------------------------

    def _meta(self) -> list[str]:
        env, item = self.item.envelope, self.item
        return [
            deadline_html(env, live=self.state != "done"),
            responders_html(env),
            f'task <code style="font-size:inherit">{esc(item.task_id)}</code> at '
            f"{esc(item.agent_url)}",
        ]

    def _notes(self) -> list[str]:
        if self._gone:
            return [f'<div style="color:{COLORS["warn"]}">{esc(GONE)}</div>']
        item = self.item
        lines = []
        if item.why_not:
            lines.append(
                f'<div style="color:{COLORS["warn"]}">You cannot answer this prompt: '
                f"{esc(item.why_not)}</div>"
            )
        tally = self._tally or Tally(item.agreeing, item.needed, item.answers, item.disagreement)
        if tally.needed > 1:
            lines.append(f'<div style="color:{MUTED}">{esc(tally_words(tally))}.</div>')
        return lines

    def _text_lines(self) -> list[str]:
        env, item = self.item.envelope, self.item
        lines = [responders_text(env)]
        if env.deadline:
            lines.append(deadline_text(env))
        if item.why_not:
            lines.append(f"you cannot answer: {item.why_not}")
        tally = self._tally or Tally(item.agreeing, item.needed, item.answers, item.disagreement)
        if tally.needed > 1:
            lines.append(tally_words(tally))
        return lines


class QuestionCard(Card):
    """A question without an envelope: its text, a text box, Send, and the outcome.

    An agent that did not activate hitl-prompt/v1 (or a client that did not ask for it)
    still reaches INPUT_REQUIRED with a status message; A2A's answer is a message with
    text in the same task. The card shows the question as text (S-1) and sends what is
    typed.
    """

    has_notes = False

    def __init__(self, link: Link, task: Task, watcher: Watcher | None = None) -> None:
        self.link = link
        self.task = task
        self.sender = TextSender(link)
        self._watcher = weakref.ref(watcher) if watcher is not None else None
        self.text = W.Textarea(placeholder="your answer", layout=W.Layout(width="100%"))
        self.text.add_class("hitl-question-answer")
        self.send_button = W.Button(description="Send", button_style="primary")
        self.send_button.add_class("hitl-submit")
        self.send_button.on_click(lambda _b: self._click())
        super().__init__(message_text(task.status.message).strip(), [self.text, self.send_button])
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
            return self._record(empty_text())
        self.text.value = text
        pending = self._submit(text)
        if pending is None:
            assert self.outcome is not None
            return self._drawn(self.outcome)
        try:
            return self._drawn(wait_blocking(lambda: pending, timeout))
        except TimeoutError:
            with self._lock:
                self.state = "done"
            return self._record(not_continued(timeout, self.task))

    def _submit(self, text: str) -> concurrent.futures.Future[Outcome] | None:
        with self._lock:
            if self.state != "open":
                self._record(closed_already("question"))
                return None
            self.state = "sending"
            pending = self._next
        self._disable()
        self.status.value = sending_html()
        self.link.submit(self._deliver(text))
        return pending

    async def _deliver(self, text: str) -> None:
        watcher = self._watcher() if self._watcher is not None else None
        following = watcher is not None and watcher.following
        verdict = await self.sender.send(self.task, text, following=following)
        if not verdict.outcome.accepted:
            self._reopen()
            self._finish(verdict.outcome, state="open")
            return
        with self._lock:
            self.state = "accepted"
        self.status.value = waiting_html(ACCEPTED)
        if following and watcher is not None:
            watcher.answer_accepted(self, verdict.task)
        else:
            self.settled(verdict.task or self.task)

    def _reopen(self) -> None:
        self.text.disabled = self.send_button.disabled = False

    def _disable(self) -> None:
        self.text.disabled = self.send_button.disabled = True

    def _put_away(self) -> None:
        self.send_button.layout.display = "none"
        if not self.text.value.strip():
            self._drop([self.text, self.send_button])

    # --- told by the conversation ---------------------------------------------------------

    def settled(self, task: Task) -> None:
        """The agent moved on after the answer."""
        with self._lock:
            if self.state != "accepted":
                return
            self.state = "done"
        self.task = task
        self._finish(settled(ACCEPTED, task))

    def closed_by(self, task: Task) -> None:
        """The task moved on without this answer."""
        with self._lock:
            if self.state != "open":
                return
            self.state = "done"
        self._finish(question_closed(task))

    # --- display --------------------------------------------------------------------------

    def _meta(self) -> list[str]:
        return [
            "a question in plain text (the agent sent no hitl-prompt/v1 envelope): answer with text"
        ]

    def _text_lines(self) -> list[str]:
        return ["(plain-text question: answer with text)"]
