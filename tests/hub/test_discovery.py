"""Finding the hub's service from facts (the hub's API URL and service list), for
kernels (:func:`hitl_nb.client.find_gateway`) and for ``hitl-nb inbox``.

Kernels of the hub's own servers find it in ``test_end_to_end.py``; here the same
lookup runs in this process with a kernel's environment given to it, so each case (a
token that may not see the service, a hub without it, a hub that is down) is one call.
Last, ``hitl-nb inbox --server {hub}/services/hitl/`` serves carol's prompts (Voila).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from hitl_nb.client import GatewayClient, find_gateway, gateway_at
from hitl_nb.errors import GatewayUnavailable
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook import Inbox
from hitl_nb.server._reviewer import find_server
from tests.helpers.hub import Hub
from tests.helpers.jupyter_process import ROOT
from tests.helpers.ports import free_port
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.until import until


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


def kernel_env(hub: Hub, token: str, **more: str) -> dict[str, str]:
    """What a kernel of the hub has in its environment (as its server has it)."""
    return {"JUPYTERHUB_API_URL": hub.api.rstrip("/"), "JUPYTERHUB_API_TOKEN": token, **more}


@pytest.mark.kernel
def test_a_kernels_environment_names_the_hubs_service(hub: Hub) -> None:
    info = find_gateway(environ=kernel_env(hub, hub.user_token("alice")), connection_file="")
    assert info is not None and info.on_hub
    assert (info.url, info.api_url) == (hub.service, hub.service + "api/")
    assert info.how == "the JupyterHub's 'hitl' service"
    with GatewayClient(info) as gw:
        assert gw.me()["name"] == "alice"


@pytest.mark.kernel
def test_no_service_to_find_is_no_gateway_not_a_guess(hub: Hub) -> None:
    # A token that may use the service but not read the hub's list of services: the
    # kernel cannot know where it is, and says nothing rather than guess a port.
    blind = hub.token("alice", scopes=["access:services!service=hitl"])
    assert find_gateway(environ=kernel_env(hub, blind), connection_file="") is None
    # A hub without a service of that name.
    other = kernel_env(hub, hub.user_token("alice"), HITL_NB_HUB_SERVICE="not-there")
    assert find_gateway(environ=other, connection_file="", strict=True) is None


def test_a_hub_that_does_not_answer_is_unavailable_when_strict() -> None:
    down = {
        "JUPYTERHUB_API_URL": f"http://127.0.0.1:{free_port()}/hub/api",
        "JUPYTERHUB_API_TOKEN": "t",
    }
    assert find_gateway(environ=down, connection_file="") is None
    with pytest.raises(GatewayUnavailable, match="did not answer whether it runs"):
        find_gateway(environ=down, connection_file="", strict=True)


@pytest.mark.kernel
def test_a_named_gateway_may_be_the_hubs_service_directly_or_through_the_proxy(
    hub: Hub,
) -> None:
    token = hub.user_token("bob")
    for url in (hub.service, hub.public_service):
        named = {"HITL_NB_GATEWAY": url, "HITL_NB_GATEWAY_TOKEN": token}
        info = find_gateway(environ=named, connection_file="")
        assert info is not None and info.on_hub and info.api_url == url + "api/"
        assert gateway_at(url, token, "HITL_NB_GATEWAY") == info
    assert gateway_at(hub.url, token) is None  # the hub itself is not a gateway


@pytest.mark.kernel
def test_hitl_nb_inbox_finds_the_hubs_service_and_answers_as_its_user(
    hub: Hub, agent: MockAgent
) -> None:
    bob = hub.user_token("bob")
    url, token = find_server(environ=kernel_env(hub, bob))
    assert (url, token) == (hub.service, bob)
    assert find_server(hub.public_service, bob) == (hub.public_service, bob)
    with pytest.raises(LookupError, match="no hitl-nb gateway"):
        find_server(hub.public_service, "not-a-token")
    # What the reviewer page's kernel then does: its Inbox through the service, as bob.
    task = asyncio.run(start_task(agent.url, "approval"))
    alice = find_gateway(environ=kernel_env(hub, hub.user_token("alice")), connection_file="")
    assert alice is not None
    with GatewayClient(alice) as gw:
        gw.register(agent.url, task.id)
    page = find_gateway(
        environ={"HITL_NB_GATEWAY": url, "HITL_NB_GATEWAY_TOKEN": token}, connection_file=""
    )
    with Inbox(gateway=page) as inbox:
        (item,) = [i for i in inbox.items if i.task_id == task.id]
        outcome = inbox.answer(item, {"approve": True})
    assert outcome.status == "accepted", outcome
    (answer,) = asyncio.run(answers_at_agent(agent.url, task.id))
    assert answer["payload"] == {"approve": True}


@pytest.mark.kernel
def test_the_reviewer_page_lists_the_hubs_prompts_for_its_user(
    hub: Hub, agent: MockAgent, tmp_path: Path
) -> None:
    pytest.importorskip("voila")
    task = asyncio.run(start_task(agent.url, "specific", responder="carol"))
    bobs = asyncio.run(start_task(agent.url, "specific", responder="bob"))
    alice = find_gateway(environ=kernel_env(hub, hub.user_token("alice")), connection_file="")
    assert alice is not None
    with GatewayClient(alice) as gw:
        gw.register(agent.url, task.id)
        gw.register(agent.url, bobs.id)
    port = free_port()
    log_path = tmp_path / "voila.log"
    command = [
        sys.executable,
        "-m",
        "hitl_nb.cli",
        "inbox",
        "--server",
        hub.public_service,
        "--token",
        hub.user_token("carol"),
        "--port",
        str(port),
        "--page-token",
        "page-token",
    ]
    with open(log_path, "wb") as log:
        page = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    try:
        until(lambda: "running at" in log_path.read_text(), what="Voila to start", timeout=120)
        # Voila runs the page's notebook for the request: carol's inbox, from the hub.
        html = httpx.get(f"http://127.0.0.1:{port}/?token=page-token", timeout=180).text
    finally:
        page.terminate()
        page.wait(30)
    assert task.id in html, log_path.read_text()[-3000:]
    assert bobs.id not in html  # bob's prompt is not carol's to see
