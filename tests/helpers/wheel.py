"""The project's wheel, built from this tree as a user's ``pip wheel .`` would (no
dependencies, no build isolation: the test extra brings the build requirements)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_wheel(dist: Path, timeout: float) -> Path:
    """Build the wheel into ``dist``; its path."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
        + ["--no-index", "-q", "-w", str(dist), str(ROOT)],
        check=True,
        timeout=timeout,
    )
    (wheel,) = dist.glob("hitl_nb-*.whl")
    return wheel
