"""Run cells in a real ipykernel the way JupyterLab's "Run All" does: all queued at once."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty
from typing import Any

from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.manager import start_new_kernel

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class CellResult:
    """What one executed cell sent back: its reply status (None: no reply) and stdout."""

    status: str | None = None
    stdout: str = ""
    error: str = ""
    outputs: list[dict[str, Any]] = field(default_factory=list)


@contextmanager
def kernel() -> Iterator[BlockingKernelClient]:
    """Start a python3 kernel that can import hitl_nb; shut it down afterwards."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    for attempt in range(3):
        try:
            km, kc = start_new_kernel(kernel_name="python3", cwd=str(ROOT), env=env)
            break
        except RuntimeError:  # "Kernel died before replying": a port it chose was taken
            if attempt == 2:
                raise
    try:
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def run_queued(
    kc: BlockingKernelClient, cells: Sequence[str], timeout: float = 20.0
) -> list[CellResult]:
    """Queue every cell before reading any reply; collect replies and stdout until all
    replied or ``timeout`` seconds passed (then missing replies stay ``None``)."""
    ids = [kc.execute(code) for code in cells]
    results = {msg_id: CellResult() for msg_id in ids}
    replied: set[str] = set()
    idle: set[str] = set()
    deadline = time.monotonic() + timeout
    while (len(replied) < len(ids) or len(idle) < len(replied)) and time.monotonic() < deadline:
        try:
            msg = kc.get_shell_msg(timeout=0.2)
            parent = msg["parent_header"].get("msg_id")
            if parent in results:
                results[parent].status = msg["content"]["status"]
                replied.add(parent)
        except Empty:
            pass
        while True:
            try:
                io = kc.get_iopub_msg(timeout=0.01)
            except Empty:
                break
            parent = io["parent_header"].get("msg_id")
            if parent not in results:
                continue
            kind, content = io["msg_type"], io["content"]
            if kind == "stream" and content["name"] == "stdout":
                results[parent].stdout += content["text"]
            elif kind == "error":
                results[parent].error = "\n".join(content["traceback"])
            elif kind == "status" and content["execution_state"] == "idle":
                idle.add(parent)
            elif kind in ("execute_result", "display_data"):
                results[parent].outputs.append(content["data"])
    return [results[i] for i in ids]
