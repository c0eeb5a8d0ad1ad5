"""An agent of the tests served by a process of its own, killed (SIGKILL) at the end: a
crash. ``agent_process("tests.helpers.pydantic_agent", tasks, seen, pauses)`` runs
``python -m tests.helpers.pydantic_agent TASKS SEEN [PAUSES]``, whose ``main`` is
:func:`serve_until_killed` (it prints ``listening on URL`` once it serves);
:class:`Written` is what such a process records of its tools, written to a file at every
change (a killed process saves nothing after)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def agent_process(module: str, tasks: Path, seen: Path, pauses: Path | None) -> Iterator[str]:
    """``module`` served by another process on the SDK's SQLite task store ``tasks`` and
    SQLite pauses ``pauses`` (None: in memory), writing what its tools got to ``seen``;
    yields its URL, then kills it (SIGKILL)."""
    cmd = [sys.executable, "-m", module, str(tasks), str(seen)]
    if pauses is not None:
        cmd.append(str(pauses))
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, text=True)
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
    """``seen`` that writes itself to a file on every change (the process is killed)."""

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
    pauses_type: Callable[[str], Any],
    **options: Any,
) -> None:
    """A bridge's agent served until the test kills the process: ``TASKS.sqlite SEEN.json
    [PAUSES.sqlite]`` (the SDK's SQLite task store, what the tools got, the pauses)."""
    from a2a.server.tasks import DatabaseTaskStore
    from sqlalchemy.ext.asyncio import create_async_engine

    store = DatabaseTaskStore(create_async_engine(f"sqlite+aiosqlite:///{argv[0]}"))
    agent = make_agent(Written(Path(argv[1])))
    pauses = pauses_type(argv[2]) if len(argv) > 2 else None
    served = serve_agent(
        agent, task_store=store, pauses=pauses, on_stop=[store.engine.dispose], **options
    )
    print(f"listening on {served.url}", flush=True)
    threading.Event().wait()  # serves until the test kills the process
