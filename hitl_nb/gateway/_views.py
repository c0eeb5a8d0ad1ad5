"""What the gateway shows of a prompt, to one caller; and who that caller is.

A prompt's view says what it asks (text, schema, deadline), who may answer
(``allowed_responders`` and the policy read from it), where it stands (``state``: open,
forwarding, forwarded, expired, closed) and, for consensus prompts, how the collected
answers stand (how many, how many agree, whether they differ), but never what the other
responders answered. A prompt's feed item (:func:`feed_item`) is the part of the view a
list of prompts draws (JupyterLab's prompts panel): no schema, the question cut short.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Any

from hitl_nb.gateway._store import Ballot, Forward, PromptRow, Registration
from hitl_nb.policy import ResponderGate, tally
from hitl_nb.spec import parse_responders


class PromptState(str, enum.Enum):
    """Where a prompt stands at the gateway, the ``state`` of its view and feed item.

    The values are the wire's words, the same as the ``PromptState`` of the contract
    with JupyterLab's page (``hitl_nb/schemas/lab.schema.json``; a test keeps them equal)
    and as a forward's ``state`` in the store. A member is a ``str``: it equals its word
    and is written as it in JSON.
    """

    #: Answers are taken.
    OPEN = "open"
    #: An answer is on its way to the agent (sent once, by the gateway).
    FORWARDING = "forwarding"
    #: The agent accepted an answer.
    FORWARDED = "forwarded"
    #: Its deadline passed unanswered.
    EXPIRED = "expired"
    #: The task moved on (closed by the agent, or it ended).
    CLOSED = "closed"

    def __str__(self) -> str:
        # The word, on every Python (3.12 made format() of a str mixin say the name).
        return self.value


__all__ = [
    "NO_NAMES",
    "TWO_PERSON",
    "Caller",
    "PROMPT_CUT",
    "PromptItem",
    "PromptState",
    "feed_item",
    "inbox_order",
    "prompt_view",
    "refusal",
    "responder_gate",
    "shown_to",
    "two_person_refusal",
]

NO_NAMES = (
    "this Jupyter server cannot tell its users apart (everyone shares one token), so it "
    "cannot vouch for who answers; a prompt for named people or a consensus needs a "
    "server with named users (JupyterHub, or an IdentityProvider that names users)"
)


#: Why the registrant's answer is refused under the two-person rule (a prompt one
#: answer settles: ``any``, ``specific:<id>``).
TWO_PERSON = (
    "a second person must answer this: the two-person rule is on, and you registered this task"
)


@dataclass(frozen=True)
class Caller:
    """Who is asking, as the host vouches (the Jupyter server's IdentityProvider, or the
    hub). ``name`` is None when the host cannot tell its users apart (one shared token:
    every request is "anonymous"); ``admin``: a hub administrator."""

    name: str | None
    display: str
    admin: bool = False


def responder_gate(envelope: dict[str, Any]) -> ResponderGate:
    """The S-3 gate of a stored envelope (unknown patterns ignored)."""
    return ResponderGate(parse_responders(envelope.get("allowed_responders")))


def refusal(gate: ResponderGate, caller: Caller) -> str | None:
    """Why ``caller`` may not answer (None: they may)."""
    if caller.name is None and (gate.specific or gate.needed > 1):
        return NO_NAMES
    return gate.may_answer(caller.name)


def two_person_refusal(reg: Registration, caller: Caller, needed: int) -> str | None:
    """Why ``caller``'s answer is refused under the two-person rule (None: it counts);
    the caller checks that the rule applies to ``reg``. The registrant cannot answer
    alone: a prompt one answer settles refuses their answer, and a ``consensus:N``
    needs N people besides them (their answer would not count, so it is refused with
    that said). A caller or a registrant the host cannot name might be the same person:
    refused too (the rule cannot be kept without names)."""
    if caller.name is None or reg.registrant is None:
        return (
            "the two-person rule is on for this task, and the host cannot tell whether you "
            "registered it (it cannot name who registered it, or who you are), so a second, "
            "named person must answer"
        )
    if caller.name != reg.registrant:
        return None
    if needed > 1:
        return (
            "your answer would not count: the two-person rule is on, and you registered "
            f"this task, so {needed} other people must agree on the answer"
        )
    return TWO_PERSON


def shown_to(caller: Caller, reg: Registration, row: PromptRow) -> bool:
    """May ``caller`` see this prompt where not everyone sees everything (the hub)?
    Those who may answer it, whoever registered its task, and administrators."""
    if caller.admin or (caller.name is not None and reg.registrant == caller.name):
        return True
    return refusal(responder_gate(row.envelope), caller) is None


#: The states of a forward (a row of the store's ``forwards``).
_FORWARD_STATES = (PromptState.FORWARDING, PromptState.FORWARDED)


def state_of(row: PromptRow, fwd: Forward | None) -> PromptState:
    """open, forwarding, forwarded, expired or closed."""
    if fwd is not None and fwd.state in _FORWARD_STATES:
        return PromptState(fwd.state)
    if row.closed is not None:
        return PromptState.EXPIRED if row.closed == "expired" else PromptState.CLOSED
    return PromptState.OPEN


def inbox_order(row: PromptRow) -> tuple[bool, float, float, str]:
    """Soonest deadline first; prompts without one after, oldest first."""
    return (row.deadline is None, row.deadline or 0.0, row.first_seen, row.prompt_id)


def _why_not(
    gate: ResponderGate, reg: Registration, caller: Caller, two_person: bool
) -> str | None:
    """Why ``caller`` may not answer: S-3 first, then the two-person rule."""
    reason = refusal(gate, caller)
    if reason is None and two_person:
        reason = two_person_refusal(reg, caller, gate.needed)
    return reason


def prompt_view(
    reg: Registration,
    row: PromptRow,
    caller: Caller,
    now: float,
    fwd: Forward | None,
    ballots: list[Ballot],
    *,
    two_person: bool = False,
) -> dict[str, Any]:
    """The prompt as ``caller`` sees it (JSON), from its forward and ballots;
    ``two_person``: the two-person rule applies to its task."""
    env = row.envelope
    gate = responder_gate(env)
    count = tally((b.payload for b in ballots), gate.needed)
    mine = next((b for b in ballots if caller.name and b.responder == caller.name), None)
    reason = _why_not(gate, reg, caller, two_person)
    return {
        "registration": reg.id,
        "agent_url": reg.agent_url,
        "task_id": reg.task_id,
        "prompt_id": row.prompt_id,
        "prompt": env.get("prompt"),
        "response_schema": env.get("response_schema"),
        "deadline": env.get("deadline"),
        "deadline_passed": row.deadline is not None and now >= row.deadline,
        "seconds_left": None if row.deadline is None else max(0.0, row.deadline - now),
        "allowed_responders": list(env.get("allowed_responders") or ["any"]),
        "policy": {"specific": sorted(gate.specific), "needed": gate.needed},
        "two_person": two_person,
        "state": state_of(row, fwd).value,
        "may_answer": reason is None,
        "why_not": reason,
        "answers": count.answers,
        "agreeing": count.agreeing,
        "disagreement": count.disagreement,
        "your_answer": None if mine is None else json.loads(mine.payload),
        "forwarded_for": (fwd.responders if fwd and fwd.state == PromptState.FORWARDED else None),
    }


#: The characters of a question a feed item carries (the rest is read on demand: a
#: list of 10,000 prompts must not carry 10,000 long questions).
PROMPT_CUT = 1000


@dataclass(frozen=True)
class PromptItem:
    """One open prompt as a list of prompts draws it (the feed, :mod:`._feed`), for one
    caller: who may answer (``two_person``: the two-person rule applies), its deadline
    as a time (seconds since the epoch), how a consensus stands and whether the caller
    answered already, the question cut at :data:`PROMPT_CUT` characters
    (``prompt_length`` is its whole length). Never the
    schema nor anyone's answer. :meth:`to_json` is what the feed sends."""

    registration: str
    agent_url: str
    task_id: str
    prompt_id: str
    prompt: str
    prompt_length: int
    deadline: Any
    deadline_at: float | None
    first_seen: float
    allowed_responders: tuple[str, ...]
    specific: tuple[str, ...]
    needed: int
    state: PromptState
    may_answer: bool
    why_not: str | None
    answers: int
    agreeing: int
    disagreement: bool
    answered: bool
    registered_by: str
    two_person: bool = False

    @property
    def key(self) -> str:
        """The prompt's key in a list: ``{registration}/{prompt_id}``."""
        return f"{self.registration}/{self.prompt_id}"

    def to_json(self) -> dict[str, Any]:
        """The item as the feed sends it (JupyterLab's prompts panel reads it)."""
        return {
            "key": self.key,
            "registration": self.registration,
            "agent_url": self.agent_url,
            "task_id": self.task_id,
            "prompt_id": self.prompt_id,
            "prompt": self.prompt,
            "prompt_length": self.prompt_length,
            "deadline": self.deadline,
            "deadline_at": self.deadline_at,
            "first_seen": self.first_seen,
            "allowed_responders": list(self.allowed_responders),
            "specific": list(self.specific),
            "needed": self.needed,
            "state": self.state.value,
            "may_answer": self.may_answer,
            "why_not": self.why_not,
            "two_person": self.two_person,
            "answers": self.answers,
            "agreeing": self.agreeing,
            "disagreement": self.disagreement,
            "answered": self.answered,
            "registered_by": self.registered_by,
        }


def feed_item(
    reg: Registration,
    row: PromptRow,
    caller: Caller,
    fwd: Forward | None,
    ballots: list[Ballot],
    *,
    two_person: bool = False,
) -> PromptItem:
    """One open prompt as ``caller``'s list draws it (:class:`PromptItem`);
    ``two_person``: the two-person rule applies to its task."""
    env = row.envelope
    gate = responder_gate(env)
    count = tally((b.payload for b in ballots), gate.needed)
    text = env.get("prompt")
    text = text if isinstance(text, str) else ""
    reason = _why_not(gate, reg, caller, two_person)
    return PromptItem(
        registration=reg.id,
        agent_url=reg.agent_url,
        task_id=reg.task_id,
        prompt_id=row.prompt_id,
        prompt=text[:PROMPT_CUT],
        prompt_length=len(text),
        deadline=env.get("deadline"),
        deadline_at=row.deadline,
        first_seen=row.first_seen,
        allowed_responders=tuple(env.get("allowed_responders") or ["any"]),
        specific=tuple(sorted(gate.specific)),
        needed=gate.needed,
        state=state_of(row, fwd),
        may_answer=reason is None,
        why_not=reason,
        two_person=two_person,
        answers=count.answers,
        agreeing=count.agreeing,
        disagreement=count.disagreement,
        answered=any(bool(caller.name) and b.responder == caller.name for b in ballots),
        registered_by=reg.registered_by,
    )
