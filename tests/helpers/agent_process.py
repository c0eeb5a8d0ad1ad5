"""An agent of the tests' served by a process of its own, killed (SIGKILL) at the end: a
crash. The framework bridges' restart tests start one on SQLite stores, kill it while a
prompt is open, then start another on the same files."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def agent_process(module: str, args: Sequence[str]) -> Iterator[str]:
    """``python -m module *args`` from the repository's root, which prints
    ``listening on URL`` once it serves; yields the URL, then kills the process."""
    cmd = [sys.executable, "-m", module, *args]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the process ends (EOF) if it cannot start
        assert "listening on" in line, f"the agent did not start: {line!r}"
        yield line.rsplit(" ", 1)[-1].strip()
    finally:
        proc.kill()
        proc.wait(30)
        if proc.stdout is not None:
            proc.stdout.close()


class Written(dict[str, Any]):
    """A dict that writes itself to a file (JSON) on every change: what a killed
    process's tools got."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, value)
        self.path.write_text(json.dumps(dict(self)), encoding="utf-8")
