"""How long ``import hitl_nb`` takes next to ``import ipywidgets, httpx`` (its own floor).

Each import runs in a fresh interpreter (nothing cached in the process), alternating
the two so machine noise hits both alike; the figure is the ratio of the medians.
Target: at most 1.5x. Also: the time from ``Conversation.start`` to the card's widget
being ready against the bundled mock agent (in-process, loopback), as a median.

    python benchmarks/bench_import.py [--runs 9]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

SNIPPET = "import time; t = time.perf_counter(); import {mods}; print(time.perf_counter() - t)"

START = """
import time
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook import Conversation
with MockAgent() as agent:
    figures = []
    for _ in range({n}):
        t = time.perf_counter()
        chat = Conversation.start(agent.url, {{"scenario": "approval"}})
        bundle = chat._repr_mimebundle_()   # what the notebook displays
        figures.append(time.perf_counter() - t)
        assert chat.current is not None and "application/vnd.jupyter.widget-view+json" in bundle
        chat.close()
    print(" ".join(str(f) for f in figures))
"""


def _time(mods: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", SNIPPET.format(mods=mods)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return float(out.stdout.strip())


def main() -> None:
    """Print the import times, their ratio, and the start-to-card time."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    peer, ours = [], []
    for _ in range(args.runs):
        peer.append(_time("ipywidgets, httpx"))
        ours.append(_time("hitl_nb"))
    p, o = statistics.median(peer), statistics.median(ours)
    print(f"import ipywidgets, httpx : median {p * 1000:7.1f} ms over {args.runs} fresh runs")
    print(f"import hitl_nb           : median {o * 1000:7.1f} ms")
    print(f"ratio                    : {o / p:.2f}x (target <= 1.5x)")
    slow = subprocess.run(
        [sys.executable, "-c", "import sys, hitl_nb; print('rfc3987_syntax' in sys.modules)"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    print(f"IRI grammar loaded by the import: {slow}")
    out = subprocess.run(
        [sys.executable, "-c", START.format(n=args.runs)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    starts = [float(x) for x in out.stdout.split()]
    first, rest = starts[0], statistics.median(starts[1:]) if len(starts) > 1 else starts[0]
    print(f"Conversation.start -> card ready (mock agent): first {first * 1000:.1f} ms, "
          f"then median {rest * 1000:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"(took {time.perf_counter() - start:.1f} s)")
