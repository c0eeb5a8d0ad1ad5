"""What the gateway does when a prompt's deadline passes: a policy per registration.

The spec leaves the deadline to the orchestrator ("INPUT_REQUIRED -- deadline elapsed
--> orchestrator-decided", §State Transitions; "Orchestrators that rely on deadline for
timeout semantics MUST maintain their own timer", §Security Considerations). The gateway
is that orchestrator; a registration chooses what it decides, within what the
administrator allows (``deadline_policies_allowed``; ``deadline_policy`` when it
chooses nothing):

- ``remind``: the prompt closes at its deadline and the registrant is told (the
  gateway's behaviour before policies existed);
- ``escalate``: ``before`` seconds before the deadline (0: at it) the named people
  (``to``) and a team channel (``channel``) are told the prompt still waits; it never
  widens who may answer (the prompt's ``allowed_responders`` decides); then as
  ``remind``;
- ``default``: at the deadline the registrant's ``answer`` is sent to the agent,
  checked against the prompt's ``response_schema`` when the prompt is seen and again
  when sent;
- ``cancel``: at the deadline the task is cancelled (A2A ``CancelTask``).

:func:`parse_policy` reads a registration's choice (``POST api/tasks``'s ``deadline``
member) into a :class:`DeadlinePolicy`, or raises :class:`PolicyRefused` naming what is
wrong; :func:`answer_issues` says in words why a default answer does not fit a prompt.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from hitl_nb.validation import ValidationIssue

__all__ = [
    "ACTIONS",
    "POLICIES",
    "DeadlinePolicy",
    "PolicyRefused",
    "answer_issues",
    "parse_policy",
]

#: Every policy, in the order the docs list them.
POLICIES = ("remind", "escalate", "default", "cancel")
#: The policies an administrator may make the default (the others need the
#: registrant's details: whom to tell, which answer).
ADMIN_DEFAULTS = ("remind", "cancel")
#: The actions the store claims, one row per (registration, prompt, action):
#: ``escalate`` (the wider audience told), ``deadline`` (the policy's act at the deadline).
ACTIONS = ("escalate", "deadline")
#: The longest lead an escalation may have (30 days, as reminders).
MAX_BEFORE = 30 * 86400.0
#: At most this many people named in one escalation.
MAX_NAMED = 20
_MEMBERS = {
    "remind": {"policy"},
    "escalate": {"policy", "to", "channel", "before"},
    "default": {"policy", "answer"},
    "cancel": {"policy"},
}


class PolicyRefused(Exception):
    """A deadline policy the gateway refuses: ``status`` (400: malformed, 422: not
    allowed here or not fitting the prompt) and the message in words."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class DeadlinePolicy:
    """One registration's policy (see the module docstring)."""

    policy: str = "remind"
    to: tuple[str, ...] = ()
    channel: str | None = None
    before: float = 0.0
    answer: dict[str, Any] | None = field(default=None)

    @property
    def acts_at_deadline(self) -> bool:
        """Does the policy act at the deadline itself beyond closing the prompt?"""
        return self.policy in ("default", "cancel")

    def to_json(self) -> dict[str, Any]:
        """As the REST API shows it (and the store keeps it)."""
        out: dict[str, Any] = {"policy": self.policy}
        if self.policy == "escalate":
            out.update(to=list(self.to), channel=self.channel, before=self.before)
        if self.policy == "default":
            out["answer"] = self.answer
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DeadlinePolicy:
        """What :meth:`to_json` wrote (the store's copy, trusted)."""
        answer = data.get("answer")
        return cls(
            policy=str(data.get("policy", "remind")),
            to=tuple(str(n) for n in data.get("to") or ()),
            channel=data.get("channel"),
            before=float(data.get("before") or 0.0),
            answer=answer if isinstance(answer, dict) else None,
        )


def _escalate(given: dict[str, Any], channels: Collection[str] | None) -> DeadlinePolicy:
    to = given.get("to", [])
    if not isinstance(to, list) or not all(isinstance(n, str) and n.strip() for n in to):
        raise PolicyRefused(400, "deadline.to must be a list of user names")
    names = tuple(sorted({n.strip() for n in to}))
    if len(names) > MAX_NAMED:
        raise PolicyRefused(422, f"deadline.to names more than {MAX_NAMED} people")
    channel = given.get("channel")
    if channel is not None and (not isinstance(channel, str) or not channel.strip()):
        raise PolicyRefused(400, "deadline.channel must be the name of a team channel")
    if not names and channel is None:
        raise PolicyRefused(
            422, "an escalation tells someone: give deadline.to (people), deadline.channel, or both"
        )
    if channels is None:
        raise PolicyRefused(
            422, "escalate tells people through notifications, and this gateway sends none"
        )
    if channel is not None and channel not in channels:
        known = ", ".join(sorted(channels)) or "none"
        raise PolicyRefused(
            422, f"there is no team channel named {channel!r} (the team channels: {known})"
        )
    before = given.get("before", 0)
    if (
        isinstance(before, bool)
        or not isinstance(before, (int, float))
        or not math.isfinite(before)
        or not 0 <= before <= MAX_BEFORE
    ):
        raise PolicyRefused(
            400, f"deadline.before must be a number of seconds from 0 to {MAX_BEFORE:g}"
        )
    return DeadlinePolicy("escalate", names, channel, float(before))


def parse_policy(
    given: Any,
    *,
    admin_default: str,
    allowed: Sequence[str],
    channels: Collection[str] | None,
) -> DeadlinePolicy:
    """A registration's ``deadline`` member as a policy (None: the administrator's
    default, ``admin_default``). ``allowed``: the policies a registrant may choose;
    ``channels``: the team channels an escalation may name (None: this gateway sends
    no notifications).
    :class:`PolicyRefused` names what is wrong."""
    if given is None:
        return DeadlinePolicy(admin_default)
    if not isinstance(given, dict):
        raise PolicyRefused(400, 'deadline must be a JSON object, e.g. {"policy": "remind"}')
    policy = given.get("policy")
    if policy not in POLICIES:
        raise PolicyRefused(
            400, f"deadline.policy must be one of {', '.join(POLICIES)}, not {policy!r}"
        )
    unknown = sorted(set(given) - _MEMBERS[policy])
    if unknown:
        raise PolicyRefused(
            400,
            f"unknown member(s) of deadline for the {policy} policy: {', '.join(unknown)}",
        )
    if policy not in allowed:
        may = ", ".join(p for p in POLICIES if p in allowed) or "none"
        raise PolicyRefused(
            422, f"the deadline policy {policy!r} is not allowed here (allowed: {may})"
        )
    if policy == "escalate":
        return _escalate(given, channels)
    if policy == "default":
        answer = given.get("answer")
        if not isinstance(answer, dict):
            raise PolicyRefused(
                400, "deadline.answer must be a JSON object (the answer sent at the deadline)"
            )
        return DeadlinePolicy("default", answer=answer)
    return DeadlinePolicy(policy)


def _field(path: str) -> str:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]
    words = [f"item {int(p) + 1}" if p.isdigit() else repr(p) for p in parts]
    return "the answer as a whole" if not words else "field " + " of ".join(reversed(words))


def answer_issues(validate: Callable[[Any], list[ValidationIssue]], answer: Any) -> str | None:
    """Why ``answer`` does not fit a prompt (``validate``: its envelope's), in words
    naming each field; None when it fits."""
    issues = validate(answer)
    if not issues:
        return None
    said = "; ".join(f"{_field(i.path)}: {i.message}" for i in issues)
    return f"the default answer does not fit the prompt's form ({said})"
