"""The README's recipe, proved: a committed notebook that regression-tests an agent passes
strict nbval twice in a row against an a2a-sdk agent (fresh ports and ids each time)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.helpers.sdk_agent import SdkAgent

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "docs" / "recipe" / "agent-regression.ipynb"


def test_the_recipe_notebook_keeps_its_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    # Strict nbval only compares cells that ran: every cell must have run and printed.
    assert code and all(c.execution_count and c.outputs for c in code)
    assert (NOTEBOOK.parent / "approval.transcript.json").is_file()


@pytest.mark.kernel
@pytest.mark.slow
def test_the_recipe_passes_strict_nbval_twice_against_an_sdk_agent() -> None:
    for attempt in (1, 2):
        with SdkAgent() as agent:
            env = {**os.environ, "AGENT_URL": agent.url, "PYTHONPATH": str(ROOT)}
            env.pop("HITL_NB_STABLE_OUTPUT", None)  # --hitl-nbval must set it for the kernel
            # -n 0: one process (this project's addopts would start a worker per core).
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-p",
                    "no:cacheprovider",
                    "-q",
                    "-n",
                    "0",
                    "--nbval",
                    "--nbval-current-env",
                    "--hitl-nbval",
                    str(NOTEBOOK),
                ],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
        summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
        assert result.returncode == 0, f"run {attempt}:\n{result.stdout[-4000:]}{result.stderr}"
        assert "passed" in summary and "failed" not in summary, summary
