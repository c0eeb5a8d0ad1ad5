"""A kernel started by a real Jupyter server (``POST api/kernels``), as JupyterLab starts
one, so the kernel finds that server's gateway by itself; shut down (``DELETE``) after."""

from __future__ import annotations

import json
import queue
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from jupyter_client import BlockingKernelClient

from tests.helpers.until import until


def _wait_for_ready(kc: BlockingKernelClient, path: Path, timeout: float = 90.0) -> None:
    # A kernel_info reply on shell, then iopub traffic (no heartbeat check: a loaded
    # machine can fail it before the kernel's first beat). A kernel that could not bind
    # its ports is restarted by the server on new ones, written to its connection file:
    # connect again when the file changes.
    known = [path.read_bytes()]

    def answered() -> bool:
        now = path.read_bytes() if path.exists() else known[0]
        if now != known[0]:
            known[0] = now
            kc.stop_channels()
            kc.load_connection_file()
            kc.start_channels()
        kc.kernel_info()
        kc.get_shell_msg(timeout=2)
        kc.get_iopub_msg(timeout=2)
        return True

    until(answered, timeout=timeout, what="the kernel to answer kernel_info", ignore=queue.Empty)


def _in_cell(
    kc: BlockingKernelClient, code: str, cell_id: str, hook: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """Run ``code`` as JupyterLab runs a cell: the request's metadata names the cell."""
    content = {
        "code": code,
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": False,
        "stop_on_error": True,
    }
    msg = kc.session.msg("execute_request", content, metadata={"cellId": cell_id})
    kc.shell_channel.send(msg)
    msg_id = msg["header"]["msg_id"]

    def idle() -> bool:
        out = kc.get_iopub_msg(timeout=1)
        if out["parent_header"].get("msg_id") != msg_id:
            return False
        if out["msg_type"] == "status" and out["content"]["execution_state"] == "idle":
            return True
        hook(out)
        return False

    def replied() -> dict[str, Any] | None:
        reply: dict[str, Any] = kc.get_shell_msg(timeout=1)
        return reply if reply["parent_header"].get("msg_id") == msg_id else None

    until(idle, timeout=120, what="the cell to finish", interval=0, ignore=queue.Empty)
    found: dict[str, Any] = until(
        replied, timeout=60, what="the cell's reply", interval=0, ignore=queue.Empty
    )
    return found


@contextmanager
def server_kernel(url: str, token: str, runtime: Path) -> Iterator[Callable[[str], str]]:
    """Yields ``run(code, cell_id=None) -> stdout`` (an error in the cell fails with its
    traceback; ``cell_id``: run it as JupyterLab runs that notebook cell)."""
    headers = {"Authorization": f"token {token}"}
    r = httpx.post(url + "api/kernels", headers=headers, json={"name": "python3"}, timeout=60)
    assert r.status_code == 201, r.text
    kernel_id = r.json()["id"]
    connection = runtime / f"kernel-{kernel_id}.json"
    kc = BlockingKernelClient(connection_file=str(connection))
    kc.load_connection_file()
    kc.start_channels()

    def run(code: str, cell_id: str | None = None) -> str:
        printed: list[str] = []

        def hook(msg: dict[str, Any]) -> None:
            if msg["msg_type"] == "stream":
                printed.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                printed.append("\n".join(msg["content"]["traceback"]))

        try:
            if cell_id is None:
                reply = kc.execute_interactive(code, timeout=120, output_hook=hook)
            else:
                reply = _in_cell(kc, code, cell_id, hook)
        except TimeoutError:
            # A cell still running would hold every later cell of the module behind it
            # (each waiting its 120 s in turn): interrupt it, and fail this test only.
            httpx.post(f"{url}api/kernels/{kernel_id}/interrupt", headers=headers, timeout=60)
            # Its reply first: a cell sent before it would be aborted with it.
            until(
                lambda: kc.get_shell_msg(timeout=1)["msg_type"] == "execute_reply",
                timeout=60,
                what="the interrupted cell to end",
                interval=0,
                ignore=queue.Empty,
            )
            raise AssertionError(
                "the cell did not finish within 120 s (interrupted); it printed:\n"
                + "".join(printed)
            ) from None
        text = "".join(printed)
        assert reply["content"]["status"] == "ok", text
        return text

    try:
        _wait_for_ready(kc, connection)
        yield run
    finally:
        kc.stop_channels()
        gone = httpx.delete(f"{url}api/kernels/{kernel_id}", headers=headers, timeout=60)
        assert gone.status_code in (204, 404), gone.text


def result_of(printed: str) -> dict[str, Any]:
    """The JSON a cell printed on its one line starting with ``RESULT``."""
    (line,) = [x for x in printed.splitlines() if x.startswith("RESULT")]
    result: dict[str, Any] = json.loads(line[len("RESULT") :])
    return result
