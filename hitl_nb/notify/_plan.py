"""How often, how many, how long: the limits, as pure decisions over rows.

Nothing here reads a clock or a database: each function is given the rows (a claimed
:class:`~hitl_nb.notify.Batch`, a :class:`~hitl_nb.notify.Note`) and the time, so the
same rules hold on every store and tests need no waiting.

- **One message per recipient per** ``every`` **seconds** (a person, or a team
  channel; 60 by default). A recipient's first note goes at once; what comes for them
  within ``every`` after a message waits, and goes as one digest when it ends
  (:func:`next_allowed` is stored with the recipient when a message goes, and the
  outbox does not hand out a recipient before it). An agent that opens 10,000 prompts
  for bob makes two messages to bob in the first minute, not 10,000.
- **A digest lists** ``listed`` **notes** (20) and counts the rest.
- **A ceiling per process**: at most ``per_minute`` recipients handled in any 60
  seconds (:class:`Ceiling`: a message sent or tried, or a batch found to have nowhere
  to go, which costs a look-up), whoever they are for; what is over waits in the
  outbox.
- **Retries**: after a failed send, the next try waits ``first_retry`` seconds, doubled
  each time up to ``max_retry``, with up to a fifth more at random so replicas spread
  out (:func:`retry_at`); a note not sent ``give_up_after`` seconds after it was due is
  given up (:func:`stale_before`), and so is one whose prompt's deadline passed, each
  with an audit entry saying why (:func:`stale_reason`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Literal

from hitl_nb._backoff import Backoff
from hitl_nb.errors import NotifyRefused
from hitl_nb.notify._notes import Batch, Note

__all__ = [
    "Ceiling",
    "Decision",
    "Limits",
    "decide",
    "next_allowed",
    "retry_at",
    "stale_before",
    "stale_reason",
]


@dataclass(frozen=True)
class Limits:
    """The limits (seconds, counts); see the module docstring."""

    every: float = 60.0
    listed: int = 20
    per_minute: int = 600
    first_retry: float = 5.0
    max_retry: float = 300.0
    give_up_after: float = 3600.0

    def __post_init__(self) -> None:
        checks = [
            ("every", self.every, 0.0, 86400.0),
            ("listed", self.listed, 1, 1000),
            ("per_minute", self.per_minute, 1, 1_000_000),
            ("first_retry", self.first_retry, 0.01, 3600.0),
            ("max_retry", self.max_retry, self.first_retry, 86400.0),
            ("give_up_after", self.give_up_after, 1.0, 7 * 86400.0),
        ]
        for name, value, low, high in checks:
            if isinstance(value, bool) or not low <= value <= high:
                raise NotifyRefused(f"notify limit {name} must be between {low} and {high}")


def next_allowed(sent_at: float, limits: Limits) -> float:
    """When the recipient of a message sent at ``sent_at`` may be sent the next one."""
    return sent_at + limits.every


def retry_at(now: float, attempts: int, limits: Limits, jitter: float) -> float:
    """When to try again after the ``attempts``-th failure in a row (1 for the first);
    ``jitter`` in [0, 1) spreads replicas (up to a fifth more)."""
    wait = Backoff(limits.first_retry, limits.max_retry).delay(max(attempts, 1))
    return now + wait * (1.0 + 0.2 * min(max(jitter, 0.0), 1.0))


def stale_before(now: float, limits: Limits) -> float:
    """Notes due before this are given up (they waited longer than the bound)."""
    return now - limits.give_up_after


def stale_reason(note: Note, at: float) -> str:
    """Why a note is given up, in the audit trail's words."""
    if note.expires is not None and note.expires <= at:
        return "not sent: its prompt's deadline passed first"
    tries = f" after {note.attempts} attempt{'s' if note.attempts != 1 else ''}"
    last = f" (last: {note.last_error})" if note.last_error else ""
    return f"not sent in time{tries if note.attempts else ''}{last}"


@dataclass(frozen=True)
class Decision:
    """What to do with a claimed batch: ``send`` now, or ``defer`` until ``until`` (its
    recipient had a message less than ``every`` ago)."""

    action: Literal["send", "defer"]
    until: float = 0.0


def decide(batch: Batch, now: float, limits: Limits) -> Decision:
    """Send the batch now, unless its recipient's last message was less than ``every``
    ago (an outbox hands out no such recipient; replicas' clocks may differ a little)."""
    if batch.last_sent is not None:
        allowed = next_allowed(batch.last_sent, limits)
        if now < allowed:
            return Decision("defer", allowed)
    return Decision("send")


class Ceiling:
    """At most ``per_minute`` messages in any 60 seconds (times passed in)."""

    WINDOW = 60.0

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._sent: deque[float] = deque()

    def _forget(self, now: float) -> None:
        while self._sent and self._sent[0] <= now - self.WINDOW:
            self._sent.popleft()

    def room(self, now: float) -> int:
        """How many more may go now."""
        self._forget(now)
        return max(self.per_minute - len(self._sent), 0)

    def count(self, now: float) -> None:
        """One message went at ``now``."""
        self._sent.append(now)

    def free_at(self, now: float) -> float:
        """When there is room again (``now`` if there is)."""
        self._forget(now)
        if len(self._sent) < self.per_minute:
            return now
        return self._sent[0] + self.WINDOW
