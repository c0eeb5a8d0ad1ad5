"""How long the first card takes: imports next to ``import ipywidgets, httpx`` (their floor),
and ``Conversation.start`` to the card against the bundled mock agent.

Each figure comes from a fresh interpreter (nothing cached in the process), the peer and
ours alternating so machine noise hits both alike; figures are medians, compared as the
ratio of the medians. Target (issue 10): ``import hitl_nb`` at most 1.5x the peer.

- ``import hitl_nb``: the package alone (its names load on first use).
- ``from hitl_nb import Conversation``: what a notebook's first cell really imports.
- first card, cold: a fresh interpreter imports Conversation, starts a conversation
  with the mock agent (``hitl-nb mock-agent``, its own process, as a researcher's agent
  would be) and builds what the notebook displays (the widget's mime bundle); this
  includes the first schema compiled (and jsonschema loaded). Then, warm: the same
  again in that process.

    python benchmarks/bench_import.py [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

SNIPPET = (
    "import time; t, c = time.perf_counter(), time.process_time(); {stmt}; "
    "print(time.perf_counter() - t, time.process_time() - c)"
)

CARD = """
import sys, time
t0 = time.perf_counter()
from hitl_nb import Conversation
t1 = time.perf_counter()
figures = []
for _ in range({n}):
    t = time.perf_counter()
    chat = Conversation.start({url!r}, {{"scenario": "approval"}})
    bundle = chat._repr_mimebundle_()   # what the notebook displays
    figures.append(time.perf_counter() - t)
    assert chat.current is not None, chat.to_text()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    chat.close()
print(t1 - t0, " ".join(str(f) for f in figures), "jsonschema" in sys.modules)
"""


#: Bytecode caching on, as a user has it: with PYTHONDONTWRITEBYTECODE set (as in some CI
#: and sandbox environments) every module of ours would be compiled from source in every
#: run (the peer's installed packages come with their .pyc), which measured compiling.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
    ).stdout.strip()


def _time(stmt: str) -> tuple[float, float]:
    """Wall-clock and CPU seconds of ``stmt`` in a fresh interpreter."""
    wall, cpu = _run(SNIPPET.format(stmt=stmt)).split()
    return float(wall), float(cpu)


def _agent() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from hitl_nb.cli import main; main()",
            "mock-agent",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().split()[-1]  # "... listening on http://127.0.0.1:PORT"
    return proc, url


def _ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:7.1f} ms"


def main() -> None:
    """Print the import times and ratios, and the start-to-card times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    statements = ["import ipywidgets, httpx", "import hitl_nb", "from hitl_nb import Conversation"]
    wall: dict[str, list[float]] = {s: [] for s in statements}
    cpu: dict[str, list[float]] = {s: [] for s in statements}
    for stmt in statements:
        _time(stmt)  # once first: the .pyc files are written, as after an install
    for _ in range(args.runs):
        for stmt in statements:
            w, c = _time(stmt)
            wall[stmt].append(w)
            cpu[stmt].append(c)
    print(f"{args.runs} fresh interpreters each; wall clock, and CPU time of the process (steadier")
    print("on a loaded machine); ratio = median / median of the peer in the same run")
    peer = statements[0]
    for stmt in statements:
        w = statistics.median(wall[stmt]) / statistics.median(wall[peer])
        c = statistics.median(cpu[stmt]) / statistics.median(cpu[peer])
        print(f"  {stmt:33}: wall {_ms(wall[stmt])} = {w:.2f}x | CPU {_ms(cpu[stmt])} = {c:.2f}x")
    print("target: import hitl_nb <= 1.5x the peer")
    loaded = _run(
        "import sys; from hitl_nb import Conversation; "
        "print([m for m in ('jsonschema', 'rfc3987_syntax', 'tornado') if m in sys.modules])"
    )
    print(f"loaded by `from hitl_nb import Conversation`: {loaded}")
    agent, url = _agent()
    try:
        imports, cold, warm = [], [], []
        for _ in range(args.runs):
            out = _run(CARD.format(url=url, n=4)).split()
            imports.append(float(out[0]))
            cold.append(float(out[1]))
            warm.extend(float(x) for x in out[2:-1])
        print(f"first card, cold process (mock agent in its own process, {args.runs} runs):")
        print(f"  from hitl_nb import Conversation : {_ms(imports)}")
        print(f"  Conversation.start -> card       : {_ms(cold)} (first card of the process)")
        print(f"  Conversation.start -> card, warm : {_ms(warm)} ({len(warm)} starts)")
        print(f"  jsonschema loaded by then        : {out[-1]}")
    finally:
        agent.terminate()
        agent.wait(10)


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"(took {time.perf_counter() - start:.1f} s)")
