"""What became of one answer: :class:`Outcome`, in one plain line."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from hitl_nb.a2a import Task

from ._style import COLORS, esc

__all__ = ["Outcome", "Status", "outcome_html"]

Status = Literal["accepted", "held", "refused", "invalid", "conflict", "failed"]

_KIND = {
    "accepted": "ok",
    "held": "warn",
    "refused": "error",
    "invalid": "error",
    "conflict": "error",
    "failed": "error",
}


@dataclass(frozen=True, repr=False)
class Outcome:
    """What became of one answer.

    ``status``: ``accepted`` (the agent took it), ``held`` (a consensus is still
    gathering), ``refused`` (the responder may not answer, S-3), ``invalid`` (checked
    locally or 422 from the agent: see ``validation_errors``), ``conflict`` (409: the
    prompt was answered already or is unknown) or ``failed`` (the agent could not be
    reached, or answered with another error). ``message`` says it in words; ``task`` is
    the task as the agent last reported it, when known.
    """

    status: Status
    message: str
    task: Task | None = None
    validation_errors: list[dict[str, Any]] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"{self.status}: {self.message}"]
        lines += [f"  {e.get('path') or '/'}: {e.get('message')}" for e in self.validation_errors]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Outcome {self.status}: {self.message}>"


def outcome_html(outcome: Outcome) -> str:
    """The outcome as the card's status line (escaped; theme colours)."""
    color = COLORS[_KIND[outcome.status]]
    details = "".join(
        f"<li><code>{esc(e.get('path') or '/')}</code> {esc(e.get('message'))}</li>"
        for e in outcome.validation_errors
    )
    return (
        f'<div style="color:{color}"><b>{esc(outcome.status)}</b>: '
        f"{esc(outcome.message)}{f'<ul>{details}</ul>' if details else ''}</div>"
    )
