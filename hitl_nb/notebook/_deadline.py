"""A prompt's deadline on the card (spec S-4: a soft signal)."""

from __future__ import annotations

from hitl_nb.spec import PromptEnvelope

from ._style import esc

__all__ = ["deadline_html", "deadline_text"]


def deadline_html(envelope: PromptEnvelope) -> str:
    """The deadline as a fragment of the card's header ("" without one)."""
    if not envelope.deadline:
        return ""
    return f"deadline <code>{esc(envelope.deadline)}</code>"


def deadline_text(envelope: PromptEnvelope) -> str:
    """The deadline as a line of the card's plain text ("" without one)."""
    return f"deadline: {envelope.deadline}" if envelope.deadline else ""
