"""Make the schema-3 fixtures: a gateway database of each kind, written by the stores of
hitl-nb's schema version 3, holding every kind of row those stores keep.

    git worktree add ../hitl-nb-v3 41477d6   # the last commit whose stores write version 3
    cd ../hitl-nb-v3 && python tests/gateway/schema3/make.py --out DIR

(the script may be copied into that checkout first: it only uses what version 3 had).
It writes into ``DIR``:

- ``sqlite.sql``: the SQLite file as ``sqlite3``'s dump (``Connection.iterdump``),
  with its ``PRAGMA user_version``;
- ``postgresql.sql``: the PostgreSQL database as ``pg_dump`` (plain SQL, no owners or
  privileges) writes it, from a throwaway cluster (``tests/helpers/postgres.py``);
- ``readback.json``: what the version-3 stores read back through their own interface
  (the same on both, checked here): the values a newer store must read from the
  migrated databases (``tests/gateway/test_schema.py``).

Every row is written through the store's interface (``GatewayStore``), as the gateway
writes it, on a clock that stands still during each call (``time.time`` patched), so
both databases hold the same times; only PostgreSQL's own clock (its heartbeats and
leases) is the real one. What the rows hold: registrations (one that cannot name its
registrant, one ended, one with quotes in its task id), prompts of each responder kind
(none given, ``any``, ``specific:`` names, unusual names, ``consensus:N``, consensus
with names, an unknown pattern), open, answered, expired, closed by the agent, with
deadlines past and far; ballots agreeing and differing; forwards ``forwarding`` (owned by
nobody, by a dead replica, by a live one), ``forwarded``, ``failed``, and one dropped;
push secrets, configured and counted; the audit trail's every action; two replicas'
heartbeats (one that lives for centuries, one that died at once) and their leases.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from hitl_nb.gateway import GatewayStore  # noqa: E402
from hitl_nb.gateway._postgres import PostgresStore  # noqa: E402
from hitl_nb.gateway._schema import SCHEMA_VERSION  # noqa: E402
from hitl_nb.gateway._sqlite import SQLiteStore  # noqa: E402
from hitl_nb.gateway._store import AuditEntry, OpenQuery, Registration  # noqa: E402
from tests.helpers import postgres  # noqa: E402

#: The fixtures' clock starts here (2025-06-15) and moves one second a call.
T0 = 1_750_000_000.0
FAR = 4_102_444_800.0  # 2100-01-01: a deadline still ahead when the fixtures are read
AGENT = "http://agent.example:8000/a2a"
SCHEMA = {
    "type": "object",
    # Field order is part of the prompt: kept byte for byte.
    "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}},
    "required": ["alpha"],
}
#: Names a responder list may hold that quoting, arrays and separators could trip on.
ODD_NAMES = ["o'brien", "a,b", "émilie", "{x}", '"q"', "back\\slash", "two words"]
#: Who lists are read for.
VIEWERS = ["alice", "bob", "carol", "dave", *ODD_NAMES, None]


class Clock:
    """``time.time`` for the fixtures: stands still until :meth:`tick`."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now

    def tick(self) -> float:
        self.now += 1.0
        return self.now


def envelope(pid: str, responders: list[str] | None, deadline: float | None) -> dict[str, Any]:
    env: dict[str, Any] = {
        "prompt_id": pid,
        "prompt": f"{pid}: approve? Ça va 🚀",
        "response_schema": SCHEMA,
    }
    if responders is not None:
        env["allowed_responders"] = responders
    if deadline is not None:
        env["deadline"] = _rfc3339(deadline)
    return env


def _rfc3339(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


#: reg id -> (task id, registered_by, registrant, agent)
REGISTRATIONS = {
    "r-team": ("t-team", "Alice Liddell", "alice", AGENT),
    "r-bob": ("t-bob", "Bob", "bob", AGENT),
    "r-server": ("t-server", "anonymous", None, "http://other.example/"),
    "r-quote": ("t-'quoted' \"task\" é", "Carol", "carol", AGENT),
    "r-ended": ("t-ended", "Carol", "carol", "http://other.example/"),
}

#: (reg, prompt, context, allowed_responders, deadline)
PROMPTS: list[tuple[str, str, str | None, list[str] | None, float | None]] = [
    ("r-team", "p-default", "c-team", None, None),
    ("r-team", "p-any", "c-team", ["any"], FAR),
    ("r-team", "p-bob", "c-team", ["specific:bob"], FAR - 10),
    ("r-team", "p-pair", "c-team", ["specific:carol", "specific:bob"], None),
    ("r-team", "p-odd", "c-team", [f"specific:{n}" for n in ODD_NAMES], None),
    ("r-team", "p-two", "c-team", ["consensus:2"], None),
    ("r-team", "p-three", "c-team", ["consensus:3"], T0 + 86_400),
    ("r-team", "p-two-named", "c-team", ["consensus:2", "specific:alice", "specific:dave"], None),
    ("r-team", "p-unknown", "c-team", ["role:reviewers"], None),
    ("r-team", "p-expired", "c-team", ["any"], T0 - 3600),
    ("r-team", "p-due", "c-team", None, T0 + 3600),
    ("r-team", "p-doubt", "c-team", None, None),
    ("r-team", "p-doubt-dead", "c-team", ["specific:bob"], None),
    ("r-team", "p-doubt-alive", "c-team", None, None),
    ("r-team", "p-forwarded", "c-team", None, FAR),
    ("r-team", "p-failed", "c-team", None, None),
    ("r-team", "p-dropped", "c-team", None, None),
    ("r-team", "p-gone", "c-team", None, None),
    ("r-bob", "p-bob-any", None, None, None),
    ("r-bob", "p-bob-two", "c-bob", ["consensus:2"], None),
    ("r-server", "p-server", "c-server", None, T0 + 7200),
    ("r-quote", "p-quote", "c-'q'", ["specific:carol", "any"], None),
    ("r-ended", "p-ended", "c-ended", None, None),
]


def audit_entries() -> list[AuditEntry]:
    """One entry of each action the trail knows."""
    rows = [
        ("r-team", "t-team", "p-two", "carol", "Carol", "held", 202, None, None),
        ("r-team", "t-team", "p-bob", "eve", "Eve", "refused", 403, "'eve' may not answer", None),
        (
            "r-team",
            "t-team",
            "p-forwarded",
            "alice",
            "Alice",
            "forwarded",
            200,
            None,
            {"message": "ok"},
        ),
        ("r-team", "t-team", "p-doubt", "bob", "Bob", "forwarding", 202, None, {"message": "lost"}),
        (
            "r-team",
            "t-team",
            "p-dropped",
            "bob",
            "Bob",
            "rejected",
            422,
            None,
            {"message": "no", "validation_errors": [{"path": "/alpha", "message": "required"}]},
        ),
        (
            "r-team",
            "t-team",
            "p-failed",
            "alice",
            "Alice",
            "failed",
            502,
            None,
            {"message": "unreachable"},
        ),
        (
            "r-team",
            "t-team",
            "p-gone",
            "carol",
            "Carol",
            "closed",
            409,
            None,
            {"message": "closed"},
        ),
        (
            "r-team",
            "t-team",
            "p-doubt",
            None,
            None,
            "forwarded",
            200,
            None,
            {"message": "settled ✓"},
        ),
        ("r-bob", "t-bob", "p-bob-two", "bob", "Bob", "forwarded", 200, None, {"message": "ok"}),
        ("r-server", "t-server", "p-server", None, "anonymous", "refused", 403, "no names", None),
    ]
    return [
        AuditEntry(
            at=T0 + 1000 + i,
            reg_id=reg,
            task_id=task,
            agent_url=AGENT,
            prompt_id=pid,
            responder=who,
            display=shown,
            action=action,
            status=status,
            reason=reason,
            payload_sha256=None if action == "refused" else f"{i:064x}",
            schema_sha256="5" * 64,
            responders=[] if who is None else [who],
            agent_reply=reply,
        )
        for i, (reg, task, pid, who, shown, action, status, reason, reply) in enumerate(rows)
    ]


async def write(store: GatewayStore, clock: Clock) -> None:
    """Every kind of row, through the store's interface."""
    await store.open()
    for reg_id, (task, by, registrant, agent) in REGISTRATIONS.items():
        await store.add_registration(
            Registration(reg_id, agent, task, by, clock.tick(), registrant)
        )
    for reg_id, pid, context, responders, deadline in PROMPTS:
        clock.tick()
        await store.see_prompt(reg_id, pid, context, envelope(pid, responders, deadline), deadline)
    clock.tick()
    await store.end_watch("r-ended")
    # Ballots: one of two; three differing; a named consensus; a reached one.
    for reg_id, pid, who, payload in [
        ("r-team", "p-two", "carol", '{"alpha":true}'),
        ("r-team", "p-three", "alice", '{"alpha":true}'),
        ("r-team", "p-three", "bob", '{"alpha":false}'),
        ("r-team", "p-two-named", "dave", '{"alpha":true,"zeta":"ok"}'),
        ("r-bob", "p-bob-two", "bob", '{"alpha":true}'),
        ("r-bob", "p-bob-two", "émilie", '{"alpha":true}'),
    ]:
        clock.tick()
        await store.cast_ballot(reg_id, pid, who, payload)
    # Heartbeats and leases: "replica-dead" takes every task first, "replica-alive"
    # (a heartbeat for centuries) takes its share; then "replica-dead" stops.
    clock.tick()
    await store.hold_leases("replica-dead", 60.0)
    clock.tick()
    await store.hold_leases("replica-alive", 1e10)
    clock.tick()
    await store.hold_leases("replica-dead", 60.0)
    clock.tick()
    await store.hold_leases("replica-alive", 1e10)
    # Forwards in each state.
    for pid, owner, responders in [
        ("p-doubt", "", ["bob"]),
        ("p-doubt-dead", "replica-dead", ["bob"]),
        ("p-doubt-alive", "replica-alive", ["alice"]),
        ("p-forwarded", "replica-alive", ["alice"]),
        ("p-failed", "replica-dead", ["alice"]),
        ("p-dropped", "replica-alive", ["bob"]),
    ]:
        clock.tick()
        claimed = await store.begin_forward(
            "r-team", pid, f"m-{pid}", '{"alpha":true}', responders, owner
        )
        assert claimed is not None
    clock.tick()
    await store.finish_forward("r-team", "p-forwarded", "forwarded", "accepted", closed="answered")
    clock.tick()
    await store.finish_forward("r-team", "p-failed", "failed", "the agent could not be reached")
    clock.tick()
    await store.drop_forward("r-team", "p-dropped")
    clock.tick()
    claimed = await store.begin_forward(
        "r-bob", "p-bob-two", "m-bob-two", '{"alpha":true}', ["bob", "émilie"], "replica-alive"
    )
    assert claimed is not None
    clock.tick()
    await store.finish_forward("r-bob", "p-bob-two", "forwarded", "accepted", closed="answered")
    for reg_id, pid, why in [
        ("r-team", "p-expired", "expired"),
        ("r-team", "p-gone", "closed by the agent"),
        ("r-ended", "p-ended", "closed by the agent"),
    ]:
        clock.tick()
        assert await store.close_prompt(reg_id, pid, why)
    # Push: a secret configured and counted, a secret alone, none.
    clock.tick()
    await store.ensure_push_secret("r-team", "secret-team-0123456789")
    await store.mark_push_configured("r-team", clock.tick())
    for _ in range(3):
        await store.count_push("r-team")
    await store.ensure_push_secret("r-bob", "secret-bob-0123456789")
    for entry in audit_entries():
        clock.tick()
        await store.add_audit(entry)


def _json(value: Any) -> Any:
    """A store's answer as plain JSON (dataclasses as dicts, tuples as lists)."""
    if hasattr(value, "__dataclass_fields__"):
        return _json(asdict(value))
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else "|".join(k)): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return value


def _queries() -> dict[str, OpenQuery]:
    out: dict[str, OpenQuery] = {}
    for viewer in VIEWERS:
        out[f"{viewer}: sees"] = OpenQuery(viewer)
        out[f"{viewer}: may answer"] = OpenQuery(viewer, for_responder=True, responder=viewer)
        out[f"{viewer}: all, may answer"] = OpenQuery(
            viewer, see_all=True, for_responder=True, responder=viewer
        )
        out[f"{viewer}: agent, due"] = OpenQuery(viewer, agent=AGENT, due_before=FAR - 1)
    out["everything"] = OpenQuery(None, see_all=True)
    return out


async def read(store: GatewayStore) -> dict[str, Any]:
    """What the store reads back through its interface (in a stable order)."""
    regs = await store.registrations()
    out: dict[str, Any] = {
        "registrations": _json(regs),
        "count_registrations": await store.count_registrations(),
        "prompts": {r.id: _json(await store.prompts(r.id)) for r in regs},
        "ballots": {
            f"{r.id}|{p.prompt_id}": _json(await store.ballots(r.id, p.prompt_id))
            for r in regs
            for p in await store.prompts(r.id)
        },
        "all_ballots": _json(await store.all_ballots()),
        "all_forwards": _json(await store.all_forwards()),
        "open_prompts": sorted(f"{p.reg_id}|{p.prompt_id}" for p in await store.open_prompts()),
        "unsettled": sorted(f"{f.reg_id}|{f.prompt_id}" for f in await store.unsettled_forwards()),
        "due": sorted(f"{p.reg_id}|{p.prompt_id}" for p in await store.due_prompts(2e9)),
        "push": {
            r.id: [await store.push_secret(r.id), await store.push_configured(r.id)] for r in regs
        },
        "audit": _json(await store.audit()),
        "audit_by_registration": {r.id: [e.id for e in await store.audit([r.id])] for r in regs},
        "audit_page": [e.id for e in await store.audit(None, after=3, limit=4)],
        "listings": {},
    }
    for name, query in _queries().items():
        listed, total = await store.list_open(query, 1000)
        out["listings"][name] = {
            "total": total,
            "prompts": [f"{i.reg.id}|{i.row.prompt_id}" for i in listed],
        }
    listed, _ = await store.list_open(OpenQuery(None, see_all=True), 1000)
    out["everything"] = _json(listed)
    return out


def raw(rows: dict[str, list[tuple[Any, ...]]]) -> dict[str, Any]:
    """Rows the interface does not read back: leases, heartbeats, push counts."""
    return {
        "leases": sorted([reg, holder] for reg, holder in rows["leases"]),
        "replicas": sorted(r[0] for r in rows["replicas"]),
        "push_received": sorted([reg, n] for reg, n in rows["push"]),
    }


RAW_SQL = {
    "leases": "SELECT reg_id, holder FROM leases",
    "replicas": "SELECT id FROM replicas",
    "push": "SELECT reg_id, received FROM push",
}


async def sqlite_fixture(folder: Path) -> dict[str, Any]:
    path = folder / "gateway.sqlite"
    clock = Clock()
    with mock.patch("time.time", clock):
        store = SQLiteStore(path)
        await write(store, clock)
        readback = await read(store)
        await store.close()
    db = sqlite3.connect(path)
    readback["raw"] = raw({k: db.execute(q).fetchall() for k, q in RAW_SQL.items()})
    version = db.execute("PRAGMA user_version").fetchone()[0]
    lines = [
        "-- A gateway database of schema version 3, written by hitl-nb's SQLite store",
        "-- (tests/gateway/schema3/make.py). Load it with sqlite3's executescript.",
        *db.iterdump(),
        f"PRAGMA user_version = {version};",
    ]
    db.close()
    (folder / "sqlite.sql").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return readback


async def postgres_fixture(folder: Path) -> dict[str, Any]:
    cluster = postgres.start_cluster()
    try:
        url = cluster.database("schema3")
        clock = Clock()
        with mock.patch("time.time", clock):
            store = PostgresStore(url)
            await write(store, clock)
            readback = await read(store)
            await store.close()
        database = url.rsplit("/", 1)[1]
        rows = {
            k: [tuple(line.split("|")) for line in cluster.psql(q, database).splitlines()]
            for k, q in RAW_SQL.items()
        }
        rows["push"] = [(reg, int(n)) for reg, n in rows["push"]]
        readback["raw"] = raw(rows)
        dump = subprocess.run(
            [
                str(cluster.bin / "pg_dump"),
                "--no-owner",
                "--no-privileges",
                "--format=plain",
                "-d",
                url,
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        header = (
            "-- A gateway database of schema version 3, written by hitl-nb's PostgreSQL store\n"
            "-- (tests/gateway/schema3/make.py), as pg_dump wrote it. Load it with psql.\n"
        )
        (folder / "postgresql.sql").write_text(header + dump, encoding="utf-8")
    finally:
        cluster.stop()
        shutil.rmtree(cluster.folder, ignore_errors=True)
    return readback


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    if SCHEMA_VERSION != 3:
        sys.exit(f"these stores write schema version {SCHEMA_VERSION}: run this at version 3")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        from_sqlite = asyncio.run(sqlite_fixture(Path(d)))
        shutil.copy(Path(d) / "sqlite.sql", args.out / "sqlite.sql")
    os.makedirs(args.out, exist_ok=True)
    from_postgres = asyncio.run(postgres_fixture(args.out))
    if from_sqlite != from_postgres:
        differ = [k for k in from_sqlite if from_sqlite[k] != from_postgres.get(k)]
        sys.exit(f"the two stores read back differently: {differ}")
    text = json.dumps(from_sqlite, indent=1, ensure_ascii=False, sort_keys=True)
    (args.out / "readback.json").write_text(text + "\n", encoding="utf-8")
    print(f"wrote {args.out}/sqlite.sql, postgresql.sql, readback.json")


if __name__ == "__main__":
    main()
