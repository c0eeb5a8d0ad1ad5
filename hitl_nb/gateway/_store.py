"""What the gateway keeps, and the one interface every database behind it offers.

The rows (:class:`Registration`, :class:`PromptRow`, :class:`Ballot`, :class:`Forward`,
:class:`AuditEntry`) are plain values; :class:`GatewayStore` is the interface the
gateway, its push desk and its forwarder use, every method a coroutine so a networked
database can sit behind it. :class:`~hitl_nb.gateway._sqlite.SQLiteStore` is the one
that ships; every implementation must keep these promises, which
``tests/gateway/test_store.py`` checks on each:

- every change is committed when the call returns (a crash after it loses nothing);
- :meth:`GatewayStore.begin_forward` is the at-most-once guard: a unique claim in the
  database, so of any number of callers (tasks of one loop, or processes sharing the
  database) exactly one gets True for a prompt;
- :meth:`GatewayStore.cast_ballot` writes a responder's answer and reads the prompt's
  answers in one transaction: each caller sees every ballot cast before its own;
- first sightings win (:meth:`GatewayStore.see_prompt`, :meth:`GatewayStore.add_registration`,
  :meth:`GatewayStore.ensure_push_secret`), so racing writers agree on one row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "AuditEntry",
    "Ballot",
    "Forward",
    "GatewayStore",
    "PromptRow",
    "Registration",
]


@dataclass(frozen=True)
class Registration:
    """A task someone asked the gateway to watch. ``registered_by`` is the name shown,
    ``registrant`` the user name the host vouched for (None: a host that cannot tell
    its users apart)."""

    id: str
    agent_url: str
    task_id: str
    registered_by: str
    created: float
    registrant: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The registration as the REST API shows it."""
        return {
            "id": self.id,
            "agent_url": self.agent_url,
            "task_id": self.task_id,
            "registered_by": self.registered_by,
            "created": self.created,
        }


@dataclass(frozen=True)
class PromptRow:
    """A prompt the gateway has seen; ``closed`` is None while it is open here."""

    reg_id: str
    prompt_id: str
    context_id: str | None
    envelope: dict[str, Any]
    deadline: float | None
    first_seen: float
    closed: str | None


@dataclass(frozen=True)
class Ballot:
    """One responder's answer to a prompt (canonical JSON text)."""

    responder: str
    payload: str
    at: float


@dataclass(frozen=True)
class Forward:
    """The answer the gateway sends (or sent) to the agent for one prompt."""

    reg_id: str
    prompt_id: str
    message_id: str
    payload: str
    responders: list[str]
    state: str  # "forwarding" | "forwarded" | "failed"
    detail: str | None
    at: float


@dataclass(frozen=True)
class AuditEntry:
    """One line of the audit trail: an answer given, or what became of a forward.

    ``action``: ``held`` (a consensus answer counted, waiting for more), ``forwarded``
    (the agent accepted it), ``forwarding`` (sent, the agent's reply lost: the gateway
    makes sure it lands once), ``refused`` (the gateway turned it away: ``reason``),
    ``rejected`` (the agent refused it), ``failed`` (the agent could not be told),
    ``closed`` (the prompt was answered elsewhere). ``responder`` is None for what
    the gateway did by itself (a forward settled after a restart). ``id`` orders the
    trail (assigned by the store; 0 before it is stored).
    """

    at: float
    reg_id: str
    task_id: str
    agent_url: str
    prompt_id: str
    responder: str | None
    display: str | None
    action: str
    status: int
    reason: str | None
    payload_sha256: str | None
    schema_sha256: str | None
    responders: list[str] = field(default_factory=list)
    agent_reply: dict[str, Any] | None = None
    id: int = 0

    def to_json(self) -> dict[str, Any]:
        """The entry as ``GET api/audit`` shows it (one JSON line of the export)."""
        return {
            "id": self.id,
            "at": self.at,
            "registration": self.reg_id,
            "task_id": self.task_id,
            "agent_url": self.agent_url,
            "prompt_id": self.prompt_id,
            "responder": self.responder,
            "display_name": self.display,
            "action": self.action,
            "status": self.status,
            "reason": self.reason,
            "payload_sha256": self.payload_sha256,
            "response_schema_sha256": self.schema_sha256,
            "responders": list(self.responders),
            "agent_reply": self.agent_reply,
        }


class GatewayStore(Protocol):
    """The gateway's database (see the module docstring for what every one promises)."""

    async def close(self) -> None:
        """Let go of the database."""

    # -- registrations ---------------------------------------------------------------

    async def add_registration(self, reg: Registration) -> Registration:
        """Store ``reg``; an existing registration of the same task wins (returned)."""

    async def find_registration(self, agent_url: str, task_id: str) -> Registration | None:
        """The registration of this task, if any."""

    async def registration(self, reg_id: str) -> Registration | None:
        """The registration with this id, if any."""

    async def registrations(self) -> list[Registration]:
        """Every registration, oldest first."""

    async def count_registrations(self) -> int:
        """How many tasks are registered."""

    # -- prompts ---------------------------------------------------------------------

    async def see_prompt(
        self,
        reg_id: str,
        prompt_id: str,
        context_id: str | None,
        envelope: dict[str, Any],
        deadline: float | None,
    ) -> PromptRow:
        """Record a prompt the agent shows (first sighting wins); returns the row."""

    async def prompt(self, reg_id: str, prompt_id: str) -> PromptRow | None:
        """The prompt row, if the gateway has seen it."""

    async def prompts(self, reg_id: str) -> list[PromptRow]:
        """The registration's prompts, first seen first."""

    async def open_prompts(self) -> list[PromptRow]:
        """Every prompt still open here."""

    async def close_prompt(self, reg_id: str, prompt_id: str, why: str) -> bool:
        """Mark an open prompt closed (``why``); False if it was closed already."""

    # -- ballots ---------------------------------------------------------------------

    async def cast_ballot(
        self, reg_id: str, prompt_id: str, responder: str, payload: str
    ) -> list[Ballot]:
        """Record (or replace) a responder's answer; the prompt's ballots after it,
        oldest first, read in the same transaction."""

    async def ballots(self, reg_id: str, prompt_id: str) -> list[Ballot]:
        """The answers collected for a prompt, oldest first."""

    async def all_ballots(self) -> dict[tuple[str, str], list[Ballot]]:
        """Every collected answer, by (registration, prompt)."""

    # -- forwards --------------------------------------------------------------------

    async def begin_forward(
        self, reg_id: str, prompt_id: str, message_id: str, payload: str, responders: list[str]
    ) -> bool:
        """Write-ahead: claim the prompt's one forward. False if it was claimed before."""

    async def finish_forward(self, reg_id: str, prompt_id: str, state: str, detail: str) -> None:
        """Record how a forward ended (``forwarded`` or ``failed``)."""

    async def drop_forward(self, reg_id: str, prompt_id: str) -> None:
        """Forget a forward the agent refused (422): the prompt may be answered again."""

    async def forward(self, reg_id: str, prompt_id: str) -> Forward | None:
        """The prompt's forward, if one was claimed."""

    async def all_forwards(self) -> dict[tuple[str, str], Forward]:
        """Every forward, by (registration, prompt)."""

    async def unsettled_forwards(self) -> list[Forward]:
        """Forwards whose fate is unknown (a crash or a lost connection mid-forward)."""

    # -- push secrets ----------------------------------------------------------------

    async def push_secret(self, reg_id: str) -> str | None:
        """The registration's push secret, if one was made."""

    async def ensure_push_secret(self, reg_id: str, candidate: str) -> str:
        """The registration's push secret: ``candidate`` unless one exists already."""

    async def mark_push_configured(self, reg_id: str, at: float) -> None:
        """An agent accepted the push configuration of this registration."""

    async def push_configured(self, reg_id: str) -> bool:
        """Has an agent accepted a push configuration for this registration?"""

    async def count_push(self, reg_id: str) -> None:
        """One more notification was accepted for this registration."""

    # -- the audit trail -------------------------------------------------------------

    async def add_audit(self, entry: AuditEntry) -> None:
        """Append one entry (its ``id`` is assigned here)."""

    async def audit(
        self, reg_ids: list[str] | None = None, *, after: int = 0, limit: int = 1000
    ) -> list[AuditEntry]:
        """Entries with an id above ``after``, oldest first, at most ``limit``;
        ``reg_ids``: only those registrations' (None: all)."""
