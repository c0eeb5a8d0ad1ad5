"""_process.py: a command hands over to a server without orphaning it.

Forwarding stop signals to a child is tested with the tutorials command
(tests/test_tutorials.py); here, exec and the environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(os.name != "posix", reason="exec is POSIX")
@pytest.mark.parametrize("replace", [True, False])
def test_the_command_runs_with_the_given_environment(replace: bool) -> None:
    # replace=True: the command takes over this very process (same pid), so whoever stops
    # the hitl-nb command stops the server; replace=False: a child, its status passed on.
    child = "import os, sys; print(os.getpid(), os.environ['HITL_NB_X']); sys.exit(7)"
    parent = (
        "import os, sys\n"
        "from hitl_nb._process import replace_or_forward\n"
        "print(os.getpid(), flush=True)\n"
        "env = {**os.environ, 'HITL_NB_X': 'given'}\n"
        f"sys.exit(replace_or_forward([sys.executable, '-c', {child!r}], env=env,"
        f" replace={replace}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("HITL_NB_X", None)
    done = subprocess.run(
        [sys.executable, "-c", parent], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 7, done.stderr
    (parent_pid,), (child_pid, value) = (line.split() for line in done.stdout.splitlines())
    assert value == "given"
    assert (child_pid == parent_pid) is replace
