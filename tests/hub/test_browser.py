"""bob, logged in to the hub in Chromium, answers from his Inbox in JupyterLab by clicking.

The hub's own login page (DummyAuthenticator), bob's own single-user server and kernel;
the prompt is alice's (a ``consensus:2`` task she registered with the hub's service, and
her answer already given); bob's Inbox finds the service by itself, lists her prompt,
and his click is the second agreeing answer: the agent gets one answer, agreed by both.
Screenshots of his inbox with the open card, light and dark, go to
``HITL_NB_SCREENSHOTS`` when set (else the test's folder).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from hitl_nb.client import GatewayClient, GatewayInfo
from hitl_nb.mock_agent import MockAgent
from tests.helpers import lab
from tests.helpers.hub import Hub
from tests.helpers.tasks import answers_at_agent, start_task

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.kernel]

CELLS = ["from hitl_nb.notebook import Inbox\ninbox = Inbox(poll_interval=1)\ninbox"]
NO_NEWS = {"fetchNews": "false"}


def _prepare_home(hub: Hub, user: str) -> None:
    home = hub.root / "home" / user
    settings = home / ".jupyter" / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps(NO_NEWS))
    lab.write_notebook(home / "inbox.ipynb", CELLS)


def _shots() -> Path | None:
    folder = os.environ.get("HITL_NB_SCREENSHOTS")
    return Path(folder) if folder else None


def test_bob_answers_alices_prompt_from_his_inbox_by_clicking(
    chromium: lab.Chromium, hub: Hub, tmp_path: Path
) -> None:
    _prepare_home(hub, "bob")
    hub.start_server("bob")
    with MockAgent() as agent:
        task = asyncio.run(start_task(agent.url, "consensus", n=2))
        alice = GatewayInfo(hub.service, hub.user_token("alice"), "alice", hub.service + "api/")
        with GatewayClient(alice) as gw:
            reg = gw.register(agent.url, task.id)
            (prompt,) = reg["prompts"]
            assert gw.answer(reg["id"], prompt["prompt_id"], {"approve": True}).status == (
                "collecting"
            )
        shots = _shots() or tmp_path
        shots.mkdir(parents=True, exist_ok=True)
        with chromium(1200, 900) as context:
            page = context.new_page()
            page.goto(f"{hub.url}hub/login?next=/user/bob/lab/tree/inbox.ipynb")
            page.fill("input[name=username]", "bob")
            page.fill("input[name=password]", "any")
            page.click("input[type=submit], button[type=submit]")
            page.wait_for_function(
                "() => { const w = window.jupyterapp?.shell?.currentWidget;"
                " return w?.sessionContext?.session?.kernel?.status === 'idle'; }",
                timeout=180_000,
            )
            lab.run_all(page)
            row = page.locator(".hitl-inbox-row", has_text="Approve the change?")
            row.locator("button", has_text="Open").click(timeout=120_000)
            card = page.locator(".hitl-inbox-detail .hitl-card")
            card.get_by_text("1 of 2 agreeing").wait_for(timeout=60_000)
            page.get_by_text("From the JupyterHub's hitl service").wait_for(timeout=10_000)
            for dark in (False, True):
                lab.set_theme(page, dark)
                name = f"hub-inbox-{'dark' if dark else 'light'}.png"
                page.screenshot(path=str(shots / name))
            lab.set_theme(page, False)
            card.locator("input[type=radio]").first.check()  # Approve: Yes
            card.locator("button", has_text="Submit").click()
            card.locator(".hitl-card-status", has_text="accepted").wait_for(timeout=60_000)
            said = card.locator(".hitl-card-status").inner_text()
        (answer,) = asyncio.run(answers_at_agent(agent.url, task.id))
    assert answer["payload"] == {"approve": True}
    assert "alice" in said and "bob" in said, said  # agreed by both
    for dark in ("light", "dark"):
        assert (shots / f"hub-inbox-{dark}.png").stat().st_size > 10_000
