"""The notebook's Inbox on a real Jupyter server: the gateway's prompts, live, answered
through the gateway; and end to end, prompts that outlive kernels and server restarts."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from hitl_nb.client import GatewayInfo
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook import GatewayCard, Inbox
from tests.helpers.jupyter_process import ROOT, jupyter_server
from tests.helpers.jupyter_users import auth
from tests.helpers.lab import Chromium
from tests.helpers.ports import free_port
from tests.helpers.server_kernel import server_kernel
from tests.helpers.until import until
from tests.server.conftest import answers_at_agent, start_task

pytestmark = pytest.mark.kernel

YES = {"approve": True}


def _register(url: str, agent_url: str, task_id: str) -> dict[str, Any]:
    r = httpx.post(
        url + "hitl/api/tasks",
        headers=auth("alice"),
        json={"agent_url": agent_url, "task_id": task_id},
        timeout=60,
    )
    assert r.status_code == 201, r.text
    return dict(r.json())


@pytest.fixture(scope="module")
def served(
    named_lab: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    """The session's named JupyterLab (alice, bob, carol; the gateway) and two mock
    agents of this module's own."""
    tmp = tmp_path_factory.mktemp("inbox-server")
    with MockAgent() as one, MockAgent() as two:
        yield Served(named_lab[0], one, two, tmp)


@dataclass
class Served:
    url: str
    one: MockAgent
    two: MockAgent
    tmp: Path


def _new_task(served: Served, agent: MockAgent, scenario: str = "approval", **kw: Any) -> str:
    task = asyncio.run(start_task(agent.url, scenario, **kw))
    _register(served.url, agent.url, task.id)
    return str(task.id)


@pytest.mark.slow
def test_the_gateway_inbox_lists_every_agent_and_answers_through_the_server(
    served: Served,
) -> None:
    one, two = served.one, served.two
    mine = _new_task(served, one)
    bobs = _new_task(served, two, "specific", responder="bob")
    info = GatewayInfo(served.url, "alice-token", "test")
    with Inbox(gateway=info, poll_interval=0.2) as inbox:
        assert not inbox.lives_with_kernel
        by_task = {item.task_id: item for item in inbox.items}
        assert {mine, bobs} <= set(by_task)
        assert {by_task[mine].agent_url, by_task[bobs].agent_url} == {one.url, two.url}
        # S-3, decided by the server: bob's prompt is shown, not alice's to answer.
        theirs = by_task[bobs]
        assert theirs.may_answer is False and "bob" in (theirs.why_not or "")
        refused = inbox.answer(theirs, YES)
        assert refused.status == "refused" and "nothing was sent" in refused.message
        card = inbox.open(by_task[mine])
        assert isinstance(card, GatewayCard)
        card.form.value = YES
        card.form.submit_button.click()  # as a person clicks it
        until(lambda: card.outcome is not None, what="the server's verdict")
        assert card.outcome is not None and card.outcome.status == "accepted"
        # Gone from the list without refresh(); a new prompt comes without one.
        until(lambda: mine not in {i.task_id for i in inbox.items})
        later = _new_task(served, one)
        until(lambda: later in {i.task_id for i in inbox.items})
    with Inbox(gateway=info, agents=[two.url]) as only_two:
        assert bobs in {i.task_id for i in only_two.items}
        assert {i.agent_url for i in only_two.items} == {two.url}
    assert [a["payload"] for a in asyncio.run(answers_at_agent(one.url, mine))] == [YES]
    assert asyncio.run(answers_at_agent(two.url, bobs)) == []


@pytest.mark.slow
def test_a_gateway_inbox_follows_the_gateways_feed_instead_of_polling(served: Served) -> None:
    """Its timer looks once an hour: only the gateway's feed brings a new prompt, and
    takes one answered elsewhere away."""
    info = GatewayInfo(served.url, "alice-token", "test")
    with Inbox(gateway=info, poll_interval=3600) as inbox:
        until(lambda: inbox._looking.feed_heard, what="the gateway's feed heard")
        later = _new_task(served, served.one)
        until(lambda: later in {i.task_id for i in inbox.items}, timeout=15.0)
        (item,) = [i for i in inbox.items if i.task_id == later]
        r = httpx.post(
            f"{served.url}hitl/api/tasks/{item.registration}/prompts/{item.prompt_id}/answer",
            headers=auth("alice"),
            json={"payload": YES},
            timeout=60,
        )
        assert r.status_code == 200, r.text
        until(lambda: later not in {i.task_id for i in inbox.items}, timeout=15.0)


@pytest.mark.slow
def test_a_consensus_answer_in_the_inbox_is_held_with_the_gateways_count(
    served: Served,
) -> None:
    # The same words and the same open form as a PromptCard in gateway mode.
    task = _new_task(served, served.one, "consensus", n=2)
    info = GatewayInfo(served.url, "alice-token", "test")
    with Inbox(gateway=info, poll_interval=0.2) as inbox:
        item = until(lambda: next((i for i in inbox.items if i.task_id == task), None))
        card = inbox.open(item)
        assert isinstance(card, GatewayCard)
        held = card.answer(YES)
        assert held.status == "held", held
        assert "from alice" in held.message and "once 2 people" in held.message
        assert "1 of 2 agreeing; 1 more needed" in card.notes.value  # the gateway's count
        assert card.is_open and not card.form.disabled  # alice may still change it
        # bob agrees, from his own token: the gateway forwards once; the prompt leaves.
        path = f"hitl/api/tasks/{item.registration}/prompts/{item.prompt_id}/answer"
        r = httpx.post(served.url + path, headers=auth("bob"), json={"payload": YES}, timeout=60)
        assert r.status_code in (200, 202), r.text
        until(lambda: not card.is_open, what="the prompt to leave the inbox")
        assert card.form.disabled
    assert [a["payload"] for a in asyncio.run(answers_at_agent(served.one.url, task))] == [YES]


@pytest.mark.slow
@pytest.mark.browser
def test_a_reviewer_answers_on_the_voila_page_in_chromium(
    served: Served, chromium: Chromium
) -> None:
    pytest.importorskip("voila")
    task = _new_task(served, served.one, "deadline", deadline_seconds=900)
    port = free_port()
    log_path = served.tmp / "voila.log"
    with open(log_path, "wb") as log:
        page_server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "hitl_nb.cli",
                "inbox",
                "--server",
                served.url,
                "--token",
                "alice-token",
                "--port",
                str(port),
                "--page-token",
                "page-token",
            ],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    shots = os.environ.get("HITL_NB_SCREENSHOTS")
    try:
        until(lambda: "running at" in log_path.read_text(), what="Voila to start", timeout=120)
        with chromium(1100, 800) as context:
            page = context.new_page()
            page.goto(f"http://127.0.0.1:{port}/?token=page-token")
            row = page.locator(".hitl-inbox-row", has_text="Approve before the deadline")
            row.locator("button", has_text="Open").click(timeout=120_000)
            card = page.locator(".hitl-inbox-detail .hitl-card")
            card.get_by_text("deadline in").wait_for(timeout=60_000)
            if shots:
                page.screenshot(path=str(Path(shots) / "reviewer-page-light.png"))
            card.locator("input[type=radio]").first.check()  # Approve: Yes
            card.locator("button", has_text="Submit").click()
            card.locator(".hitl-card-status", has_text="accepted").wait_for(timeout=60_000)
    finally:
        page_server.terminate()
        page_server.wait(30)
    answers = asyncio.run(answers_at_agent(served.one.url, task))
    assert [a["payload"] for a in answers] == [YES]


REGISTER = """
from hitl_nb.client import GatewayClient, SyncHitlClient, find_gateway
with SyncHitlClient(AGENT) as client:  # the agent asks in 6 s
    TASK = client.send({"scenario": "approval", "start_delay_seconds": 6},
                       return_immediately=True).id
with GatewayClient(find_gateway()) as gw:
    reg = gw.register(AGENT, TASK)
print(reg["id"], TASK, len(reg["prompts"]))
"""

ANSWER = """
from hitl_nb import Inbox
with Inbox() as inbox:
    (item,) = [i for i in inbox.items if i.task_id == TASK]
    print(inbox.answer(item, {"approve": True}).status)
"""


@pytest.mark.slow
def test_a_prompt_outlives_the_kernel_that_registered_it_and_a_server_restart(
    tmp_path: Path,
) -> None:
    hub = {"JUPYTERHUB_API_TOKEN": "alice-token"}  # the kernels' user, as under a hub
    alice = auth("alice")
    # No subscription, and a look at the task once an hour: the prompt can only reach
    # the server by the agent's push notification (A2A push, configured by the watcher).
    push_only = {
        "HitlServer": {
            "state_dir": str(tmp_path / "state"),
            "poll_interval": 3600,
            "max_streams": 0,
        }
    }
    with MockAgent(store=tmp_path / "agent.sqlite") as agent:
        with jupyter_server(tmp_path, env=hub, ready_headers=alice, extra_config=push_only) as url:
            with server_kernel(url, "alice-token", tmp_path / "runtime") as run:
                reg_id, task, prompts = run(f"AGENT = {agent.url!r}\n" + REGISTER).split()
            assert prompts == "0"  # registered while the agent was still working
            # The kernel is gone; the agent asks now and pushes the task to the server.

            def listed() -> list[dict[str, Any]]:
                r = httpx.get(url + "hitl/api/prompts", headers=alice, timeout=60)
                return [p for p in r.json()["prompts"] if p["registration"] == reg_id]

            (prompt,) = until(listed, what="the prompt to reach the server by push")
            assert prompt["task_id"] == task
        # A restart between the prompt and the answer.
        with jupyter_server(tmp_path, env=hub, ready_headers=alice, extra_config=push_only) as url:
            with server_kernel(url, "alice-token", tmp_path / "runtime") as run:
                assert run(f"TASK = {task!r}\n" + ANSWER).strip() == "accepted"
        assert [a["payload"] for a in asyncio.run(answers_at_agent(agent.url, task))] == [YES]
