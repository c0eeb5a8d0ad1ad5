"""The project's wheel, built from this tree as a user's ``pip wheel .`` would (no
dependencies, no build isolation: the test extra brings the build requirements)."""

from __future__ import annotations

import subprocess
import sys
import venv
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


def install_wheel(wheel: Path, env_dir: Path, timeout: float) -> Path:
    """A fresh virtual environment at ``env_dir`` (no pip of its own) with ``wheel``
    installed by this environment's pip, nothing else; its Python."""
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install"]
        + ["--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
        timeout=timeout,
    )
    return python
