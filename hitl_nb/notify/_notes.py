"""The outbox's rows: what is to be told, to whom, and from when.

A :class:`Note` is one thing one recipient is to be told: a prompt opened, a reminder
before its deadline, a task's outcome. It is written to the outbox in the same
transaction that records what it tells of (the prompt, the forward's end), and sent
later by :class:`~hitl_nb.notify.Sender`, which claims a recipient's due notes as one
:class:`Batch` and sends one message for it (one note: a message about it; several: a
digest). A note carries the :class:`PromptFacts` its message needs, copied when it is
written, so sending reads nothing else.

Recipients are strings: ``user:<name>`` a person (a hub or server user name),
``team:<channel>`` a team channel the administrator named (:func:`person`,
:func:`team`, :func:`recipient_parts`). A note's ``key`` is stable
(:func:`note_key`): written twice, the outbox keeps one; it seeds the email's
``Message-ID`` and the webhook's idempotency key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hitl_nb.errors import NotifyRefused

__all__ = [
    "KINDS",
    "OUTCOMES",
    "Batch",
    "Note",
    "PromptFacts",
    "note_key",
    "person",
    "recipient_parts",
    "team",
]

#: What a note tells: a prompt opened, a reminder before its deadline, its outcome, an
#: escalation (a wider audience told a prompt still waits: a registration's deadline
#: policy, :mod:`hitl_nb.gateway._deadline`).
KINDS = ("opened", "reminder", "outcome", "escalation")
#: What became of a prompt, as its registrant is told: the agent accepted the answer,
#: the agent refused it, nobody answered before the deadline.
OUTCOMES = ("forwarded", "refused", "expired")


def person(name: str) -> str:
    """The recipient key of a person (their user name)."""
    return f"user:{name}"


def team(channel: str) -> str:
    """The recipient key of a team channel the administrator named."""
    return f"team:{channel}"


def recipient_parts(recipient: str) -> tuple[str, str]:
    """``("user", name)`` or ``("team", channel)``."""
    kind, sep, name = recipient.partition(":")
    if not sep or kind not in ("user", "team") or not name:
        raise NotifyRefused(f"not a recipient: {recipient!r} (user:<name> or team:<channel>)")
    return kind, name


def note_key(kind: str, reg_id: str, prompt_id: str, recipient: str) -> str:
    """The stable key of the note of ``kind`` about one prompt for one recipient."""
    text = json.dumps([kind, reg_id, prompt_id, recipient], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(str(v) for v in value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


@dataclass(frozen=True)
class PromptFacts:
    """What a message says of one prompt, copied into its note when the note is written.

    ``registered_by``: the name shown for who registered the task; ``registrant``: their
    user name (who is told the outcome; None where the host cannot tell users apart).
    ``specific``: the names of the prompt's ``specific:`` entries; ``needed``: how many
    matching answers it needs (``consensus:N``), ``answers``: how many it had when the
    note was written; ``choices``: the words of each answer of a one-choice prompt
    (:func:`hitl_nb._choices.one_choice`, in order: a link or a chat app's button names
    one by its index), else empty; ``form``: the prompt is a flat form a chat app's modal
    can hold (:func:`hitl_nb.notify._slack_modal.modal_fields`). Outcome notes also
    carry ``outcome`` (one of :data:`OUTCOMES`), ``responders`` (who answered) and
    ``detail`` (the agent's reason for a refusal).
    """

    reg_id: str
    prompt_id: str
    agent_url: str
    question: str
    registered_by: str = ""
    registrant: str | None = None
    deadline: float | None = None
    specific: tuple[str, ...] = ()
    needed: int = 1
    answers: int = 0
    outcome: str | None = None
    responders: tuple[str, ...] = ()
    detail: str | None = None
    choices: tuple[str, ...] = ()
    form: bool = False

    def __post_init__(self) -> None:
        if self.outcome is not None and self.outcome not in OUTCOMES:
            raise NotifyRefused(f"unknown outcome {self.outcome!r}: one of {', '.join(OUTCOMES)}")

    def to_json(self) -> dict[str, Any]:
        """The facts as the outbox stores them (a JSON object)."""
        return {
            "reg_id": self.reg_id,
            "prompt_id": self.prompt_id,
            "agent_url": self.agent_url,
            "question": self.question,
            "registered_by": self.registered_by,
            "registrant": self.registrant,
            "deadline": self.deadline,
            "specific": list(self.specific),
            "needed": self.needed,
            "answers": self.answers,
            "outcome": self.outcome,
            "responders": list(self.responders),
            "detail": self.detail,
            "choices": list(self.choices),
            "form": self.form,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PromptFacts:
        """The facts an outbox row holds (what :meth:`to_json` wrote)."""
        needed = data.get("needed")
        answers = data.get("answers")
        outcome = data.get("outcome")
        return cls(
            reg_id=str(data.get("reg_id") or ""),
            prompt_id=str(data.get("prompt_id") or ""),
            agent_url=str(data.get("agent_url") or ""),
            question=str(data.get("question") or ""),
            registered_by=str(data.get("registered_by") or ""),
            registrant=None if data.get("registrant") is None else str(data["registrant"]),
            deadline=_number(data.get("deadline")),
            specific=_names(data.get("specific")),
            needed=needed if isinstance(needed, int) and needed >= 1 else 1,
            answers=answers if isinstance(answers, int) and answers >= 0 else 0,
            outcome=outcome if outcome in OUTCOMES else None,
            responders=_names(data.get("responders")),
            detail=None if data.get("detail") is None else str(data["detail"]),
            choices=_names(data.get("choices")),
            form=data.get("form") is True,
        )


@dataclass(frozen=True)
class Note:
    """One outbox row: tell ``recipient`` of ``facts`` (``kind``: one of :data:`KINDS`).

    ``created``: when it was written; ``due``: when it may first be sent (a reminder's
    is before the deadline; the others' is ``created``), from which the give-up bound
    counts; ``expires``: after then it is not worth sending (the prompt's deadline; None
    for outcomes). ``attempts`` and ``last_error``: failed sends so far.
    """

    key: str
    recipient: str
    kind: str
    facts: PromptFacts
    created: float
    due: float
    expires: float | None = None
    attempts: int = 0
    last_error: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise NotifyRefused(f"unknown note kind {self.kind!r}: one of {', '.join(KINDS)}")
        recipient_parts(self.recipient)


@dataclass(frozen=True)
class Batch:
    """A recipient's due notes, claimed by one sender (``token``) until it marks them.

    ``notes``: the first of them (oldest due first), as many as the claim asked to list;
    ``total``: how many were claimed in all, ``counts`` how many of each kind;
    ``last_sent``: when this recipient was last sent a message (None: never).
    """

    recipient: str
    token: str
    notes: tuple[Note, ...]
    total: int
    counts: Mapping[str, int] = field(default_factory=dict)
    last_sent: float | None = None
