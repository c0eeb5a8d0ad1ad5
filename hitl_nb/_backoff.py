"""How long to wait before trying again: one growing pause with a cap (:class:`Backoff`).

Everything that tries again after a failure waits this way: a client reconnecting to
an agent, the gateway settling a forward in doubt and following its store, a card's
follower reaching an agent, the prompts panel's relay, the mock agent's webhook
deliveries, the notifications' retries, a task cancelled again until it stops. Each
keeps its own numbers (a first pause, a cap); the curve is written once, here.

Two ways to ask, for the two ways a caller counts: ``delay(attempt)`` when it counts
attempts (1 for the first retry), ``after(pause)`` when it keeps the last pause and
starts again from :attr:`Backoff.first` after a success.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Backoff"]


@dataclass(frozen=True)
class Backoff:
    """A pause of ``first`` seconds, multiplied by ``factor`` at each retry, never more
    than ``cap`` (``math.inf``: no cap): the pauses never shrink and never pass the cap.

    >>> Backoff(0.25, 2.0).delay(1), Backoff(0.25, 2.0).delay(3), Backoff(0.25, 2.0).delay(9)
    (0.25, 1.0, 2.0)
    >>> Backoff(1.0, 30.0).after(16.0)
    30.0
    """

    first: float
    cap: float
    factor: float = 2.0

    def __post_init__(self) -> None:
        for name, low, endless in (("first", 0, False), ("cap", 0, True), ("factor", 1, False)):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not value >= low
                or (math.isinf(value) and not endless)
            ):
                kind = "a number" if endless else "a finite number"
                raise ValueError(f"Backoff: {name} must be {kind} >= {low}, got {value!r}")

    def delay(self, attempt: int) -> float:
        """The pause before retry number ``attempt`` (1 for the first: ``first``)."""
        if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
            raise ValueError(f"Backoff: an attempt is counted from 1, got {attempt!r}")
        if self.first == 0:
            return 0.0
        try:
            grown = self.first * self.factor ** (attempt - 1)
        except OverflowError:  # far past the cap
            return float(self.cap)
        return float(min(grown, self.cap))

    def after(self, pause: float) -> float:
        """The pause that follows ``pause`` (``factor`` times it, at most ``cap``)."""
        return float(min(pause * self.factor, self.cap))
