"""The gateway's CPU per answer with its metrics and its traces on and off, in one run.

    python benchmarks/bench_metrics.py [--prompts 100] [--rounds 6] [--ways off,metrics,traces,both]

One Gateway per way in this process, each on a SQLite file of its own: ``off`` (no
metrics, no traces), ``metrics`` (``Gateway(..., metrics=True)``, the default),
``traces`` (the setting ``traces``, the default, with metrics off) and ``both``. The
traces go, as a user's would, to the global tracer provider: OpenTelemetry's SDK
``TracerProvider`` with a ``BatchSpanProcessor`` to an exporter that drops the spans
(counted, to show they were made); each traced round ends with the provider's
``force_flush()`` inside the timing, so the export thread's CPU is the round's. The mock
agent is a process of its own (``hitl-nb mock-agent``), so its work is not counted here.
Each round, each gateway (in turn, the order rotating) registers ``--prompts`` tasks
asking ``consensus:2`` prompts (the prompts' spans start there; timed apart, per prompt)
and answers each twice (the first answer held, the second forwarded: the forward's span
and the prompt's end), one call at a time; the CPU this process spends
(``time.process_time``, every thread) per answer is taken for the round. After each
metrics round a scrape is rendered (the gauges read from the store, as a scrape does),
timed apart. Printed: the median per answer each way and each way's ratio to ``off``
(target <= 1.05).

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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hitl_nb.client import HitlClient
from hitl_nb.gateway import AgentPool, Caller, Gateway, GatewaySettings
from hitl_nb.gateway._sqlite import SQLiteStore

#: Each way: (metrics on, traces on).
WAYS = {
    "off": (False, False),
    "metrics": (True, False),
    "traces": (False, True),
    "both": (True, True),
}


class _Dropped:
    """A span exporter that drops what it is given (counted)."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        self.spans += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _provider() -> tuple[Any, _Dropped]:
    """The global tracer provider, as a user sets it: the SDK's, batching to an exporter."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    dropped = _Dropped()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(dropped))  # type: ignore[arg-type]
    trace.set_tracer_provider(provider)
    return provider, dropped


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


async def _tasks_at(agent: str, n: int) -> list[str]:
    async with HitlClient(agent) as client:
        made = [await client.send({"scenario": "consensus", "n": 2}) for _ in range(n)]
    return [str(t.id) for t in made]  # type: ignore[union-attr]


async def one_round(gw: Gateway, agent: str, n: int, flush: Any = None) -> tuple[float, float]:
    """CPU seconds per answer for ``n`` prompts answered twice each, and per prompt
    registered (its first sighting: a span starts there)."""
    task_ids = await _tasks_at(agent, n)
    regs = []
    t0 = time.process_time()
    for task_id in task_ids:
        _, view = await gw.register(Caller("u0", "u0"), agent, task_id)
        regs.append((view["id"], view["prompts"][0]["prompt_id"]))
    registering = (time.process_time() - t0) / n
    t0 = time.process_time()
    for k in range(2 * n):
        reg_id, pid = regs[k // 2]
        await gw.answer(reg_id, pid, Caller(f"v{k % 2}", "v"), {"approve": True})
    if flush is not None:
        flush()  # the spans exported (the batch thread's CPU counted in this round)
    return (time.process_time() - t0) / (2 * n), registering


async def bench(agent: str, folder: Path, prompts: int, rounds: int, ways: list[str]) -> None:
    provider, dropped = _provider() if any(WAYS[w][1] for w in ways) else (None, None)
    gateways = {}
    for way in ways:
        metrics, traces = WAYS[way]
        settings = GatewaySettings(watch=False, push=False, max_registrations=10**7, traces=traces)
        gateways[way] = Gateway(
            SQLiteStore(folder / f"gateway-{way}.sqlite"),
            AgentPool([], 30.0),
            settings,
            metrics=metrics,
        )
    for gw in gateways.values():
        await gw.start()
    spent: dict[str, list[float]] = {w: [] for w in ways}
    registering: dict[str, list[float]] = {w: [] for w in ways}
    scrapes: list[float] = []
    try:
        for way in ways:  # warm up each
            await one_round(gateways[way], agent, 10)
        if provider is not None:
            provider.force_flush()
        for r in range(rounds):
            order = ways[r % len(ways) :] + ways[: r % len(ways)]
            for way in order:
                metrics, traces = WAYS[way]
                flush = provider.force_flush if traces and provider is not None else None
                per_answer, per_prompt = await one_round(gateways[way], agent, prompts, flush)
                spent[way].append(per_answer)
                registering[way].append(per_prompt)
                if metrics:
                    gateways[way].metrics._gauges._at = -1e9  # type: ignore[union-attr]
                    t0 = time.process_time()
                    await gateways[way].metrics.exposition()
                    scrapes.append(time.process_time() - t0)
    finally:
        for gw in gateways.values():
            await gw.close()
        if provider is not None:
            provider.shutdown()
    med = statistics.median
    for way in ways:
        each = ", ".join(f"{s * 1000:.2f}" for s in spent[way])
        print(
            f"{way:>7}: {med(spent[way]) * 1000:.3f} ms CPU per answer (rounds: {each}); "
            f"{med(registering[way]) * 1000:.3f} ms per prompt registered  ({load()})"
        )
    if "off" in ways:
        base, base_reg = med(spent["off"]), med(registering["off"])
        for way in ways:
            if way != "off":
                print(
                    f"ratio {way}/off: {med(spent[way]) / base:.3f} per answer, "
                    f"{med(registering[way]) / base_reg:.3f} per prompt registered"
                )
    if scrapes:
        print(f"a scrape (store read + render): {med(scrapes) * 1000:.2f} ms CPU")
    if dropped is not None:
        print(f"spans exported (and dropped): {dropped.spans}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument(
        "--ways", default="off,metrics,traces,both", help=f"some of {', '.join(WAYS)}"
    )
    args = parser.parse_args()
    ways = [w for w in args.ways.split(",") if w]
    unknown = [w for w in ways if w not in WAYS]
    if unknown:
        parser.error(f"unknown ways: {', '.join(unknown)} (one of {', '.join(WAYS)})")
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
