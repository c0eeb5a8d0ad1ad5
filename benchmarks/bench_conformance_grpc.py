"""A whole conformance run (``hitl-nb conformance``) over gRPC and over JSON-RPC against
the same agent.

Run by hand from the repository root (needs ``hitl-nb[grpc]``)::

    python benchmarks/bench_conformance_grpc.py [--rounds 5] [--trials 20]

One agent that hitl_nb.agent serves (``_hitl_bench_agents.py``'s ``ask`` executor, asking
at once) with ``grpc_port=0``: JSON-RPC, HTTP+JSON and gRPC from one process, the server
on a thread of its own in this process. Each round runs every check (CF-1..CF-7 and the
EXT checks, CF-4 with ``--trials`` trials) once per binding, the bindings alternating,
so all see the same machine. Prints per binding the median and the spread of the run's
wall time and of CF-4's p95, and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._hitl_bench_agents import Approval  # noqa: E402
from hitl_nb.agent._app import agent_app  # noqa: E402
from hitl_nb.conformance import Settings, run  # noqa: E402

BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args()
    runs: dict[str, list[float]] = {b: [] for b in BINDINGS}
    p95s: dict[str, list[float]] = {b: [] for b in BINDINGS}
    with agent_app(
        lambda hitl: hitl.wrap(Approval()),
        name="bench agent",
        description="asks at once",
        grpc_port=0,
    ) as served:
        for _ in range(args.rounds):
            for binding in BINDINGS:
                report = run(
                    served.url,
                    binding=binding,  # type: ignore[arg-type]
                    driver={"approve": "please"},
                    settings=Settings(trials=args.trials),
                )
                if not report.passed:
                    raise SystemExit(report.to_text())
                runs[binding].append(report.duration_ms)
                p95s[binding].append(report["CF-4"].metrics["p95_ms"])
    print(f"{args.rounds} rounds, every check, CF-4 over {args.trials} trials")
    for binding in BINDINGS:
        whole, p95 = runs[binding], p95s[binding]
        print(
            f"{binding:10} whole run median {statistics.median(whole):7.0f} ms "
            f"(min {min(whole):.0f}, max {max(whole):.0f}); CF-4 p95 median "
            f"{statistics.median(p95):6.1f} ms (min {min(p95):.1f}, max {max(p95):.1f})"
        )
    ratio = statistics.median(runs["GRPC"]) / statistics.median(runs["JSONRPC"])
    print(f"whole run, gRPC / JSON-RPC: {ratio:.2f}")


if __name__ == "__main__":
    main()
