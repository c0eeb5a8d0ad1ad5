"""What deadline policies need kept in the gateway's database (their schema step).

- ``deadline_policies``: each registration's policy (:mod:`hitl_nb.gateway._deadline`),
  as JSON, with what the replicas' rounds ask of it in SQL: ``lead`` (an escalation's
  seconds before the deadline; NULL: none) and ``acts`` (1: the policy acts at the
  deadline, ``default`` or ``cancel``);
- ``deadline_actions``: one row per (registration, prompt, action) the gateway fired
  or is firing, written before the action (a claim, as a forward's row is): of any
  number of replicas, or a process and itself after a restart, one inserts it and
  acts. ``state``: ``firing`` (claimed, not done: a replica whose heartbeat stopped
  leaves it to another, :meth:`DeadlineRecords.adopt`), ``done`` or ``failed``;
  ``detail``: what happened, in words.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from hitl_nb.gateway._deadline import POLICIES, DeadlinePolicy
from hitl_nb.gateway._sql import Database, Session, Statement

__all__ = ["DEADLINE_TABLES", "ActionRow", "DeadlineRecords", "Due", "policy_name"]

#: The schema step that adds these tables (:mod:`hitl_nb.gateway._schema`).
DEADLINE_TABLES = """
CREATE TABLE deadline_policies (
    reg_id {id} PRIMARY KEY,
    policy text NOT NULL,
    lead double precision,
    acts integer NOT NULL DEFAULT 0
);
CREATE TABLE deadline_actions (
    reg_id {id} NOT NULL,
    prompt_id {id} NOT NULL,
    action text NOT NULL,
    state text NOT NULL,
    owner text NOT NULL,
    detail text,
    claimed double precision NOT NULL,
    ended double precision,
    PRIMARY KEY (reg_id, prompt_id, action)
);
CREATE INDEX deadline_actions_firing ON deadline_actions (owner) WHERE state = 'firing'
"""

_NOT_FIRED = (
    "NOT EXISTS (SELECT 1 FROM deadline_actions a WHERE a.reg_id = p.reg_id "
    "AND a.prompt_id = p.prompt_id AND a.action = ?)"
)
_DUE = (
    "SELECT p.reg_id, p.prompt_id, 'escalate', p.deadline - d.lead, p.deadline "
    "FROM prompts p JOIN deadline_policies d ON d.reg_id = p.reg_id "
    "WHERE d.lead IS NOT NULL AND p.deadline IS NOT NULL AND p.closed IS NULL "
    f"AND p.deadline - d.lead <= ? AND {_NOT_FIRED} "
    "UNION ALL "
    "SELECT p.reg_id, p.prompt_id, 'deadline', p.deadline, p.deadline "
    "FROM prompts p JOIN deadline_policies d ON d.reg_id = p.reg_id "
    "WHERE d.acts = 1 AND p.deadline IS NOT NULL "
    "AND (p.closed IS NULL OR p.closed = 'expired') "
    f"AND p.deadline <= ? AND {_NOT_FIRED}"
)


def policy_name(column: str) -> tuple[str, tuple[str, ...]]:
    """SQL naming the policy of a ``deadline_policies.policy`` ``column`` (remind,
    escalate, default, cancel; a registration without a row is ``remind``, as its
    deadline closes its prompts), and its arguments. The row is
    ``json.dumps(policy.to_json())``, which starts with its ``policy`` member: a
    prefix says which, in the same SQL on every database (no JSON functions)."""
    named = [p for p in POLICIES if p != "remind"]
    cases = " ".join(f"WHEN {column} LIKE ? THEN '{p}'" for p in named)
    prefixes = tuple(json.dumps({"policy": p})[:-1] + "%" for p in named)
    return f"CASE {cases} ELSE 'remind' END", prefixes


@dataclass(frozen=True)
class Due:
    """An action not fired yet whose time (``at``, epoch seconds) is near."""

    reg_id: str
    prompt_id: str
    action: str
    at: float
    deadline: float


@dataclass(frozen=True)
class ActionRow:
    """One claimed action: its ``state``, the replica that fires it, what happened."""

    reg_id: str
    prompt_id: str
    action: str
    state: str
    owner: str
    detail: str | None


class DeadlineRecords:
    """The deadline policies' rows on the gateway's database (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        # A registration's policy never changes once written: read once.
        self._policies: dict[str, DeadlinePolicy | None] = {}

    async def set_policy(self, reg_id: str, policy: DeadlinePolicy) -> DeadlinePolicy:
        """Keep a registration's policy (the first one written wins); the kept one."""
        lead = policy.before if policy.policy == "escalate" else None
        await self._db.count(
            "INSERT INTO deadline_policies (reg_id, policy, lead, acts) VALUES (?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            (reg_id, json.dumps(policy.to_json()), lead, int(policy.acts_at_deadline)),
        )
        self._policies.pop(reg_id, None)
        kept = await self.policy(reg_id)
        assert kept is not None
        return kept

    async def policy(self, reg_id: str) -> DeadlinePolicy | None:
        """The registration's policy (None: registered before policies existed)."""
        if reg_id in self._policies:
            return self._policies[reg_id]
        rows = await self._db.rows(
            "SELECT policy FROM deadline_policies WHERE reg_id = ?", (reg_id,)
        )
        found = DeadlinePolicy.from_json(json.loads(rows[0][0])) if rows else None
        if found is not None:
            self._policies[reg_id] = found
        return found

    async def due(self, before: float) -> list[Due]:
        """Actions of open prompts not fired yet whose time is at most ``before``
        (escalations; the deadline's act of ``default`` and ``cancel``, also for a
        prompt a late answer closed as expired before its timer ran)."""
        rows = await self._db.rows(_DUE, (before, "escalate", before, "deadline"))
        return [Due(r[0], r[1], r[2], float(r[3]), float(r[4])) for r in rows]

    async def claim(self, reg_id: str, prompt_id: str, action: str, replica: str) -> bool:
        """Claim the firing of one action for ``replica``: True for exactly one caller."""
        taken = await self._db.count(
            "INSERT INTO deadline_actions (reg_id, prompt_id, action, state, owner, claimed) "
            "VALUES (?, ?, ?, 'firing', ?, ?) ON CONFLICT DO NOTHING",
            (reg_id, prompt_id, action, replica, time.time()),
        )
        return taken == 1

    async def finish(
        self,
        reg_id: str,
        prompt_id: str,
        action: str,
        state: str,
        detail: str,
        steps: Sequence[Statement] = (),
    ) -> bool:
        """Mark a ``firing`` action ``done`` or ``failed`` (``detail``), and run
        ``steps`` (the notes it writes, its audit entry) in the same transaction, only
        when this call ended it: False when another had (nothing written)."""

        async def work(tx: Session) -> bool:
            ended = await tx.count(
                "UPDATE deadline_actions SET state = ?, detail = ?, ended = ? "
                "WHERE reg_id = ? AND prompt_id = ? AND action = ? AND state = 'firing'",
                (state, detail, time.time(), reg_id, prompt_id, action),
            )
            if ended != 1:
                return False
            for sql, args in steps:
                await tx.rows(sql, args)
            return True

        return await self._db.atomic(work)

    async def action(self, reg_id: str, prompt_id: str, action: str) -> ActionRow | None:
        """One action's row, if it was claimed."""
        rows = await self._db.rows(
            "SELECT reg_id, prompt_id, action, state, owner, detail FROM deadline_actions "
            "WHERE reg_id = ? AND prompt_id = ? AND action = ?",
            (reg_id, prompt_id, action),
        )
        return ActionRow(*rows[0]) if rows else None

    async def adopt(self, replica: str) -> list[ActionRow]:
        """Take over the ``firing`` actions of replicas whose heartbeat stopped; every
        ``firing`` action ``replica`` now owns (to fire, or finish firing)."""
        _, mine = await self._db.batch(
            [
                (
                    "UPDATE deadline_actions SET owner = ? WHERE state = 'firing' AND owner "
                    "NOT IN (SELECT id FROM replicas WHERE expires > {now})",
                    (replica,),
                ),
                (
                    "SELECT reg_id, prompt_id, action, state, owner, detail FROM "
                    "deadline_actions WHERE state = 'firing' AND owner = ?",
                    (replica,),
                ),
            ]
        )
        return [ActionRow(*r) for r in mine]
