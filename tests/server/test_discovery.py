"""A kernel finds its server's gateway from facts and answers through it (end to end)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from hitl_nb.client import find_gateway
from hitl_nb.mock_agent import MockAgent
from tests.helpers.jupyter_process import jupyter_server
from tests.helpers.server_kernel import result_of, server_kernel
from tests.helpers.tasks import answers_at_agent, start_task

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


@pytest.mark.kernel
@pytest.mark.slow
def test_a_single_user_token_server_answers_any_and_refuses_named_prompts(
    tmp_path: Path,
) -> None:
    with MockAgent() as agent:
        anyone = asyncio.run(start_task(agent.url, "approval"))
        named = asyncio.run(start_task(agent.url, "specific", responder="bob"))
        token = "single-user-secret"
        headers = {"Authorization": f"token {token}"}
        with jupyter_server(
            tmp_path, identity_provider=None, token=token, ready_headers=headers
        ) as url:
            code = f"AGENT = {agent.url!r}\nTASKS = {[anyone.id, named.id]!r}\n" + KERNEL_CODE
            with server_kernel(url, token, tmp_path / "runtime") as run:
                result = result_of(run(code))
        assert result["how"] == "the Jupyter server that started this kernel"
        assert result["me"]["identified"] is False
        assert result[anyone.id] == "forwarded"
        status, message = result[named.id]
        assert status == 403 and "cannot tell its users apart" in message
        assert len(asyncio.run(answers_at_agent(agent.url, anyone.id))) == 1
        assert asyncio.run(answers_at_agent(agent.url, named.id)) == []


@pytest.mark.kernel
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
            with server_kernel(url, "alice-token", tmp_path / "runtime") as run:
                result = result_of(run(code))
        assert result["how"].endswith("(JupyterHub token)")
        me = {"name": "alice", "display_name": "Alice", "identified": True, "admin": False}
        assert result["me"] == me
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
    (tmp_path / "jpserver-4242.json").write_text(
        json.dumps({"pid": 4242, "url": "http://127.0.0.1:9/", "token": "x"})
    )
    assert find_gateway(environ={"JPY_PARENT_PID": "4242"}, connection_file=conn) is None
