"""Who is answering a prompt, and may they (spec S-3).

"Orchestrators MUST authenticate and authorize the human responder against
``allowed_responders`` before forwarding the response" (§Security Considerations S-3):
the card is that orchestrator. A prompt that names its responders (``specific:<id>``,
``consensus:N``) gets an "Answering as" field (CSS class ``hitl-responder``), prefilled
with the Jupyter identity (``JUPYTERHUB_USER``) or the configured responder. An answer
from someone the prompt does not name is not sent; the card says why and offers a
deliberate override, and an overridden answer says so in its outcome. A consensus is
counted here: the card shows how many agreeing answers are still needed, in the words
every card uses for a consensus' count (:func:`~._outcomes.tally_words`).

Through a responder gateway (``server_user`` given: the hub's service, or the Jupyter
server's extension), the gateway's host says who is answering: the field shows its user
and cannot be edited, there is no override, and the consensus count is the gateway's
(:meth:`ResponderField.show_tally`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as W

from hitl_nb.forms import bare
from hitl_nb.policy import Decision, ResponderGate, Tally, current_responder
from hitl_nb.responders import AnyResponder, ConsensusResponder, SpecificResponder
from hitl_nb.spec import PromptEnvelope

from ._outcomes import SERVER, tally_words
from ._style import COLORS, MUTED, esc

__all__ = ["ResponderField", "responders_html", "responders_text"]


def _responder_words(envelope: PromptEnvelope, code: Callable[[str], str]) -> str:
    """Who may answer, in words (``code`` marks an id: HTML or plain)."""
    words = []
    for r in envelope.responders:
        if isinstance(r, AnyResponder):
            words.append("anyone")
        elif isinstance(r, SpecificResponder):
            words.append(code(r.id))
        elif isinstance(r, ConsensusResponder):
            words.append(f"{r.n} people who agree")
        else:
            words.append(f"{code(str(r))} (not understood, ignored)")
    return "who may answer: " + ", ".join(words)


def responders_html(envelope: PromptEnvelope) -> str:
    """Who may answer, in words, as a fragment of the card's header."""
    return _responder_words(envelope, lambda text: f"<code>{esc(text)}</code>")


def responders_text(envelope: PromptEnvelope) -> str:
    """Who may answer, in the same words, as a line of the card's plain text."""
    return _responder_words(envelope, lambda text: text)


class ResponderField:
    """The "Answering as" field of one card and its S-3 decision.

    ``gate`` is the :class:`~hitl_nb.policy.ResponderGate` (its ballots hold a
    consensus, its :meth:`~hitl_nb.policy.ResponderGate.tally` counts them); ``widget``
    (and ``input``, ``note``, ``override``) only for prompts that name their responders:
    None for prompts anyone may answer.
    """

    def __init__(
        self,
        envelope: PromptEnvelope,
        responder: str | None = None,
        *,
        server_user: str | None = None,
        host: str | None = None,
    ) -> None:
        self.envelope = envelope
        #: What the words call the gateway's host ("the hub", "the Jupyter server").
        self.host = host or SERVER
        self.gate = ResponderGate(envelope.responders)
        self.names_responders = bool(self.gate.specific) or self.gate.needed > 1
        #: Through a gateway: the user its host vouches for (it decides).
        self.server_user = server_user
        self.signed_in = os.environ.get("JUPYTERHUB_USER") or None
        #: Whether the last decision forwarded an answer by override.
        self.overridden = False
        #: The gateway's count of a consensus (None: not heard yet).
        self.tally: Tally | None = None
        given = server_user if server_user is not None else current_responder(responder) or ""
        #: Who answers a prompt anyone may answer (no field is drawn for it).
        self._given = given
        #: The field, its note and the override box (None for a prompt anyone may answer).
        self.widget: W.VBox | None = None
        if self.names_responders:
            self._draw(given)

    def _draw(self, given: str) -> None:
        """The widgets, only for prompts that name their responders: every widget is a
        model the kernel sends and the front end builds before the card shows. They sit
        on the form's label and input columns (its stylesheet: ``hitl-columns``,
        ``hitl-input-column``), without Layout or Style models of their own but the
        override box's, whose display changes."""
        self.input = bare(
            W.Text,
            ("hitl-responder", "hitl-columns"),
            value=given,
            description="Answering as",
            placeholder="your name or id",
            disabled=self.server_user is not None,
        )
        self.override = bare(
            W.Checkbox,
            ("hitl-responder-override", "hitl-input-column"),
            value=False,
            description="Send anyway (override the prompt's list of responders)",
            indent=False,
            layout=W.Layout(display="none", width="auto"),
        )
        self.note = bare(W.HTML, ("hitl-responder-note", "hitl-input-column"))
        self.note.value = self._tally_html()
        self.input.observe(self._on_identity, names="value")
        children = [self.input, self.note]
        if self.server_user is None:
            children.append(self.override)  # through a server, nothing to override
        self.widget = W.VBox(children)

    @property
    def value(self) -> str | None:
        """Who is answering (None when the field is empty)."""
        text = (self.input.value if self.widget is not None else self._given).strip()
        return text or None

    def _on_identity(self, _change: Mapping[str, Any]) -> None:
        self.override.value = False
        self.override.layout.display = "none"
        self.note.value = self._tally_html()

    def _tally_html(self, extra: str = "") -> str:
        if self.server_user is not None:
            return self._server_html(extra)
        parts = []
        if self.signed_in and self.value and self.value != self.signed_in:
            parts.append(
                f"you are signed in as <code>{esc(self.signed_in)}</code> and answering as "
                f"<code>{esc(self.value)}</code>"
            )
        if self.gate.needed > 1:
            parts.append(esc(tally_words(self.gate.tally())))
        if extra:
            parts.append(extra)
        if not parts:
            return ""
        return f'<div style="font-size:smaller;color:{MUTED}">{"; ".join(parts)}</div>'

    def _count_words(self) -> str:
        """The gateway's count of a consensus, in words ("" for other prompts)."""
        needed = self.gate.needed
        if needed <= 1:
            return ""
        return tally_words(self.tally or Tally(0, needed, 0, False))

    def _server_html(self, extra: str = "") -> str:
        parts = [f"{self.host} says who you are and checks who may answer"]
        count = self._count_words()
        if count:
            parts.append(count)
        body = "; ".join(esc(p) for p in parts)
        if extra:
            body += "; " + extra
        return f'<div style="font-size:smaller;color:{MUTED}">{body}</div>'

    def show_tally(self, tally: Tally) -> None:
        """Show the gateway's count of a consensus prompt's answers."""
        self.tally = tally
        if self.widget is not None:
            self.note.value = self._tally_html()

    def show_refusal(self, reason: str) -> None:
        """Show why the gateway refused this person's answer (nothing was sent)."""
        if self.widget is None:
            return  # the card's status line says it
        self.note.value = self._tally_html(
            f'<span style="color:{COLORS["error"]}">{esc(reason)}</span>'
        )

    def decide(
        self, payload: dict[str, Any], responder: str | None = None, override: bool = False
    ) -> Decision:
        """Decide about one answer: forward it, hold it (consensus), or refuse it.

        ``responder`` (from code) wins over the field. A refusal because the prompt
        does not name the responder shows the override; ``override`` (or the ticked
        box) forwards it anyway, saying so in the reason.
        """
        who = responder if responder is not None else self.value
        overriding = override or (self.widget is not None and self.override.value)
        refusal = self.gate.may_answer(who)
        self.overridden = False
        if refusal is not None and overriding and who is not None and self.gate.specific:
            self.overridden = True
            names = ", ".join(sorted(self.gate.specific))
            return Decision(
                "forward",
                f"sent as {who!r}, whom the prompt does not name ({names}): overridden "
                "deliberately",
                payload,
            )
        decision = self.gate.submit(who, payload)
        if decision.action == "refuse" and self.gate.specific and who is not None:
            self.override.layout.display = None
            self.note.value = self._tally_html(
                f'<span style="color:{COLORS["error"]}">{esc(decision.reason)}. The agent '
                "does not check who answers (S-3): this card does. Tick the box to send "
                "anyway.</span>"
            )
        elif self.widget is not None:
            self.note.value = self._tally_html()
        return decision

    def reset(self) -> None:
        """Start the count again (after the agent refused the forwarded answer)."""
        if self.server_user is not None:
            return  # the gateway keeps the count
        self.gate = ResponderGate(self.envelope.responders)
        if self.widget is not None:
            self.note.value = self._tally_html()

    def disable(self) -> None:
        """No more answers: grey the field and the override out."""
        if self.widget is None:
            return
        self.input.disabled = True
        self.override.disabled = True

    def text(self) -> str:
        """ "answering as: X" for prompts that name responders ("" otherwise)."""
        if not self.names_responders or self.value is None:
            return ""
        if self.server_user is None:
            count = tally_words(self.gate.tally()) if self.gate.needed > 1 else ""
            return f"answering as: {self.value}" + (f"; {count}" if count else "")
        count = self._count_words()
        return f"answering as: {self.value} ({self.host} says so)" + (f"; {count}" if count else "")
