"""Deadline to policy action: how long after a prompt's deadline its registration's
policy acts (hitl_nb/gateway/_deadline_desk.py).

Run by hand from the repository root::

    python benchmarks/bench_deadline.py [--trials 20] [--policy default|cancel] [--db URL]

A real gateway (SQLite by default; ``--db postgresql://...`` for PostgreSQL) on one
loop and the mock agent in its own thread; each trial starts a task whose prompt has a
2 s deadline, registers it with the policy, and measures the action's audit entry time
minus the deadline the envelope states (both wall clock). Trials overlap (one started
every 0.25 s) as a hub's do. Target: p95 <= 1 s past the deadline.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from pathlib import Path
from typing import Any

from hitl_nb.client import HitlClient
from hitl_nb.gateway import AgentPool, Caller, Gateway, GatewaySettings
from hitl_nb.gateway._db_url import open_store
from hitl_nb.mock_agent import MockAgent

ALICE = Caller("alice", "Alice")
POLICIES: dict[str, dict[str, Any]] = {
    "default": {"policy": "default", "answer": {"approve": False}},
    "cancel": {"policy": "cancel"},
}


async def start_task(url: str, scenario: str, **options: Any) -> Any:
    async with HitlClient(url) as client:
        return await client.send({"scenario": scenario, **options})


async def _trial(gw: Gateway, agent_url: str, policy: dict[str, Any]) -> float:
    task = await start_task(agent_url, "deadline", deadline_seconds=2)
    _, reg = await gw.register(ALICE, agent_url, task.id, policy)
    row = await gw.store.prompt(reg["id"], reg["prompts"][0]["prompt_id"])
    assert row is not None and row.deadline is not None
    while True:
        entries = [e for e in await gw.store.audit([reg["id"]]) if e.display]
        if entries:
            return entries[0].at - row.deadline
        await asyncio.sleep(0.02)


async def _run(trials: int, policy: str, db: str | None) -> list[float]:
    folder = Path(tempfile.mkdtemp(prefix="bench-deadline-"))
    store = open_store(db, folder)
    settings = GatewaySettings(watch=False, show_all=False)
    gw = Gateway(store, AgentPool([], 5.0), settings)
    await gw.start()
    try:
        with MockAgent() as agent:
            jobs = []
            for _ in range(trials):
                jobs.append(asyncio.ensure_future(_trial(gw, agent.url, POLICIES[policy])))
                await asyncio.sleep(0.25)
            return list(await asyncio.gather(*jobs))
    finally:
        await gw.close()


def main() -> None:
    """Run the trials and print the median and p95."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--policy", choices=sorted(POLICIES), default="default")
    parser.add_argument("--db", default=None)
    args = parser.parse_args()
    late = sorted(asyncio.run(_run(args.trials, args.policy, args.db)))
    p95 = late[min(len(late) - 1, round(0.95 * (len(late) - 1)))]
    print(
        f"{args.policy}: deadline to action over {len(late)} trials: "
        f"median {statistics.median(late) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, "
        f"max {late[-1] * 1000:.0f} ms (target p95 <= 1000 ms)"
    )


if __name__ == "__main__":
    main()
