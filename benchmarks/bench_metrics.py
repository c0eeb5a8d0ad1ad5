"""The gateway's CPU per answer with its metrics on and off, in one run.

    python benchmarks/bench_metrics.py [--prompts 100] [--rounds 6] [--metrics both]

Two Gateways in this process, each on a SQLite file of its own, one counting its metrics
(``Gateway(..., metrics=True)``, the default) and one not (``metrics=False``); the mock
agent is a process of its own (``hitl-nb mock-agent``), so its work is not counted here.
Each round, each gateway (in turn, the order alternating) answers ``--prompts``
``consensus:2`` prompts of real tasks twice each (the first answer held, the second
forwarded), one call at a time; the CPU this process spends (``time.process_time``) per
answer is taken for the round. After each round a scrape is rendered (the metrics'
gauges read from the store, as a scrape does), timed apart. Printed: the median per
answer each way and their ratio (target <= 1.05). ``--metrics on`` or ``off`` measures one
way only.

The machine is shared: the load average (1 min) is printed with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hitl_nb.client import HitlClient
from hitl_nb.gateway import AgentPool, Caller, Gateway, GatewaySettings
from hitl_nb.gateway._sqlite import SQLiteStore


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


async def _tasks_at(agent: str, n: int) -> list[str]:
    async with HitlClient(agent) as client:
        made = [await client.send({"scenario": "consensus", "n": 2}) for _ in range(n)]
    return [str(t.id) for t in made]  # type: ignore[union-attr]


async def one_round(gw: Gateway, agent: str, n: int) -> float:
    """CPU seconds per answer for ``n`` prompts answered twice each."""
    task_ids = await _tasks_at(agent, n)
    regs = []
    for task_id in task_ids:
        _, view = await gw.register(Caller("u0", "u0"), agent, task_id)
        regs.append((view["id"], view["prompts"][0]["prompt_id"]))
    t0 = time.process_time()
    for k in range(2 * n):
        reg_id, pid = regs[k // 2]
        await gw.answer(reg_id, pid, Caller(f"v{k % 2}", "v"), {"approve": True})
    return (time.process_time() - t0) / (2 * n)


async def bench(agent: str, folder: Path, prompts: int, rounds: int, ways: list[bool]) -> None:
    settings = GatewaySettings(watch=False, push=False, max_registrations=10**7)
    gateways = {
        on: Gateway(
            SQLiteStore(folder / f"metrics-{on}.sqlite"), AgentPool([], 30.0), settings, metrics=on
        )
        for on in ways
    }
    for gw in gateways.values():
        await gw.start()
    spent: dict[bool, list[float]] = {on: [] for on in ways}
    scrapes: list[float] = []
    try:
        await one_round(next(iter(gateways.values())), agent, 10)  # warm up
        for r in range(rounds):
            order = ways if r % 2 == 0 else list(reversed(ways))
            for on in order:
                spent[on].append(await one_round(gateways[on], agent, prompts))
                if on:
                    gateways[on].metrics._gauges._at = -1e9  # type: ignore[union-attr]
                    t0 = time.process_time()
                    await gateways[on].metrics.exposition()
                    scrapes.append(time.process_time() - t0)
    finally:
        for gw in gateways.values():
            await gw.close()
    med = statistics.median
    for on in ways:
        each = ", ".join(f"{s * 1000:.2f}" for s in spent[on])
        print(
            f"metrics {'on ' if on else 'off'}: {med(spent[on]) * 1000:.2f} ms CPU per answer "
            f"(rounds: {each})  ({load()})"
        )
    if len(ways) == 2:
        print(f"ratio on/off: {med(spent[True]) / med(spent[False]):.3f}")
    if scrapes:
        print(f"a scrape (store read + render): {med(scrapes) * 1000:.2f} ms CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--metrics", choices=["both", "on", "off"], default="both")
    args = parser.parse_args()
    ways = {"both": [True, False], "on": [True], "off": [False]}[args.metrics]
    print(f"start ({load()}, {os.cpu_count()} cores)")
    agent_proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("hitl-nb")), "mock-agent", "--port", "0", "--no-push"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert agent_proc.stdout is not None
        agent = agent_proc.stdout.readline().strip().split()[-1]
        with tempfile.TemporaryDirectory() as folder:
            asyncio.run(bench(agent, Path(folder), args.prompts, args.rounds, ways))
    finally:
        agent_proc.terminate()
        agent_proc.wait(30)


if __name__ == "__main__":
    main()
