"""Responder policy of hitl-prompt/v1 (§Responder policy): typed ``allowed_responders``.

``allowed_responders`` is a hint from agent to orchestrator; the orchestrator enforces it
(S-3). Each entry is ``any``, ``specific:<id>`` or ``consensus:N``; anything else is an
:class:`UnknownResponder`, which an orchestrator MUST ignore (forward compatibility).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: §Responder policy: the pattern every ``allowed_responders`` entry MUST match.
RESPONDER_PATTERN = r"^(any|specific:[^\s]+|consensus:[1-9][0-9]*)$"
_RESPONDER = re.compile(RESPONDER_PATTERN)


@dataclass(frozen=True)
class AnyResponder:
    """``"any"``: any responder the orchestrator authorizes may answer."""

    def __str__(self) -> str:
        return "any"


@dataclass(frozen=True)
class SpecificResponder:
    """``"specific:<id>"``: route only to the principal ``id``."""

    id: str

    def __str__(self) -> str:
        return f"specific:{self.id}"


@dataclass(frozen=True)
class ConsensusResponder:
    """``"consensus:N"``: N concurring responses before forwarding."""

    n: int

    def __str__(self) -> str:
        return f"consensus:{self.n}"


@dataclass(frozen=True)
class UnknownResponder:
    """A pattern this version does not know; an orchestrator MUST ignore it."""

    raw: str

    def __str__(self) -> str:
        return self.raw


Responder = AnyResponder | SpecificResponder | ConsensusResponder | UnknownResponder


def parse_responder(entry: str) -> Responder:
    """Type one ``allowed_responders`` entry; what the pattern refuses is Unknown."""
    if _RESPONDER.fullmatch(entry) is None:
        return UnknownResponder(entry)
    if entry == "any":
        return AnyResponder()
    kind, _, rest = entry.partition(":")
    return SpecificResponder(rest) if kind == "specific" else ConsensusResponder(int(rest))


def parse_responders(entries: list[str] | tuple[str, ...] | None) -> tuple[Responder, ...]:
    """Type a whole ``allowed_responders`` list; absent means ``["any"]`` (§Prompt Envelope)."""
    if entries is None:
        return (AnyResponder(),)
    return tuple(parse_responder(e) for e in entries)
