"""Who may answer a prompt, and when an answer may be forwarded (spec S-3).

``allowed_responders`` is advisory for the agent: the agent does not check who answered,
so the orchestrator MUST authenticate the responder and authorize them against the list
before it forwards the response (§Security Considerations S-3). :class:`ResponderGate`
is that check, for one prompt:

- ``any``: any authenticated responder;
- ``specific:<id>``: only the named principals (several ``specific`` entries: any of them);
- ``consensus:N``: the answer is forwarded once N distinct responders have sent the same
  payload; until then it is held (§Responder policy);
- unknown patterns are ignored (forward compatibility); a list with nothing but unknown
  patterns reads like an absent one, ``["any"]``.

Who the responder *is* comes from the caller: a notebook's :class:`~hitl_nb.notebook`
helpers pass the name they were given, or ``JUPYTERHUB_USER`` when running under
JupyterHub. The gate decides; it authenticates nobody.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Literal

from ._json import dumps_compact
from .responders import (
    AnyResponder,
    ConsensusResponder,
    Responder,
    SpecificResponder,
    UnknownResponder,
)

__all__ = ["Decision", "ResponderGate", "current_responder"]


def current_responder(explicit: str | None = None) -> str | None:
    """The responder's identity: ``explicit``, else ``JUPYTERHUB_USER``, else None."""
    return explicit or os.environ.get("JUPYTERHUB_USER") or None


@dataclass(frozen=True)
class Decision:
    """What the gate decided about one answer.

    ``action`` is ``"forward"`` (send ``payload`` to the agent now), ``"hold"`` (a
    consensus is not reached yet: ``votes`` of ``needed``) or ``"refuse"`` (``reason``).
    """

    action: Literal["forward", "hold", "refuse"]
    reason: str
    payload: dict[str, Any] | None = None
    votes: int = 0
    needed: int = 1


@dataclass
class ResponderGate:
    """The S-3 check for one prompt's ``allowed_responders``.

    Build it from ``PromptEnvelope.responders``; call :meth:`submit` with each answer
    and its responder; forward only when it says ``"forward"``.
    """

    responders: tuple[Responder, ...]
    _ballots: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    _forwarded: bool = field(default=False, repr=False)

    @property
    def known(self) -> tuple[Responder, ...]:
        """The entries this version understands (unknown patterns are ignored)."""
        known = tuple(r for r in self.responders if not isinstance(r, UnknownResponder))
        return known or (AnyResponder(),)

    @property
    def specific(self) -> frozenset[str]:
        """The principals named by ``specific:<id>`` entries (empty: no restriction)."""
        return frozenset(r.id for r in self.known if isinstance(r, SpecificResponder))

    @property
    def needed(self) -> int:
        """How many distinct responders must agree (1 without a consensus entry)."""
        counts = [r.n for r in self.known if isinstance(r, ConsensusResponder)]
        return max(counts, default=1)

    def may_answer(self, responder: str | None) -> str | None:
        """None when ``responder`` may answer; otherwise the reason they may not."""
        specific = self.specific
        if specific:
            if responder is None:
                return "this prompt names its responders; say who you are (responder=...)"
            if responder not in specific:
                names = ", ".join(sorted(specific))
                return f"{responder!r} may not answer: the prompt is for {names}"
        elif self.needed > 1 and responder is None:
            return f"a consensus of {self.needed} needs each responder's name (responder=...)"
        return None

    def submit(self, responder: str | None, payload: dict[str, Any]) -> Decision:
        """Record ``responder``'s answer and decide: forward, hold, or refuse."""
        needed = self.needed
        if self._forwarded:
            return Decision("refuse", "an answer was already forwarded", needed=needed)
        reason = self.may_answer(responder)
        if reason is not None:
            return Decision("refuse", reason, needed=needed)
        key = responder if responder is not None else "(anonymous)"
        self._ballots[key] = payload  # a responder may change their mind before consensus
        if needed == 1:
            self._forwarded = True
            return Decision("forward", "allowed", payload, votes=1, needed=1)
        canonical = dumps_compact(payload)
        votes = sum(1 for p in self._ballots.values() if dumps_compact(p) == canonical)
        if votes >= needed:
            self._forwarded = True
            return Decision("forward", f"{votes} of {needed} agree", payload, votes, needed)
        return Decision("hold", f"{votes} of {needed} agree so far", None, votes, needed)

    @property
    def ballots(self) -> dict[str, dict[str, Any]]:
        """Each responder's latest answer (a copy)."""
        return dict(self._ballots)
