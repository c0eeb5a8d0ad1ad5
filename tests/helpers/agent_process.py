"""An agent of the tests served by a process of its own, killed (SIGKILL) at the end: a
crash. Every bridge's restart tests start one on SQLite stores, kill it while a prompt is
open, then start another on the same files.

``agent_process("tests.helpers.pydantic_agent", tasks, seen, pauses)`` runs ``python -m
tests.helpers.pydantic_agent TASKS SEEN [PAUSES]`` (an argument that is None is left
out); the module prints ``listening on URL`` once it serves. A tool-call bridge's
``main`` is :func:`serve_until_killed`; :class:`Written` is what such a process records
of its tools, written to a file at every change (a killed process saves nothing after).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def agent_process(module: str, *args: str | Path | None) -> Iterator[str]:
    """``python -m module *args`` from the repository's root (the arguments that are None
    left out), which prints ``listening on URL`` once it serves; yields the URL, then
    kills the process (SIGKILL)."""
    cmd = [sys.executable, "-m", module, *(str(arg) for arg in args if arg is not None)]
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


def serve_until_killed(
    argv: list[str],
    make_agent: Callable[[dict[str, Any]], Any],
    serve_agent: Callable[..., Any],
    kept: Callable[[str], Any],
    *,
    keep_as: str = "pauses",
    close_kept: bool = False,
    **options: Any,
) -> None:
    """A bridge's agent served until the test kills the process: ``TASKS.sqlite SEEN.json
    [KEPT.sqlite]`` (the SDK's SQLite task store, what the tools got, where the bridge
    keeps a waiting run: ``kept(path)`` passed to ``serve_agent`` as ``keep_as``, its
    ``close`` run when the server stops if ``close_kept``; in memory without it)."""
    from a2a.server.tasks import DatabaseTaskStore
    from sqlalchemy.ext.asyncio import create_async_engine

    store = DatabaseTaskStore(create_async_engine(f"sqlite+aiosqlite:///{argv[0]}"))
    agent = make_agent(Written(Path(argv[1])))
    on_stop: list[Any] = [store.engine.dispose]
    if len(argv) > 2:
        options[keep_as] = made = kept(argv[2])
        if close_kept:
            on_stop.append(made.close)
    served = serve_agent(agent, task_store=store, on_stop=on_stop, **options)
    print(f"listening on {served.url}", flush=True)
    threading.Event().wait()  # serves until the test kills the process
