"""On a real JupyterHub with the hitl service: bob's JupyterLab shows alice's
``consensus:2`` prompt and tells him of it, and bob answers from the prompts panel.

The hub's own login page (DummyAuthenticator), bob's own single-user server (its relay
follows the hub service's feed as bob), the panel's kernel in bob's server (answering
through the service with bob's server token); alice registered the task and answered
first with her own token, so bob's answer is the second agreeing one: the agent gets one
answer, agreed by both. A prompt alice registered for carol alone tells bob nothing.
Then the service is killed: bob's panel says once that the prompts cannot be read, and
is current again once the hub has restarted the service.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.client import GatewayClient, GatewayInfo
from hitl_nb.mock_agent import MockAgent
from tests.helpers import lab
from tests.helpers.hub import Hub
from tests.helpers.panel import run, toasts, wait_ready
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.until import until

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.kernel]

NO_NEWS = {"fetchNews": "false"}


def _login(context: Any, hub: Hub, user: str) -> Any:
    settings = hub.root / "home" / user / ".jupyter" / "lab" / "user-settings"
    news = settings / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True, exist_ok=True)
    (news / "notification.jupyterlab-settings").write_text(json.dumps(NO_NEWS))
    page = context.new_page()
    page.goto(f"{hub.url}hub/login?next=/user/{user}/lab?reset")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", "any")
    page.click("input[type=submit], button[type=submit]")
    page.wait_for_function("() => window.jupyterapp?.shell !== undefined", timeout=180_000)
    wait_ready(page, timeout=120_000)
    return page


def test_bob_is_told_of_alices_consensus_prompt_and_answers_it_from_the_panel(
    chromium: lab.Chromium, hub: Hub, tmp_path: Path
) -> None:
    hub.start_server("bob")
    shots = Path(os.environ.get("HITL_NB_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    with MockAgent() as agent, chromium(1300, 900) as context:
        page = _login(context, hub, "bob")
        assert page.evaluate("document.querySelector('.hitl-lab-banner').dataset.state") == "ok"
        carols = run(start_task(agent.url, "specific", responder="carol"))
        task = run(start_task(agent.url, "consensus", n=2))
        alice = GatewayInfo(hub.service, hub.user_token("alice"), "alice", hub.service + "api/")
        with GatewayClient(alice) as gw:
            gw.register(agent.url, carols.id)  # carol's alone: nothing for bob
            reg = gw.register(agent.url, task.id)
            (prompt,) = reg["prompts"]
            said = gw.answer(reg["id"], prompt["prompt_id"], {"approve": True})
        assert said.status == "collecting"
        toast = page.locator(".Toastify__toast", has_text="A prompt for you")
        toast.wait_for(timeout=90_000)
        assert [t for t in toasts(page) if "for you" in t] == [toast.inner_text()]
        page.evaluate("() => { void window.jupyterapp.commands.execute('hitl-nb:open-prompts'); }")
        row = page.locator(".hitl-lab-row", has_text=prompt["prompt"][:40])
        assert "2 must agree: 1 so far" in row.inner_text()
        assert page.locator(".hitl-lab-row", has_text="carol: approve").count() == 0
        page.screenshot(path=str(shots / "hub-lab-panel.png"))
        toast.locator("button", has_text="Answer").click()
        card = page.locator(".hitl-lab-card .hitl-card")
        card.get_by_text("1 of 2 agreeing").wait_for(timeout=120_000)
        card.locator("input[type=radio]").first.check()  # Approve: Yes
        card.locator("button", has_text="Submit").click()
        status = card.locator(".hitl-lab-outcome", has_text="accepted")
        status.wait_for(timeout=60_000)
        words = status.inner_text()
        assert "more needed" not in card.inner_text()  # the count before is not left standing
        (answer,) = run(answers_at_agent(agent.url, task.id))
    assert answer["payload"] == {"approve": True}
    assert "alice" in words and "bob" in words, words  # agreed by both


def test_the_hub_service_down_is_said_once_and_the_panel_recovers_by_itself(
    chromium: lab.Chromium, hub: Hub
) -> None:
    hub.start_server("bob")
    with chromium(1200, 900) as context:
        page = _login(context, hub, "bob")
        reads: list[str] = []
        page.on("request", lambda r: reads.append(r.url) if "/hitl/lab/prompts" in r.url else None)
        before = hub.service_pid()
        os.kill(before, signal.SIGKILL)
        banner = page.locator(".hitl-lab-banner[data-state='unavailable']")
        banner.wait_for(state="attached", timeout=120_000)
        assert "hub's hitl service" in banner.inner_text()
        until(lambda: hub.service_pid() not in (0, before), timeout=120, what="a new service")
        page.locator(".hitl-lab-banner[data-state='ok']").wait_for(
            state="attached", timeout=120_000
        )
        # Said once: a read when it went down, one when it came back (and the page's
        # retries of its own, none here: the server answered all along).
        assert len(reads) <= 4, reads
        assert [t for t in toasts(page) if "hitl" in t.lower() or "prompt" in t.lower()] == []
