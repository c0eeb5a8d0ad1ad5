"""What hitl-nb's pytest plugin (the ``pytest11`` entry point) costs every pytest run.

pytest loads the plugin in every run of anyone who has hitl-nb installed. Measured in
fresh interpreters, in an empty directory (so that the code measured is the one on
``sys.path``/``PYTHONPATH``, not the current directory's), medians of the process's
CPU time (steadier than wall clock on a loaded machine):

- loading the plugin in a process that has pytest already (what the plugin adds to
  every run), and which heavy libraries that brings in;
- ``python -m pytest --co -q`` with the plugin and without it (``-p
  no:hitl_nb_conformance``), alternating: the whole run, for scale (other installed
  plugins, e.g. nbval, cost far more, and vary far more than the plugin's share).

    python benchmarks/bench_pytest_plugin.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

HEAVY = ("ipywidgets", "tornado", "jsonschema", "httpx", "hitl_nb.client", "hitl_nb.forms")
LOAD = (
    "import sys, time, pytest; c = time.process_time(); "
    "import hitl_nb.conformance.pytest_plugin; c = time.process_time() - c; "
    f"print(c, [m for m in {HEAVY!r} if m in sys.modules], "
    "len([m for m in sys.modules if m.startswith('hitl_nb')]))"
)


#: Bytecode caching on, as a user has it (see bench_import.py).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _collect(where: str, *extra: str) -> float:
    """CPU seconds of ``pytest --co -q`` in ``where`` (a fresh interpreter)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", *extra],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=300,
    )  # exit code 5: no tests collected
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    """Print the plugin's load time and what it loads, and the whole run's."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    loads: list[float] = []
    with_plugin: list[float] = []
    without: list[float] = []
    with tempfile.TemporaryDirectory() as empty:
        _collect(empty)  # once first: the .pyc files are written, as after an install
        for _ in range(args.runs):
            out = subprocess.run(
                [sys.executable, "-c", LOAD],
                cwd=empty,
                check=True,
                capture_output=True,
                text=True,
                timeout=120,
                env=ENV,
            ).stdout
            seconds, rest = out.split(" ", 1)
            loads.append(float(seconds))
            with_plugin.append(_collect(empty))
            without.append(_collect(empty, "-p", "no:hitl_nb_conformance"))
    print(f"{args.runs} fresh runs each, medians of CPU time:")
    print(f"  loading the plugin after pytest : {statistics.median(loads) * 1000:6.0f} ms")
    print(f"    heavy modules it loads, and its hitl_nb modules: {rest.strip()}")
    w, wo = statistics.median(with_plugin), statistics.median(without)
    print(
        f"  pytest --co -q, empty directory : {w * 1000:6.0f} ms with the plugin, "
        f"{wo * 1000:.0f} ms without"
    )


if __name__ == "__main__":
    main()
