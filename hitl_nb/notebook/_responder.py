"""Who is answering a prompt, and may they (spec S-3)."""

from __future__ import annotations

from hitl_nb.spec import PromptEnvelope

from ._style import esc

__all__ = ["responders_html", "responders_text"]


def responders_html(envelope: PromptEnvelope) -> str:
    """The prompt's ``allowed_responders`` as a fragment of the card's header."""
    return "responders " + ", ".join(f"<code>{esc(r)}</code>" for r in envelope.responders)


def responders_text(envelope: PromptEnvelope) -> str:
    """The prompt's ``allowed_responders`` as a line of the card's plain text."""
    return "responders: " + ", ".join(str(r) for r in envelope.responders)
