"""Durations and a consensus' count in words: the one place Python puts them.

Two readers, two wordings of a duration, each kept as people have been reading it:

- a card's clock (:func:`duration`, ``exact``): two units, cut short, ``"45 s"``,
  ``"4 min 12 s"``, ``"3 h 5 min"``, ``"2 d 1 h"`` (``notebook/_clock.py``: a countdown
  of more than an hour, a wait of more than a day);
- a message (``rough``): one unit in full words, rounded, ``"less than a minute"``,
  ``"5 minutes"``, ``"about 3 hours"``, ``"about 2 days"`` (``notify/_messages.py``: an
  email or a chat message read minutes after it was written).

JupyterLab's page has its own, as it draws (``src/words.ts``: ``"4 min"`` once past ten
minutes, ``"2 days"``): the one place the TypeScript puts its words.

A consensus' count (``consensus:N``, S-3) in words: :func:`tally_words` (every card, the
inbox) and :func:`needs_words` (a notification's sentence).
"""

from __future__ import annotations

from typing import Literal, Protocol

__all__ = ["Count", "duration", "needs_words", "plural", "tally_words"]

_DAY = 24 * 3600


def duration(seconds: float, style: Literal["exact", "rough"] = "exact") -> str:
    """``seconds`` in words, as a card's clock says it (``exact``) or a message
    (``rough``); see the module docstring."""
    if style == "rough":
        return _rough(seconds)
    s = max(0, int(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    if s < _DAY:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // _DAY} d {s % _DAY // 3600} h"


def _rough(seconds: float) -> str:
    if seconds < 60:
        return "less than a minute"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    hours = round(seconds / 3600)
    if hours < 36:
        return f"about {hours} hours"
    return f"about {round(seconds / 86400)} days"


def plural(n: int, one: str, many: str) -> str:
    """``"1 answer has"``, ``"2 answers have"``: ``n`` and the words that go with it."""
    return f"{n} {one if n == 1 else many}"


class Count(Protocol):
    """How a consensus' answers stand (:class:`hitl_nb.policy.Tally` is one)."""

    @property
    def agreeing(self) -> int: ...
    @property
    def needed(self) -> int: ...
    @property
    def answers(self) -> int: ...
    @property
    def disagreement(self) -> bool: ...


def tally_words(tally: Count) -> str:
    """A consensus' count in words, as a card shows it: ``"2 answers collected, 1 of 2
    agreeing; 1 more needed"`` ("" for a prompt one answer settles)."""
    if tally.needed <= 1:
        return ""
    more = max(0, tally.needed - tally.agreeing)
    collected = f"{tally.answers} answer{'s' if tally.answers != 1 else ''} collected"
    agree = f"{tally.agreeing} of {tally.needed} agreeing"
    if not more:
        return f"{collected}, {agree}: enough"
    words = f"{collected}, {agree}; {more} more needed"
    if tally.disagreement:
        words += (
            ". The answers given so far differ: nothing goes to the agent until "
            f"{tally.needed} people send the same answer"
        )
    return words


def needs_words(needed: int, answers: int, *, still: bool) -> str:
    """What a consensus needs, as a message says it: ``"It needs 2 people to give the
    same answer; 1 answer has come so far, 1 more needed."`` ("" for a prompt one
    answer settles); ``still``: say how many more (a team's channel, not one person)."""
    if needed <= 1:
        return ""
    said = f"It needs {needed} people to give the same answer"
    if answers:
        said += f"; {plural(answers, 'answer has', 'answers have')} come so far"
        if still:
            said += f", {max(needed - answers, 0)} more needed"
    return said + "."
