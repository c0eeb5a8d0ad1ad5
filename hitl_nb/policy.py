"""Who may answer a prompt, and when an answer may be forwarded (spec S-3).

``allowed_responders`` is advisory for the agent: the agent does not check who answered,
so the orchestrator MUST authenticate the responder and authorize them against the list
before it forwards the response (§Security Considerations S-3). :class:`ResponderGate`
is that check, for one prompt:

- ``any``: any authenticated responder;
- ``specific:<id>``: only the named principals (several ``specific`` entries: any of them);
- ``consensus:N``: the answer is forwarded once N distinct responders have sent the same
  payload; until then it is held (§Responder policy). How the answers stand is a
  :class:`Tally`, counted by :func:`tally` wherever a consensus is counted: here, in the
  gateway (its replies and its listings) and in the cards' words;
- unknown patterns are ignored (forward compatibility); a list with nothing but unknown
  patterns reads like an absent one, ``["any"]``.

Who the responder *is* comes from the caller: a notebook's :class:`~hitl_nb.notebook`
helpers pass the name they were given, or ``JUPYTERHUB_USER`` when running under
JupyterHub. The gate decides; it authenticates nobody.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from ._json import dumps_compact
from .responders import (
    AnyResponder,
    ConsensusResponder,
    Responder,
    SpecificResponder,
    UnknownResponder,
)

__all__ = ["Decision", "ResponderGate", "Tally", "current_responder", "tally"]


def current_responder(explicit: str | None = None) -> str | None:
    """The responder's identity: ``explicit``, else ``JUPYTERHUB_USER``, else None."""
    return explicit or os.environ.get("JUPYTERHUB_USER") or None


class Tally(NamedTuple):
    """How a consensus prompt's answers stand: ``agreeing`` of ``needed`` agree, out of
    ``answers`` given (one per responder, their latest); ``disagreement`` when the
    answers differ."""

    agreeing: int
    needed: int
    answers: int
    disagreement: bool

    @property
    def reached(self) -> bool:
        """Enough responders agree: the answer goes to the agent."""
        return self.agreeing >= self.needed


def tally(answers: Iterable[str], needed: int, of: str | None = None) -> Tally:
    """Count a consensus: ``answers`` are each responder's latest answer as canonical
    JSON (equal answers are equal texts). ``agreeing`` counts the answers equal to
    ``of`` (the one just given: does it complete the consensus?), else the largest
    group of equal answers (how close the prompt is)."""
    groups = Counter(answers)
    agreeing = groups[of] if of is not None else max(groups.values(), default=0)
    return Tally(agreeing, needed, sum(groups.values()), len(groups) > 1)


@dataclass(frozen=True)
class Decision:
    """What the gate decided about one answer.

    ``action`` is ``"forward"`` (send ``payload`` to the agent now), ``"hold"`` (a
    consensus is not reached yet) or ``"refuse"`` (``reason``); ``tally``: how a
    consensus stands with this answer counted (None for a prompt one answer settles, or
    an answer refused).
    """

    action: Literal["forward", "hold", "refuse"]
    reason: str
    payload: dict[str, Any] | None = None
    tally: Tally | None = None


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
        if self._forwarded:
            return Decision("refuse", "an answer was already forwarded")
        reason = self.may_answer(responder)
        if reason is not None:
            return Decision("refuse", reason)
        key = responder if responder is not None else "(anonymous)"
        self._ballots[key] = payload  # a responder may change their mind before consensus
        if self.needed == 1:
            self._forwarded = True
            return Decision("forward", "allowed", payload)
        count = self.tally(of=payload)
        words = f"{count.agreeing} of {count.needed} agree"
        if count.reached:
            self._forwarded = True
            return Decision("forward", words, payload, count)
        return Decision("hold", f"{words} so far", None, count)

    def tally(self, of: dict[str, Any] | None = None) -> Tally:
        """How the answers recorded here stand (:func:`tally`; ``of``: one answer's
        agreeing, else the largest group's)."""
        answers = (dumps_compact(p) for p in self._ballots.values())
        return tally(answers, self.needed, None if of is None else dumps_compact(of))

    @property
    def ballots(self) -> dict[str, dict[str, Any]]:
        """Each responder's latest answer (a copy)."""
        return dict(self._ballots)
