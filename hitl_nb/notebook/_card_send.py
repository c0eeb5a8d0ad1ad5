"""How a prompt card's answer goes to the agent, and what the card says of it.

Answers are sent on the conversation's background loop, whether clicked or given from
code, so the kernel stays free while the agent works. An answer is ``accepted`` once
the agent took it; the card records that outcome when the agent has moved on (the task
is interrupted again or has ended). A 409 is told apart by the task: the deadline passed
(``expired``), the task ended first (``closed``), or someone else answered (``conflict``).
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any, Protocol

from hitl_nb.a2a import Task, TaskState
from hitl_nb.client import AnswerOutcomeUnknown
from hitl_nb.errors import HitlError, PromptConflict, ResponseInvalid

from ._card_view import CardView
from ._deadline import seconds_left
from ._link import Link
from ._outcome import Outcome, refused_by_agent, status_html
from ._parts import message_text

__all__ = ["CardSending", "Watcher"]

_ENDED = {
    TaskState.FAILED: "failed",
    TaskState.CANCELED: "was canceled",
    TaskState.REJECTED: "was rejected",
}

_ACCEPTED = "the agent accepted the answer"


class Watcher(Protocol):
    """What a card needs of the conversation that follows its task."""

    @property
    def following(self) -> bool: ...

    def answer_accepted(self, card: Any, result: Any) -> None: ...


class CardSending(CardView):
    """The sending side of :class:`~hitl_nb.notebook.PromptCard` (its base class).

    The attributes below are set by ``PromptCard.__init__``.
    """

    link: Link
    task: Task
    #: The conversation, weakly (None: the card is not followed).
    _watcher: weakref.ref[Watcher] | None
    #: A note that goes with the accepted outcome (an override, S-3; the gateway's words).
    _note: str
    #: The agent signalled that this prompt's deadline passed (e.g. ``hitlTimeout``).
    timeout_signaled: bool

    def _start_sending(self) -> bool:
        """Mark the card ``sending`` (False, and said on the card, when it is closed)."""
        with self._lock:
            if not self.is_open:
                self._record(Outcome("failed", "this prompt is closed; nothing was sent"))
                return False
            self.state = "sending"
            self._pending = True
        return True

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
            self._finish(refused_by_agent(exc), state="open")
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
