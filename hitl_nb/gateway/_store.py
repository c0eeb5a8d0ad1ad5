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
  database) exactly one gets its forward back for a prompt (the others None);
- :meth:`GatewayStore.cast_ballot` writes a responder's answer and reads the prompt's
  answers in one transaction: each caller sees every ballot cast before its own;
- first sightings win (:meth:`GatewayStore.see_prompt`, :meth:`GatewayStore.add_registration`,
  :meth:`GatewayStore.ensure_push_secret`), so racing writers agree on one row;
- replicas (several gateway processes on one database) share the work through it: each
  writes a heartbeat (:meth:`GatewayStore.hold_leases`), a registered task is leased to
  one live replica at a time (its watcher), a lease not renewed for ``ttl`` seconds is
  taken over, and a forward left ``forwarding`` by a replica whose heartbeat stopped is
  adopted by one other (:meth:`GatewayStore.adopt_forwards`), which settles it. Times
  of leases and heartbeats are the database's clock, so replicas on machines whose
  clocks differ agree;
- a store that cannot reach its database raises :class:`StoreUnavailable` (and the
  transaction it was in is rolled back): the host answers 503 naming the database, and
  the next call tries again (no restart).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "AuditEntry",
    "Ballot",
    "Forward",
    "GatewayStore",
    "Listed",
    "OpenQuery",
    "PromptRow",
    "Registration",
    "StoreUnavailable",
]


class StoreUnavailable(Exception):
    """The gateway's database cannot be reached (or went away mid-transaction, which
    was rolled back). ``where`` names it for people (never its password)."""

    def __init__(self, where: str, detail: str) -> None:
        super().__init__(f"{where} cannot be reached ({detail})")
        self.where = where
        self.detail = detail


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
    #: The replica that claimed (or adopted) it; "" when not known.
    owner: str = ""


@dataclass(frozen=True)
class OpenQuery:
    """Which open prompts a listing shows (``GET api/prompts``), soonest deadline first.

    ``see_all``: every prompt (a Jupyter server, a hub administrator); else those
    ``viewer`` registered or may answer. ``agent``: only this agent URL.
    ``for_responder``: only prompts ``responder`` may answer (None: an unnamed caller,
    who may answer only prompts for anyone). ``due_before``: only deadlines up to then.
    """

    viewer: str | None
    see_all: bool = False
    agent: str | None = None
    for_responder: bool = False
    responder: str | None = None
    due_before: float | None = None


@dataclass(frozen=True)
class Listed:
    """One prompt of a listing, with what its view needs."""

    reg: Registration
    row: PromptRow
    forward: Forward | None
    ballots: list[Ballot]


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

    #: The database in words, for messages (``PostgreSQL hitl at db.example:5432``).
    where: str
    #: The schema version the database had when opened (0: new; None: not opened yet).
    found_version: int | None

    async def open(self) -> None:
        """Connect and bring the schema up to date (the host calls it at start; each
        call opens first when needed)."""

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

    async def prompt_and_forward(
        self, reg_id: str, prompt_id: str
    ) -> tuple[PromptRow | None, Forward | None]:
        """The prompt row and its forward (each None when absent), read together: what
        an answer is checked against, in one round trip."""

    async def prompts(self, reg_id: str) -> list[PromptRow]:
        """The registration's prompts, first seen first."""

    async def open_prompts(self) -> list[PromptRow]:
        """Every prompt still open here."""

    async def close_prompt(self, reg_id: str, prompt_id: str, why: str) -> bool:
        """Mark an open prompt closed (``why``); False if it was closed already."""

    async def list_open(self, query: OpenQuery, limit: int) -> tuple[list[Listed], int]:
        """The first ``limit`` open prompts ``query`` selects, soonest deadline first
        (then first seen, prompt id), and how many it selects in all."""

    async def due_prompts(self, before: float) -> list[PromptRow]:
        """Open prompts whose deadline is at most ``before``."""

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
        self,
        reg_id: str,
        prompt_id: str,
        message_id: str,
        payload: str,
        responders: list[str],
        owner: str = "",
    ) -> Forward | None:
        """Write-ahead: claim the prompt's one forward (for replica ``owner``); the
        forward as written (``forwarding``), or None if it was claimed before."""

    async def finish_forward(
        self, reg_id: str, prompt_id: str, state: str, detail: str, *, closed: str | None = None
    ) -> None:
        """Record how a forward ended (``forwarded`` or ``failed``); with ``closed``, the
        prompt is closed for that reason in the same transaction (if still open)."""

    async def drop_forward(self, reg_id: str, prompt_id: str) -> None:
        """Forget a forward the agent refused (422): the prompt may be answered again."""

    async def forward(self, reg_id: str, prompt_id: str) -> Forward | None:
        """The prompt's forward, if one was claimed."""

    async def all_forwards(self) -> dict[tuple[str, str], Forward]:
        """Every forward, by (registration, prompt)."""

    async def unsettled_forwards(self) -> list[Forward]:
        """Forwards whose fate is unknown (a crash or a lost connection mid-forward)."""

    async def adopt_forwards(self, replica: str) -> list[Forward]:
        """Take over the unsettled forwards of replicas whose heartbeat stopped (and
        those of no known owner); every unsettled forward ``replica`` now owns."""

    # -- replicas and leases ---------------------------------------------------------

    async def hold_leases(self, replica: str, ttl: float) -> set[str]:
        """Write ``replica``'s heartbeat, renew its leases, take free or expired ones up
        to its fair share (registrations still watched, divided by live replicas) and
        give back what it holds beyond that; the registrations it holds now."""

    async def take_lease(self, reg_id: str, replica: str, ttl: float) -> bool:
        """Lease one registration to ``replica`` if nobody holds it (a new task)."""

    async def end_watch(self, reg_id: str) -> None:
        """The task ended: no replica watches it any more (its lease is dropped)."""

    async def leave(self, replica: str) -> None:
        """``replica`` stops: its heartbeat and leases go, for others to take at once."""

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
