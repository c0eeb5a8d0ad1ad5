"""The gateway's schema, declared once for SQLite and PostgreSQL, and its versions.

A database records the version it has (SQLite: ``PRAGMA user_version``; PostgreSQL: the
table ``hitl_schema``) and is brought up to date when opened: every step from the one it
has to :data:`SCHEMA_VERSION`, in one transaction with the version written (both
databases' DDL is transactional: a failed step leaves the database as it was), under a
lock (two replicas starting together migrate once). A new database runs every step.

- 1: registrations, prompts, ballots, forwards, push (the first layout, unversioned in
  SQLite files);
- 2: ``registrations.registrant`` (the user name that registered a task, for who may
  read its audit trail) and the ``audit`` table;
- 3: replicas on one database and listings in SQL: ``replicas`` (heartbeats),
  ``leases`` (which replica watches a task), ``forwards.owner``,
  ``registrations.ended`` (a finished task nobody watches), who may answer each prompt
  and the index of open prompts in listing order;
- 4: who may answer, one layout on both databases (version 3 kept it as an array in
  PostgreSQL): ``prompts.needed`` (how many must agree), ``prompts.named`` (1: only the
  names in ``audience`` may answer) and ``audience`` (reg_id, prompt_id, name), filled
  again from the stored envelopes;
- 5: the notifications' outbox (:mod:`hitl_nb.gateway._outbox`): ``notify_notes`` (what
  is to be told to whom, written in the transaction of what it tells of),
  ``notify_mailboxes`` (each recipient's last message and the sender's claim) and
  ``notify_prefs`` (each person's own choice: messages off, a webhook of their own);
- 6: a Slack app's messages and the interaction requests it took
  (:mod:`hitl_nb.gateway._slack_store`: ``slack_posts``, ``slack_seen``).
- 7: the audit trail chained (:mod:`hitl_nb.gateway._chain`): ``audit.seq``,
  ``audit.prev_hash``, ``audit.hash`` and a unique index on ``seq``; the entries a
  database holds are chained in the order they were written (``id``). The step is one
  entry of ``_STEPS`` with its own statements and data (``_AUDIT_CHAIN``,
  ``_chain_audit``), so it can take another number.
- 8: deadline policies (:mod:`hitl_nb.gateway._deadline_store`: ``deadline_policies``,
  each registration's; ``deadline_actions``, each action fired at a deadline, claimed
  once). One entry of ``_STEPS`` with its own statements (``DEADLINE_TABLES``), so it
  can take another number.
- 9: a Slack app's clicks kept until answered (:mod:`hitl_nb.gateway._slack_store`:
  ``slack_clicks``), written with the request's ``slack_seen`` row before Slack is
  answered. One entry of ``_STEPS`` (``SLACK_CLICKS``), so it can take another number.
- 10: ``registrations.two_person`` (1: the registrant turned the two-person rule on for
  their task). The step is one entry of ``_STEPS`` (``_TWO_PERSON``), so it can take
  another number.

Types are the same on both (``text``, ``double precision`` for times in epoch seconds,
JSON kept as ``text`` byte for byte: a response_schema's field order is part of the
prompt), but for ids (``{id}``: byte order on both) and the audit trail's ids
(``{serial}``); see :mod:`hitl_nb.gateway._sql`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from hitl_nb.gateway._chain import COLUMNS, GENESIS, content_digest, link_hash
from hitl_nb.gateway._deadline_store import DEADLINE_TABLES
from hitl_nb.gateway._slack_store import SLACK_CLICKS, SLACK_TABLES
from hitl_nb.gateway._sql import Dialect, Session
from hitl_nb.policy import ResponderGate
from hitl_nb.spec import parse_responders

__all__ = ["SCHEMA_VERSION", "audience", "upgrade"]

#: Push secrets: in version 1's layout, and again (for files of the unnumbered first layout
#: made before it had them) in version 2.
_PUSH = """
CREATE TABLE IF NOT EXISTS push (
    reg_id {id} PRIMARY KEY,
    secret text NOT NULL,
    configured double precision,
    received bigint NOT NULL DEFAULT 0
)
"""

_V1 = (
    """
CREATE TABLE IF NOT EXISTS registrations (
    id {id} PRIMARY KEY,
    agent_url text NOT NULL,
    task_id text NOT NULL,
    registered_by text NOT NULL,
    created double precision NOT NULL,
    UNIQUE (agent_url, task_id)
);
CREATE TABLE IF NOT EXISTS prompts (
    reg_id {id} NOT NULL REFERENCES registrations(id),
    prompt_id {id} NOT NULL,
    context_id text,
    envelope text NOT NULL,
    deadline double precision,
    first_seen double precision NOT NULL,
    closed text,
    PRIMARY KEY (reg_id, prompt_id)
);
CREATE TABLE IF NOT EXISTS ballots (
    reg_id {id} NOT NULL,
    prompt_id {id} NOT NULL,
    responder {id} NOT NULL,
    payload text NOT NULL,
    at double precision NOT NULL,
    PRIMARY KEY (reg_id, prompt_id, responder)
);
CREATE TABLE IF NOT EXISTS forwards (
    reg_id {id} NOT NULL,
    prompt_id {id} NOT NULL,
    message_id text NOT NULL,
    payload text NOT NULL,
    responders text NOT NULL,
    state text NOT NULL,
    detail text,
    at double precision NOT NULL,
    PRIMARY KEY (reg_id, prompt_id)
);
"""
    + _PUSH
)

_V2 = (
    "ALTER TABLE registrations ADD COLUMN registrant text;"
    + _PUSH
    + """;
CREATE TABLE audit (
    id {serial},
    at double precision NOT NULL,
    reg_id {id} NOT NULL,
    task_id text NOT NULL,
    agent_url text NOT NULL,
    prompt_id text NOT NULL,
    responder text,
    display text,
    action text NOT NULL,
    status integer NOT NULL,
    reason text,
    payload_sha256 text,
    schema_sha256 text,
    responders text NOT NULL,
    agent_reply text
);
CREATE INDEX audit_by_registration ON audit (reg_id, id)
"""
)

#: Who may answer, and open prompts in listing order (versions 3 and 4).
_AUDIENCE = """
CREATE TABLE IF NOT EXISTS audience (
    reg_id {id} NOT NULL,
    prompt_id {id} NOT NULL,
    name {id} NOT NULL,
    PRIMARY KEY (reg_id, prompt_id, name)
);
CREATE INDEX IF NOT EXISTS prompts_open
    ON prompts ((deadline IS NULL), deadline, first_seen, prompt_id) WHERE closed IS NULL
"""

_V3 = (
    """
ALTER TABLE registrations ADD COLUMN ended double precision;
ALTER TABLE prompts ADD COLUMN needed integer NOT NULL DEFAULT 1;
ALTER TABLE prompts ADD COLUMN named integer NOT NULL DEFAULT 0;
ALTER TABLE forwards ADD COLUMN owner text NOT NULL DEFAULT '';
CREATE TABLE replicas (
    id text PRIMARY KEY,
    started double precision NOT NULL,
    expires double precision NOT NULL
);
CREATE TABLE leases (
    reg_id {id} PRIMARY KEY,
    holder text NOT NULL,
    expires double precision NOT NULL
);
CREATE INDEX leases_by_holder ON leases (holder);
CREATE INDEX forwards_unsettled ON forwards (owner) WHERE state = 'forwarding';
"""
    + _AUDIENCE
)


_V5 = """
CREATE TABLE notify_notes (
    seq {serial},
    key text NOT NULL UNIQUE,
    recipient {id} NOT NULL,
    kind text NOT NULL,
    reg_id {id} NOT NULL,
    prompt_id {id} NOT NULL,
    facts text NOT NULL,
    answers integer NOT NULL DEFAULT 0,
    created double precision NOT NULL,
    due double precision NOT NULL,
    expires double precision,
    not_before double precision NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    state text NOT NULL DEFAULT 'pending',
    claim text,
    done_at double precision
);
CREATE INDEX notify_notes_due ON notify_notes (not_before) WHERE state = 'pending';
CREATE INDEX notify_notes_recipient ON notify_notes (recipient) WHERE state = 'pending';
CREATE INDEX notify_notes_claim ON notify_notes (claim) WHERE claim IS NOT NULL;
CREATE INDEX notify_notes_prompt ON notify_notes (reg_id, prompt_id);
CREATE INDEX notify_notes_done ON notify_notes (done_at) WHERE done_at IS NOT NULL;
CREATE TABLE notify_mailboxes (
    recipient {id} PRIMARY KEY,
    last_sent double precision,
    next_at double precision,
    claim text,
    claim_until double precision
);
CREATE TABLE notify_prefs (
    name {id} PRIMARY KEY,
    off integer NOT NULL DEFAULT 0,
    webhook text,
    updated double precision NOT NULL
)
"""


def audience(envelope: dict[str, Any]) -> tuple[list[str], int]:
    """Who may answer a stored envelope, as the store keeps it: the names of its
    ``specific:<id>`` entries (empty: any named user) and how many must agree. A caller
    may answer when named and in the names (or there are none); an unnamed caller only
    when there are no names and one answer is enough (the rule of
    :func:`hitl_nb.gateway._views.refusal`)."""
    gate = ResponderGate(parse_responders(envelope.get("allowed_responders")))
    return sorted(gate.specific), gate.needed


async def _fill_audience(tx: Session) -> None:
    """Version 4's data step: who may answer each stored prompt, from its envelope."""
    await tx.rows("DELETE FROM audience")
    counts: list[tuple[int, int, str, str]] = []
    names: list[tuple[str, str, str]] = []
    for reg_id, prompt_id, envelope in await tx.rows(
        "SELECT reg_id, prompt_id, envelope FROM prompts"
    ):
        who, needed = audience(json.loads(envelope))
        counts.append((needed, int(bool(who)), reg_id, prompt_id))
        names += [(reg_id, prompt_id, name) for name in who]
    await tx.many(
        "UPDATE prompts SET needed = ?, named = ? WHERE reg_id = ? AND prompt_id = ?", counts
    )
    await tx.many("INSERT INTO audience (reg_id, prompt_id, name) VALUES (?, ?, ?)", names)


_AUDIT_CHAIN = """
ALTER TABLE audit ADD COLUMN seq bigint;
ALTER TABLE audit ADD COLUMN prev_hash text;
ALTER TABLE audit ADD COLUMN hash text;
CREATE UNIQUE INDEX audit_chain ON audit (seq)
"""


async def _chain_audit(tx: Session) -> None:
    """The audit chain's data step: the entries already there, chained in the order
    they were written (``id``), as :func:`hitl_nb.gateway._chain.append` would have."""
    columns = ", ".join(c for c, _ in COLUMNS)
    rows = await tx.rows(f"SELECT id, {columns} FROM audit ORDER BY id")
    prev, links = GENESIS, []
    for seq, (id_, *values) in enumerate(rows, start=1):
        fields = {name: v for (_, name), v in zip(COLUMNS, values, strict=True)}
        fields["responders"] = json.loads(fields["responders"])
        reply = fields["agent_reply"]
        fields["agent_reply"] = None if reply is None else json.loads(reply)
        digest = link_hash(content_digest(fields), prev, seq)
        links.append((seq, prev, digest, id_))
        prev = digest
    await tx.many("UPDATE audit SET seq = ?, prev_hash = ?, hash = ? WHERE id = ?", links)


#: The two-person rule asked for at registration (the setting turns it on for all).
_TWO_PERSON = "ALTER TABLE registrations ADD COLUMN two_person integer NOT NULL DEFAULT 0"


@dataclass(frozen=True)
class _Step:
    """One version's step from the one before: its statements, then (if any) what it
    does to the rows in Python."""

    statements: str
    data: Callable[[Session], Awaitable[None]] | None = None


#: Index 0: from nothing to version 1.
_STEPS = (
    _Step(_V1),
    _Step(_V2),
    _Step(_V3),
    _Step("{v4};" + _AUDIENCE, _fill_audience),
    _Step(_V5),
    _Step(SLACK_TABLES),
    _Step(_AUDIT_CHAIN, _chain_audit),
    _Step(DEADLINE_TABLES),
    _Step(SLACK_CLICKS),
    _Step(_TWO_PERSON),
)
#: The schema version this code writes.
SCHEMA_VERSION = len(_STEPS)


async def upgrade(tx: Session, dialect: Dialect, where: str, had: int, upto: int) -> None:
    """Bring a database of version ``had`` to ``upto`` in the transaction ``tx`` (the
    caller holds the schema's lock and records ``upto`` after)."""
    if had > SCHEMA_VERSION:
        raise RuntimeError(
            f"{where} has schema version {had}, newer than this hitl-nb "
            f"({SCHEMA_VERSION}): upgrade hitl-nb"
        )
    for version in range(had + 1, upto + 1):
        step = _STEPS[version - 1]
        text = step.statements.replace("{v4}", dialect.v4)
        for statement in text.split(";"):
            if statement.strip():
                await tx.rows(statement)
        if step.data is not None:
            await step.data(tx)
