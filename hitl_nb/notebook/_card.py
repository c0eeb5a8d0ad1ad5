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
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import ipywidgets as W

from hitl_nb._waiting import wait_async, wait_blocking
from hitl_nb.a2a import Task, TaskState
from hitl_nb.client import AnswerOutcomeUnknown, SyncHitlClient
from hitl_nb.errors import HitlError, PromptConflict, ResponseInvalid
from hitl_nb.forms import Form, FormClosed, FormInvalid, FormValueError
from hitl_nb.policy import ResponderGate
from hitl_nb.spec import PromptEnvelope

from ._deadline import deadline_html, deadline_text, seconds_left
from ._gateway_link import GatewayLink
from ._link import Link
from ._outcome import Outcome, outcome_html, status_html
from ._parts import message_text
from ._responder import ResponderField, responders_html, responders_text
from ._style import COLORS, MUTED, esc
from ._via_gateway import ViaGateway

__all__ = ["PromptCard"]

_ENDED = {
    TaskState.FAILED: "failed",
    TaskState.CANCELED: "was canceled",
    TaskState.REJECTED: "was rejected",
}


class _Watcher(Protocol):
    @property
    def following(self) -> bool: ...

    def answer_accepted(self, card: PromptCard, result: Any) -> None: ...


_ACCEPTED = "the agent accepted the answer"

#: What to do instead of blocking a cell for a click (ClickNeeded's advice).
_CLICK = "in a cell, `await card.wait_async(timeout)`; or answer from code: `card.answer({...})`"


class PromptCard:
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
    def prompt_id(self) -> str:
        """The prompt's correlation id."""
        return self.envelope.prompt_id

    @property
    def responder(self) -> str | None:
        """Who is answering now (the "Answering as" field)."""
        return self.who.value

    @property
    def gate(self) -> ResponderGate:
        """The S-3 gate of this prompt (``ballots`` holds a consensus' answers)."""
        return self.who.gate

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
            self._submit_via_gateway(payload, responder, override)
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
        with self._lock:
            if not self.is_open:
                self._record(Outcome("failed", "this prompt is closed; nothing was sent"))
                return
            self.state = "sending"
            self._pending = True
        # Only an override is worth a note: it is what the outcome must not hide (S-3).
        note = decision.reason if self.who.overridden else ""
        self.status.value = status_html("info", "sending", "the answer is on its way" + (
            f" ({note})" if note else ""))  # fmt: skip
        self.link.submit(self._send(decision.payload, note, validate))

    def _submit_via_gateway(
        self, payload: dict[str, Any], responder: str | None, override: bool
    ) -> None:
        assert self.via is not None
        reason = self.via.local_refusal(responder, override)
        if reason is not None:
            self._reopen()
            self._record(Outcome("refused", reason))
            return
        with self._lock:
            if not self.is_open:
                self._record(Outcome("failed", "this prompt is closed; nothing was sent"))
                return
            self.state = "sending"
            self._pending = True
        self.status.value = status_html(
            "info", "sending", "the answer is on its way to the Jupyter server"
        )
        self.link.submit(self.via.send(payload))

    async def _send(self, payload: dict[str, Any], note: str, validate: bool = True) -> None:
        task = self.task
        watcher = self._watcher() if self._watcher is not None else None
        # Not followed, a card waits for the agent in the send itself.
        wait = watcher is None or not watcher.following
        del watcher
        try:
            result = await self.link.client.respond(
                task.id, self.prompt_id, payload, prompt=self.envelope,
                context_id=task.context_id, wait=wait, validate=validate,
            )  # fmt: skip
        except ResponseInvalid as exc:
            self.form.set_errors(exc.validation_errors)
            self.who.reset()  # a corrected answer may follow
            self._finish(Outcome("invalid", f"422 {exc.message}: the agent refused the answer",
                                 None, exc.validation_errors, error=exc), state="open")  # fmt: skip
            return
        except PromptConflict as exc:
            outcome = await self._why_conflict(exc)
            self._finish(dataclasses.replace(outcome, error=exc), state="done")
            return
        except AnswerOutcomeUnknown as exc:
            self._finish(Outcome("failed", f"{exc}", error=exc), state="done")
            return
        except HitlError as exc:
            self._reopen()
            self.who.reset()
            self._finish(
                Outcome("failed", f"the answer could not be delivered: {exc}", error=exc), "open"
            )
            return
        except Exception as exc:  # never leave the card saying "sending" forever
            self._reopen()
            self.who.reset()
            self._finish(Outcome("failed", f"{type(exc).__name__}: {exc}"), state="open")
            raise
        await self._accepted(result, note, wait)

    async def _accepted(self, result: Any, note: str, wait: bool) -> None:
        """The agent took our answer: wait for it to move on (followed) or record it."""
        with self._lock:
            self.state = "accepted"
            if isinstance(result, Task):
                self.task = result
        task = self.task
        self._note = note
        self.status.value = status_html(
            "ok", "accepted", f"{self._accepted_words()}; waiting for it to continue…"
        )
        watcher = self._watcher() if self._watcher is not None else None
        if result is None and (watcher is None or not watcher.following):
            try:  # through a gateway (no task in its answer), not followed: look once
                result = await self.link.client.get_task(task.id)
            except HitlError:
                result = task
        if not wait and watcher is not None:
            watcher.answer_accepted(self, result)
        else:
            self.settled(result if isinstance(result, Task) else task)

    async def _why_conflict(self, exc: PromptConflict) -> Outcome:
        try:
            task: Task | None = await self.link.client.get_task(self.task.id)
        except HitlError:
            task = None
        if task is not None:
            self.task = task
        return self._closing_outcome(task, answered_elsewhere=f"409 {exc.message}")

    def _closing_outcome(self, task: Task | None, answered_elsewhere: str = "") -> Outcome:
        left = seconds_left(self.envelope)
        passed = left is not None and left <= 0
        words = ""
        if task is not None and task.status.message is not None:
            said = message_text(task.status.message).strip()
            words = f": {said}" if said else ""
        if task is not None and task.status.state in _ENDED:
            ended = _ENDED[task.status.state]
            if passed or self.timeout_signaled:
                return Outcome("expired", f"the deadline passed and the task {ended}{words}", task)
            return Outcome(
                "closed", f"the task {ended} before this prompt was answered{words}", task
            )
        if passed:
            return Outcome(
                "expired",
                "the deadline passed and the agent no longer takes answers to this prompt",
                task,
            )
        why = f" ({answered_elsewhere})" if answered_elsewhere else ""
        return Outcome(
            "conflict", f"someone else answered this prompt first; the agent moved on{why}", task
        )

    # --- told by the conversation ---------------------------------------------------------

    def settled(self, task: Task) -> None:
        """The agent moved on after our accepted answer: record the outcome."""
        with self._lock:
            if self.state != "accepted":
                return
            self.state = "done"
            self.task = task
        self._finish(Outcome(
            "accepted", f"{self._accepted_words()}; the task is now {task.status.state.name}", task,
        ), state="done")  # fmt: skip

    def _accepted_words(self) -> str:
        """Words for an accepted answer: the note (who sent it) and, from the client's
        receipt, plainly when it landed slowly or was seen only on the task."""
        words = _ACCEPTED + (f" ({self._note})" if self._note else "")
        receipt = getattr(self.link.client, "receipt", None)
        made = receipt(self.prompt_id) if callable(receipt) else None
        said = made.describe() if made is not None else _ACCEPTED
        # describe() is "the agent accepted the answer" and what was unusual, if anything
        return words + (said[len(_ACCEPTED) :] if said.startswith(_ACCEPTED) else f"; {said}")

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
        with self._lock:
            self.outcomes.append(outcome)
            self.status.value = outcome_html(outcome)
            waiting, self._next = self._next, concurrent.futures.Future()
        waiting.set_result(outcome)
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
