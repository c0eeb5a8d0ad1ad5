"""What became of one answer (:class:`Outcome`), in one plain line.

The statuses never overstate: ``accepted`` only when the agent took the answer,
``expired`` when the prompt's deadline closed it (never reported as a 409), ``closed``
when the task ended while the prompt was open, ``conflict`` when someone else answered
first. :class:`OutcomeRecord` is what every card keeps of its outcomes.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from hitl_nb.a2a import Artifact, Task, TaskState
from hitl_nb.errors import AnswerNotAccepted, HitlError, ResponseInvalid

from ._style import COLORS, esc

if TYPE_CHECKING:
    import ipywidgets as W

__all__ = [
    "Outcome", "OutcomeRecord", "Status", "outcome_html", "refused_by_agent", "status_html",
]  # fmt: skip

Status = Literal[
    "accepted", "held", "refused", "invalid", "conflict", "expired", "closed", "failed"
]

_KIND = {
    "accepted": "ok",
    "held": "warn",
    "refused": "error",
    "invalid": "error",
    "conflict": "error",
    "expired": "error",
    "closed": "error",
    "failed": "error",
}


@dataclass(frozen=True, repr=False)
class Outcome:
    """What became of one answer (or of a prompt that closed before one).

    ``status``:

    - ``accepted``: the agent took the answer;
    - ``held``: a consensus is still gathering (nothing sent yet, S-3);
    - ``refused``: this responder may not answer (S-3); nothing was sent;
    - ``invalid``: checked locally, or the agent's 422: see ``validation_errors``;
    - ``conflict``: the prompt was answered already (409), by someone else;
    - ``expired``: the prompt's deadline closed it (S-4);
    - ``closed``: the task ended (failed, canceled) while the prompt was open;
    - ``failed``: the agent could not be reached, or answered with another error.

    ``message`` says it in words; ``task`` is the task as last reported, when known;
    ``error`` the exception behind an ``invalid`` / ``conflict`` / ``expired`` /
    ``failed`` answer, when there was one. ``repr()`` is one line; ``str()`` adds one
    line per validation error, naming the field by the labels the person sees when
    ``where`` (a card's ``form.where``) is known.

    For tests: :meth:`raise_for_status`, :attr:`state`, :attr:`final_text`,
    :attr:`artifacts` and :attr:`artifact_data`::

        outcome = chat.answer({"approve": True}).raise_for_status()
        assert outcome.state is TaskState.COMPLETED
        assert outcome.artifact_data == [{"approve": True}]
    """

    status: Status
    message: str
    task: Task | None = None
    validation_errors: list[dict[str, Any]] = field(default_factory=list)
    error: HitlError | None = field(default=None, compare=False)
    #: Names a validation error's JSON Pointer by the form's labels (``Owner › Email``).
    where: Callable[[str], str] | None = field(default=None, compare=False)

    def places(self) -> list[str]:
        """One line per validation error: the field (by its labels when known) and what
        is wrong with it."""
        out = []
        for e in self.validation_errors:
            if not isinstance(e, dict):  # an agent's odd entry: shown as it came
                out.append(str(e))
                continue
            path = e.get("path")
            path = path if isinstance(path, str) else ""
            name = self.where(path) if self.where is not None else (path or "/")
            out.append(f"{name}: {e.get('message')}")
        return out

    @property
    def accepted(self) -> bool:
        """True when the agent took the answer."""
        return self.status == "accepted"

    def raise_for_status(self) -> Outcome:
        """Raise :class:`~hitl_nb.errors.AnswerNotAccepted` unless the answer was accepted
        (or is ``held``, waiting for more responders); return the outcome otherwise."""
        if self.status in ("accepted", "held"):
            return self
        raise AnswerNotAccepted(str(self), self) from self.error

    @property
    def state(self) -> TaskState | None:
        """The task's state after the answer (None when the task is not known)."""
        return self.task.status.state if self.task is not None else None

    @property
    def final_text(self) -> str | None:
        """The text of the task's latest status message: once the task is done, what the
        agent finally said (None without a task or a text part)."""
        message = self.task.status.message if self.task is not None else None
        if message is None:
            return None
        texts = [p.text for p in message.parts if p.text is not None]
        return "\n".join(texts) if texts else None

    @property
    def artifacts(self) -> list[Artifact]:
        """The task's artifacts (empty without a task)."""
        return list(self.task.artifacts) if self.task is not None else []

    @property
    def artifact_data(self) -> list[Any]:
        """The content of every artifact part, in order: the JSON value of a data part,
        the string of a text part (file parts are left out: see :attr:`artifacts`)."""
        out: list[Any] = []
        for artifact in self.artifacts:
            for part in artifact.parts:
                if part.has_data:
                    out.append(part.data)
                elif part.text is not None:
                    out.append(part.text)
        return out

    def __str__(self) -> str:
        lines = [f"{self.status}: {self.message}"]
        lines += [f"  {place}" for place in self.places()]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Outcome {self.status}: {self.message}>"


def outcome_html(outcome: Outcome) -> str:
    """The outcome as the card's status line (escaped; theme colours)."""
    return status_html(
        _KIND[outcome.status],
        outcome.status,
        outcome.message,
        outcome.places(),
    )


def status_html(kind: str, label: str, message: str, details: list[str] | None = None) -> str:
    """A status line: ``label`` in bold, then ``message``, then a list of ``details``."""
    items = "".join(f"<li>{esc(d)}</li>" for d in details or [])
    return (
        f'<div style="color:{COLORS[kind]}"><b>{esc(label)}</b>: {esc(message)}'
        f"{f'<ul>{items}</ul>' if items else ''}</div>"
    )


def refused_by_agent(exc: ResponseInvalid) -> Outcome:
    """The ``invalid`` outcome of an answer the agent refused with 422: plain words (the
    wire's error name stays in the trace), the agent's own text when it wrote one, and
    its ``validation_errors`` for the fields."""
    count = len(exc.validation_errors)
    if count:
        what = f"{count} problem{'s' if count != 1 else ''}, listed below"
    else:
        what = "it did not say why"
    own = exc.message if exc.message and exc.message != exc.default_message else ""
    said = f"; it says: {own}" if own else ""
    message = f"the agent refused the answer ({what}){said}"
    return Outcome("invalid", message, None, exc.validation_errors, error=exc)


class OutcomeRecord:
    """What a card keeps of its answers (the base of every card): each outcome in
    ``outcomes``, the last one on the status line, and ``_next``, a future resolved with
    the next outcome (what ``wait`` waits for). The card's ``__init__`` sets the
    attributes below."""

    outcomes: list[Outcome]
    #: ``open``, ``sending``, ``accepted`` or ``done``.
    state: str
    status: W.HTML
    _lock: threading.Lock | threading.RLock
    _next: concurrent.futures.Future[Outcome]

    @property
    def outcome(self) -> Outcome | None:
        """The last outcome (None before any)."""
        return self.outcomes[-1] if self.outcomes else None

    @property
    def is_open(self) -> bool:
        """True while an answer may still be given (nothing accepted, not closed)."""
        return self.state in ("open", "sending")

    def _record(self, outcome: Outcome) -> Outcome:
        with self._lock:
            self.outcomes.append(outcome)
            self.status.value = outcome_html(outcome)
            waiting, self._next = self._next, concurrent.futures.Future()
        waiting.set_result(outcome)
        return outcome
