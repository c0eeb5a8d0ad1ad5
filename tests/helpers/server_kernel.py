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


@contextmanager
def server_kernel(url: str, token: str, runtime: Path) -> Iterator[Callable[[str], str]]:
    """Yields ``run(code) -> stdout`` (an error in the cell fails with its traceback)."""
    headers = {"Authorization": f"token {token}"}
    r = httpx.post(url + "api/kernels", headers=headers, json={"name": "python3"}, timeout=60)
    assert r.status_code == 201, r.text
    kernel_id = r.json()["id"]
    connection = runtime / f"kernel-{kernel_id}.json"
    kc = BlockingKernelClient(connection_file=str(connection))
    kc.load_connection_file()
    kc.start_channels()

    def run(code: str) -> str:
        printed: list[str] = []

        def hook(msg: dict[str, Any]) -> None:
            if msg["msg_type"] == "stream":
                printed.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                printed.append("\n".join(msg["content"]["traceback"]))

        try:
            reply = kc.execute_interactive(code, timeout=120, output_hook=hook)
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
