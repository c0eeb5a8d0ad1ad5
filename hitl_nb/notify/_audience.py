"""Who is told what: the notes a prompt, and its end, put in the outbox.

Pure functions over the facts, so the gateway can call them inside the transaction
that records the prompt (or its end) and write their notes there:

- :func:`opened_notes`: a prompt the gateway has just seen. The people its
  ``specific:`` entries name each get a message now and a reminder ``remind_before``
  seconds before its deadline (when that is still ahead). A prompt for anyone, or a
  ``consensus:N`` naming nobody, goes to the team channel of its agent's host (else
  the default team channel, else nobody), which gets the reminder too. A prompt naming
  more than ``max_named`` people goes to the team channel instead: one agent cannot
  make the service write to a crowd.
- :func:`outcome_notes`: what became of the prompt, for the task's registrant: the
  agent accepted the answer (unless the registrant alone gave it), refused it (the
  prompt stays open for another answer: a later acceptance is told too), or nobody
  answered in time.
- :func:`escalation_notes`: a wider audience told a prompt still waits (a
  registration's ``escalate`` deadline policy).

What to withdraw when things change is the store's part, in the same transactions
(see :class:`~hitl_nb.notify.Outbox`): when a person answers, their pending notes about
that prompt; when a prompt closes, every pending ``opened`` and ``reminder`` note
about it.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from hitl_nb.errors import NotifyRefused
from hitl_nb.notify._notes import Note, PromptFacts, note_key, person, team

if typing.TYPE_CHECKING:
    from hitl_nb.notify._kind import Target

__all__ = ["DEFAULT_TEAM", "TeamChannels", "escalation_notes", "opened_notes", "outcome_notes"]

#: The team channel for prompts whose agent's host has none of its own.
DEFAULT_TEAM = "*"
#: A reminder this long before the deadline, by default (seconds).
REMIND_BEFORE = 600.0
#: A prompt naming more people than this goes to the team channel instead.
MAX_NAMED = 20


@dataclass(frozen=True)
class TeamChannels:
    """The team channels the administrator named: agent host -> where its prompts for
    anyone go (``"*"``: every other host). Hosts are compared without their port."""

    targets: Mapping[str, Target] = field(default_factory=dict)

    def __post_init__(self) -> None:
        lowered: dict[str, Target] = {}
        for host, target in self.targets.items():
            key = str(host).strip().lower().rstrip(".")
            if not key or any(ch in key for ch in "/@ :"):
                raise NotifyRefused(
                    f"a team channel is named by an agent host (or '*'), got {host!r}"
                )
            lowered[key] = target
        object.__setattr__(self, "targets", lowered)

    def channel_for(self, agent_url: str) -> str | None:
        """The team channel of ``agent_url``'s host, else the default, else None."""
        try:
            host = (urlsplit(agent_url).hostname or "").rstrip(".")
        except ValueError:
            host = ""
        if host and host in self.targets:
            return host
        return DEFAULT_TEAM if DEFAULT_TEAM in self.targets else None

    def target(self, channel: str) -> Target | None:
        """Where ``channel`` (a name :meth:`channel_for` gave) sends, if still set."""
        return self.targets.get(channel)


def _pair(
    facts: PromptFacts,
    recipient: str,
    now: float,
    remind_before: float | None,
) -> list[Note]:
    notes = [
        Note(
            key=note_key("opened", facts.reg_id, facts.prompt_id, recipient),
            recipient=recipient,
            kind="opened",
            facts=facts,
            created=now,
            due=now,
            expires=facts.deadline,
        )
    ]
    if facts.deadline is not None and remind_before is not None:
        at = facts.deadline - remind_before
        if at > now:
            notes.append(
                Note(
                    key=note_key("reminder", facts.reg_id, facts.prompt_id, recipient),
                    recipient=recipient,
                    kind="reminder",
                    facts=facts,
                    created=now,
                    due=at,
                    expires=facts.deadline,
                )
            )
    return notes


def opened_notes(
    facts: PromptFacts,
    teams: TeamChannels,
    now: float,
    *,
    remind_before: float | None = REMIND_BEFORE,
    max_named: int = MAX_NAMED,
) -> list[Note]:
    """The notes a newly seen prompt puts in the outbox (see the module docstring);
    ``remind_before`` None: no reminders."""
    if facts.deadline is not None and facts.deadline <= now:
        return []  # nothing to answer any more
    names = sorted(set(facts.specific))
    if names and len(names) <= max_named:
        recipients = [person(name) for name in names]
    else:
        channel = teams.channel_for(facts.agent_url)
        recipients = [team(channel)] if channel is not None else []
    return [note for r in recipients for note in _pair(facts, r, now, remind_before)]


def outcome_notes(facts: PromptFacts, now: float) -> list[Note]:
    """The note that tells the registrant how their agent's prompt ended (none when
    nobody registered by name, or the registrant alone answered and it was accepted)."""
    if facts.outcome is None or not facts.registrant:
        return []
    if facts.outcome == "forwarded" and set(facts.responders) == {facts.registrant}:
        return []  # they answered it themselves: they know
    recipient = person(facts.registrant)
    # keyed by the outcome too: an answer the agent refused leaves the prompt open, and
    # the next answer's acceptance is news of its own
    key = note_key(f"outcome:{facts.outcome}", facts.reg_id, facts.prompt_id, recipient)
    return [
        Note(
            key=key,
            recipient=recipient,
            kind="outcome",
            facts=facts,
            created=now,
            due=now,
        )
    ]


def escalation_notes(facts: PromptFacts, recipients: Sequence[str], now: float) -> list[Note]:
    """The notes that tell a wider audience (``recipients``: :func:`person` or
    :func:`team` keys) that a prompt still waits: a registration's ``escalate`` deadline
    policy. Telling them never makes them responders. Not withdrawn when the prompt
    closes, and sent after its deadline too: an escalation at the deadline itself is
    news of a question nobody answered."""
    return [
        Note(
            key=note_key("escalation", facts.reg_id, facts.prompt_id, recipient),
            recipient=recipient,
            kind="escalation",
            facts=facts,
            created=now,
            due=now,
        )
        for recipient in dict.fromkeys(recipients)
    ]
