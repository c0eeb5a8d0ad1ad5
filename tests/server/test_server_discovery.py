"""A kernel finds its server's gateway from facts and answers through it (end to end)."""

from __future__ import annotations

import asyncio
import json
import queue
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from jupyter_client import BlockingKernelClient

from hitl_nb.client import find_gateway
from hitl_nb.mock_agent import MockAgent
from tests.helpers.jupyter_process import jupyter_server
from tests.server.conftest import answers_at_agent, start_task

KERNEL_CODE = """
import json
from hitl_nb.client import GatewayClient, find_gateway
from hitl_nb.errors import GatewayRefused
info = find_gateway()
out = {"how": info.how if info else None}
with GatewayClient(info) as gw:
    out["me"] = gw.me()
    for task_id in TASKS:
        reg = gw.register(AGENT, task_id)
        prompt = reg["prompts"][0]
        try:
            out[task_id] = gw.answer(reg["id"], prompt["prompt_id"], {"approve": True}).status
        except GatewayRefused as exc:
            out[task_id] = [exc.status, str(exc)]
print("RESULT" + json.dumps(out))
"""


def _wait_for_ready(kc: BlockingKernelClient, timeout: float = 90.0) -> None:
    # Like wait_for_ready, without its heartbeat check, which a loaded machine can fail
    # before the kernel's first beat: a kernel_info reply on shell, then iopub traffic.
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, "the kernel did not answer kernel_info"
        kc.kernel_info()
        try:
            kc.get_shell_msg(timeout=2)
        except queue.Empty:
            continue
        try:
            kc.get_iopub_msg(timeout=2)
        except queue.Empty:
            continue
        return


def _run_in_kernel(url: str, token: str, runtime: Path, code: str) -> dict[str, Any]:
    r = httpx.post(url + "api/kernels", headers={"Authorization": f"token {token}"},
                   json={"name": "python3"}, timeout=60)  # fmt: skip
    assert r.status_code == 201, r.text
    kernel_id = r.json()["id"]
    kc = BlockingKernelClient(connection_file=str(runtime / f"kernel-{kernel_id}.json"))
    kc.load_connection_file()
    kc.start_channels()
    printed: list[str] = []

    def hook(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream":
            printed.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            printed.append("\n".join(msg["content"]["traceback"]))

    try:
        _wait_for_ready(kc)
        reply = kc.execute_interactive(code, timeout=120, output_hook=hook)
    finally:
        kc.stop_channels()
    text = "".join(printed)
    assert reply["content"]["status"] == "ok", text
    (line,) = [x for x in text.splitlines() if x.startswith("RESULT")]
    result: dict[str, Any] = json.loads(line[len("RESULT") :])
    return result


@pytest.mark.slow
def test_a_single_user_token_server_answers_any_and_refuses_named_prompts(
    tmp_path: Path,
) -> None:
    with MockAgent() as agent:
        anyone = asyncio.run(start_task(agent.url, "approval"))
        named = asyncio.run(start_task(agent.url, "specific", responder="bob"))
        token = "single-user-secret"
        headers = {"Authorization": f"token {token}"}
        with jupyter_server(tmp_path, identity_provider=None, token=token,
                            ready_headers=headers) as url:  # fmt: skip
            code = f"AGENT = {agent.url!r}\nTASKS = {[anyone.id, named.id]!r}\n" + KERNEL_CODE
            result = _run_in_kernel(url, token, tmp_path / "runtime", code)
        assert result["how"] == "the Jupyter server that started this kernel"
        assert result["me"]["identified"] is False
        assert result[anyone.id] == "forwarded"
        status, message = result[named.id]
        assert status == 403 and "cannot tell its users apart" in message
        assert len(asyncio.run(answers_at_agent(agent.url, anyone.id))) == 1
        assert asyncio.run(answers_at_agent(agent.url, named.id)) == []


@pytest.mark.slow
def test_a_hub_token_answers_as_the_user_the_hub_vouches_for(tmp_path: Path) -> None:
    with MockAgent() as agent:
        mine = asyncio.run(start_task(agent.url, "specific", responder="alice"))
        theirs = asyncio.run(start_task(agent.url, "specific", responder="bob"))
        # As under JupyterHub: the server's environment (so the kernel's) carries the
        # API token of the user who owns the server; the identity provider knows it.
        hub = {"JUPYTERHUB_API_TOKEN": "alice-token"}
        alice = {"Authorization": "token alice-token"}
        with jupyter_server(tmp_path, env=hub, ready_headers=alice) as url:
            code = f"AGENT = {agent.url!r}\nTASKS = {[mine.id, theirs.id]!r}\n" + KERNEL_CODE
            result = _run_in_kernel(url, "alice-token", tmp_path / "runtime", code)
        assert result["how"].endswith("(JupyterHub token)")
        assert result["me"] == {"name": "alice", "display_name": "Alice", "identified": True}
        assert result[mine.id] == "forwarded"
        assert result[theirs.id][0] == 403 and "bob" in result[theirs.id][1]
        assert asyncio.run(answers_at_agent(agent.url, theirs.id)) == []


def test_no_gateway_outside_a_server_kernel(tmp_path: Path) -> None:
    assert find_gateway(environ={}) is None
    assert find_gateway(environ={"JPY_PARENT_PID": "1"}, connection_file=None) is None
    # A connection file in a folder without the launching server's info file.
    conn = tmp_path / "kernel-0b2c.json"
    conn.write_text("{}")
    assert find_gateway(environ={"JPY_PARENT_PID": "4242"}, connection_file=conn) is None
    # An info file whose pid matches but whose server does not know this kernel.
    (tmp_path / "jpserver-4242.json").write_text(json.dumps(
        {"pid": 4242, "url": "http://127.0.0.1:9/", "token": "x"}))  # fmt: skip
    assert find_gateway(environ={"JPY_PARENT_PID": "4242"}, connection_file=conn) is None
