"""The outbox as the sender sees it: five coroutines a store implements.

Notes (:class:`~hitl_nb.notify.Note`) are written by the gateway into the store in the
same transaction as what they tell of, so a crash between recording a prompt and
sending its message loses nothing: the message goes after the restart. The sender
(:class:`~hitl_nb.notify.Sender`) reads them only through :class:`Outbox`, whose
promises every implementation keeps (``tests/notify/test_outbox.py`` checks them on
each):

- **Claims are per recipient.** :meth:`Outbox.claim` takes, for up to ``recipients``
  recipients, every one of their notes that is pending, due (``due`` and the next try
  are at most ``now``) and not expired (``expires`` None or after ``now``), and marks
  them with a fresh token until ``now + lease``; it takes no recipient whose mailbox
  another live claim holds, nor one whose ``next_at`` (stored by
  :meth:`Outbox.mark_sent`) is after ``now``. So of any number of senders (tasks, or
  replicas on one database) one holds a recipient at a time, and a recipient gets at
  most one message per ``every``. A claim whose lease ran out (its sender died) is
  free to take again: at-least-once, never lost.
- **A batch ends in one mark**, each one transaction, each a no-op returning False when
  the batch's token no longer holds its notes (its lease ran out and another sender
  took them): :meth:`Outbox.mark_sent` (the notes are sent, the recipient's
  ``last_sent`` and ``next_at`` stored), :meth:`Outbox.mark_retry` (back to pending,
  tried again from ``not_before``; with an ``error`` the attempt is counted and the
  error kept, without one it was only deferred), :meth:`Outbox.give_up` (given up,
  each note with an audit entry giving ``reason``, in the same transaction).
- :meth:`Outbox.give_up_stale` gives up the pending notes no live claim holds whose
  ``due`` is before ``due_before`` or whose ``expires`` has come, each with an audit
  entry (:func:`~hitl_nb.notify.stale_reason`), and returns them.
- Times are the sender's clock, passed in; keys are unique (a note written twice is
  kept once); sent and given-up notes are kept (for the audit and so a key is never
  reused) until the store's own housekeeping removes old ones.

What the store offers the gateway besides (not part of this interface, since it runs
inside the gateway's own transactions): writing notes (a key already there is left as
it is), and withdrawing pending ones, a sender's claim or not (a withdrawn note is never
sent again, whatever its sender marks): a person's notes about a prompt when they answer
it, a prompt's ``opened`` and ``reminder`` notes when it closes.
"""

from __future__ import annotations

from typing import Protocol

from hitl_nb.notify._notes import Batch, Note

__all__ = ["Outbox"]


class Outbox(Protocol):
    """The outbox's promises (see the module docstring)."""

    async def claim(
        self, owner: str, now: float, lease: float, *, recipients: int, listed: int
    ) -> list[Batch]:
        """Claim the due notes of up to ``recipients`` free recipients (most overdue
        first) for ``owner`` until ``now + lease``; each batch lists its first
        ``listed`` notes (oldest due first) and counts all it holds."""

    async def mark_sent(self, batch: Batch, at: float, next_at: float) -> bool:
        """The batch's message went at ``at``; its recipient may have the next one
        from ``next_at``. False (and nothing changed) if the claim was lost."""

    async def mark_retry(self, batch: Batch, not_before: float, error: str | None) -> bool:
        """The batch goes back to pending until ``not_before``; ``error``: a failed
        attempt (counted, kept), None: only deferred. False if the claim was lost."""

    async def give_up(self, batch: Batch, at: float, reason: str) -> bool:
        """The batch will not be sent: each note given up with an audit entry
        (``reason``), in one transaction. False if the claim was lost."""

    async def give_up_stale(self, at: float, due_before: float) -> list[Note]:
        """Give up the unclaimed pending notes due before ``due_before`` or expired at
        ``at``, each with an audit entry (:func:`~hitl_nb.notify.stale_reason`)."""
