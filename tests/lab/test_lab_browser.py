"""The prompts panel in JupyterLab, in Chromium, on a plain ``jupyter lab`` with a token.

A conversation in one notebook asks while another notebook is in front: a notification
comes ("Answer", "Show card"), "Answer" draws the card in the panel, its Submit reaches
the agent exactly once, and the card in the first notebook says what became of the
prompt. Also: the count on the panel's tab, in the status bar and in the hidden tab's
title; "Show card"; a burst of prompts as one notification; a reminder before the
deadline; a link to one prompt (``lab?hitl-prompt=<id>``); hostile prompt text; 10,000
open prompts; settings that turn notifications off; a page whose login ended.
Screenshots of the panel, light and dark, go to ``HITL_NB_SCREENSHOTS`` when set (else
the test's folder).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hitl_nb.client import GatewayClient, GatewayInfo
from hitl_nb.mock_agent import MockAgent, Scenario, Step
from tests.helpers import lab
from tests.helpers.panel import (
    APPROVE,
    open_file,
    open_panel,
    register,
    row_of,
    run,
    scroll_to,
    seed_prompts,
    toasts,
    wait_ready,
)
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.until import until

#: A form the agent checks itself: at most 10 replicas (its 422 names the field).
TYPED = {
    "type": "object",
    "properties": {
        "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10},
        "reason": {"type": "string", "title": "Reason"},
    },
    "required": ["replicas"],
}

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.kernel]

ASKING = [
    "from hitl_nb.mock_agent import MockAgent\n"
    "from hitl_nb.notebook import Conversation\n"
    "agent = MockAgent().start()",
    "chat = Conversation.start(agent.url, {'scenario': 'approval', 'start_delay_seconds': 8},"
    " poll_interval=1)\nchat",
]
#: JavaScript: the notebook in front has an idle kernel.
IDLE = (
    "() => window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel?.status"
    " === 'idle'"
)
#: JavaScript: every cell of the notebook in front ran, its kernel is idle again.
RAN = (
    "() => { const w = window.jupyterapp.shell.currentWidget;"
    " return w.sessionContext.session.kernel.status === 'idle'"
    " && w.content.widgets.every(c => c.model.type !== 'code' || c.model.executionCount); }"
)
#: JavaScript: the page's title starts with the count on the panel's tab: "(55) ...".
TITLE_COUNTS = """() => {
  const tab = document.querySelector('.lm-TabBar-tab[data-hitlcount]');
  if (!tab) return false;
  const count = Number(tab.dataset.hitlcount).toLocaleString();
  return document.title.startsWith('(' + count + ') ');
}"""
#: JavaScript: the page hidden (true) or shown (false), as the browser tells it.
VISIBILITY = """(hidden) => {
  Object.defineProperty(document, 'hidden', {value: hidden, configurable: true});
  Object.defineProperty(document, 'visibilityState',
    {value: hidden ? 'hidden' : 'visible', configurable: true});
  document.dispatchEvent(new Event('visibilitychange'));
}"""
HOSTILE = (
    "<script>window.__hitl_pwned = 1</script><img src=x onerror='window.__hitl_pwned=2'>"
    "**Approve** the <b>deploy</b>? \u202eRTL\u202c zero\u200bwidth "
) + "lorem ipsum " * 850


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """JupyterLab with a token (its one user cannot be told apart), reminders 30 s before
    a deadline; its base URL and root folder."""
    root = tmp_path_factory.mktemp("panel-lab")
    settings = root / ".settings" / "hitl-nb"
    settings.mkdir(parents=True)
    (settings / "plugin.jupyterlab-settings").write_text(json.dumps({"reminderMinutes": 0.5}))
    lab.write_notebook(root / "asking.ipynb", ASKING)
    lab.write_notebook(root / "other.ipynb", ["1 + 1"])
    # Room for a hostile agent's 10,000 tasks and the other tests' (every task counts);
    # prompts put straight into the store are read at the feed's recheck, every lease.
    options = ("--HitlServer.max_registrations=100000", "--HitlServer.lease_seconds=3")
    with lab.jupyter_server(root, "jupyterlab", *options) as base:
        yield base, root


def _open(context: Any, base: str, path: str = "lab") -> Any:
    """A page of JupyterLab at ``path`` (a fresh layout: ``reset``), its panel's list read;
    a notebook's kernel idle."""
    page = context.new_page()
    page.goto(f"{base}/{path}{'&' if '?' in path else '?'}reset&token={lab.TOKEN}")
    page.wait_for_function("() => window.jupyterapp?.shell !== undefined", timeout=120_000)
    if path.endswith(".ipynb"):
        page.wait_for_function(IDLE, timeout=120_000)
    wait_ready(page)
    return page


def _waiting(page: Any) -> int:
    """How many prompts the status bar says wait for this user (0: it shows none)."""
    item = page.locator(".hitl-lab-status")
    if not item.is_visible():
        return 0
    return int(item.inner_text().split()[0].replace(",", ""))


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("HITL_NB_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_a_prompt_for_you_in_another_notebook_is_told_answered_and_shown_in_its_card(
    chromium: lab.Chromium, server: tuple[str, Path], tmp_path: Path
) -> None:
    base, _ = server
    with chromium(1400, 900) as context:
        page = _open(context, base, "lab/tree/asking.ipynb")
        before = _waiting(page)
        lab.run_all(page)
        page.wait_for_function(RAN, timeout=60_000)
        agent_url, task_id = lab.kernel(page, "print(agent.url, chat.task.id)").split()
        open_file(page, "other.ipynb")
        toast = page.locator(".Toastify__toast", has_text="A prompt for you")
        toast.wait_for(timeout=90_000)
        # The notebook in front is still the other one: the prompt came to it.
        assert page.evaluate("window.jupyterapp.shell.currentWidget.context.path") == (
            "other.ipynb"
        )
        assert "Approve the deployment of build 41 to staging?" in toast.inner_text()
        assert toast.locator("button", has_text="Show card").count() == 1
        assert [t for t in toasts(page) if "for you" in t] == [toast.inner_text()]
        assert _waiting(page) == before + 1  # the status bar's count, and the tab's
        badge = page.locator(".lm-TabBar-tab[data-hitlcount]").get_attribute("data-hitlcount")
        assert badge == str(before + 1)
        shots = _shots(tmp_path)
        page.wait_for_timeout(600)  # the toast's entrance is over
        page.screenshot(path=str(shots / "lab-notification.png"))
        toast.locator("button", has_text="Answer").click()
        card = page.locator(".hitl-lab-card .hitl-card")
        card.locator(".hitl-form").wait_for(timeout=90_000)
        for dark in (False, True):
            lab.set_theme(page, dark)
            name = f"lab-panel-card-{'dark' if dark else 'light'}.png"
            page.screenshot(path=str(shots / name))
        lab.set_theme(page, False)
        card.locator(".hitl-field-approve input[type=radio]").first.check()
        card.locator("button", has_text="Submit").click()
        card.get_by_text("the agent accepted the answer").wait_for(timeout=60_000)
        # Gone from the list, and from the counts.
        until(lambda: _waiting(page) == before, what="the count back as it was", timeout=30)
        # The first notebook's card says what became of its prompt.
        open_file(page, "asking.ipynb")
        asking = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").nth(1)
        asking.get_by_text("answered through the Jupyter server").wait_for(timeout=60_000)
        assert "accepted" in asking.locator(".hitl-card").first.inner_text()
    answers = run(answers_at_agent(agent_url, task_id))
    assert answers == [{"prompt_id": answers[0]["prompt_id"], "payload": {"approve": True}}]


def test_show_card_opens_the_notebook_at_the_cards_cell(
    chromium: lab.Chromium, server: tuple[str, Path]
) -> None:
    base, _ = server
    with chromium(1400, 900) as context:
        page = _open(context, base, "lab/tree/asking.ipynb")
        lab.run_all(page)
        page.wait_for_function(RAN, timeout=60_000)
        open_file(page, "other.ipynb")
        panel = open_panel(page)
        row = panel.locator(".hitl-lab-row", has_text="Approve the deployment")
        row.locator("button", has_text="Show card").click(timeout=90_000)
        page.wait_for_function(
            "() => window.jupyterapp.shell.currentWidget.context.path === 'asking.ipynb'"
            " && window.jupyterapp.shell.currentWidget.content.activeCellIndex === 1",
            timeout=30_000,
        )
        assert "card in asking.ipynb, cell 2" in row.inner_text()


def test_a_burst_is_one_notification_and_a_deadline_is_reminded(
    chromium: lab.Chromium, server: tuple[str, Path]
) -> None:
    base, root = server
    soon = Scenario(
        "soon", "Asks with a deadline 50 s away.", steps=[Step("Ship it?", APPROVE, None, 50)]
    )
    with MockAgent(scenarios=[soon]) as agent, chromium(1200, 900) as context:
        page = _open(context, base)
        # 50 prompts at once (put in the gateway's store together; its feed finds them
        # at its next look).
        seed_prompts(root / ".hitl", 50, text="Burst prompt {n}?")
        burst = page.locator(".Toastify__toast", has_text="50 prompts for you came in")
        burst.wait_for(timeout=60_000)
        assert len([t for t in toasts(page) if "for you" in t]) == 1
        # Its action opens the panel and dismisses it: the next prompt is told apart.
        burst.locator("button", has_text="Open the prompts panel").click()
        burst.wait_for(state="detached", timeout=30_000)
        assert page.locator(".hitl-lab-panel").is_visible()
        (due,) = run(_start(agent.url, "soon", 1))
        register(base, lab.TOKEN, agent.url, due.id)
        page.locator(".Toastify__toast", has_text="A prompt for you: “Ship it?”").wait_for(
            timeout=60_000
        )
        # 30 s before its deadline (reminderMinutes 0.5 in the user's settings).
        reminder = page.locator(".Toastify__toast", has_text="Due soon: “Ship it?”")
        reminder.wait_for(timeout=60_000)


def _hostile_row(page: Any, base: str) -> Any:
    try:
        return scroll_to(page, base, lab.TOKEN, "<script>")
    except StopIteration:
        return None  # not listed yet


async def _start(url: str, scenario: str, count: int) -> list[Any]:
    return list(await asyncio.gather(*(start_task(url, scenario) for _ in range(count))))


def test_a_link_opens_one_prompts_card(chromium: lab.Chromium, server: tuple[str, Path]) -> None:
    base, _ = server
    with MockAgent() as agent, chromium(1200, 900) as context:
        task = run(start_task(agent.url, "approval"))
        reg = register(base, lab.TOKEN, agent.url, task.id)
        prompt_id = reg["prompts"][0]["prompt_id"]
        page = _open(context, base, f"lab?hitl-registration={reg['id']}&hitl-prompt={prompt_id}")
        card = page.locator(".hitl-lab-card .hitl-card")
        card.locator(".hitl-form").wait_for(timeout=90_000)
        assert prompt_id[:8] not in page.locator(".hitl-lab-answering").inner_text()
        assert "Approve the deployment" in card.inner_text()


def _kernels(base: str) -> list[str]:
    """The ids of the kernels the server runs."""
    reply = httpx.get(f"{base}/api/kernels", headers={"Authorization": f"token {lab.TOKEN}"})
    reply.raise_for_status()
    return sorted(k["id"] for k in reply.json())


def test_the_panel_answers_with_its_own_form_and_starts_no_kernel(
    chromium: lab.Chromium, server: tuple[str, Path], tmp_path: Path
) -> None:
    base, _ = server
    consensus = Scenario(
        "typed", "A typed form.", steps=[Step("How many replicas, and why?", TYPED, None, 3600)]
    )
    with MockAgent(scenarios=[consensus]) as agent, chromium(1200, 900) as context:
        page = _open(context, base)
        task = run(start_task(agent.url, "typed"))
        reg = register(base, lab.TOKEN, agent.url, task.id)
        key = f"{reg['id']}/{reg['prompts'][0]['prompt_id']}"
        before = _kernels(base)
        open_panel(page)
        row = row_of(page, base, lab.TOKEN, key)
        row.locator("button", has_text="Answer").click()
        card = page.locator(".hitl-lab-card .hitl-card")
        card.locator(".hitl-form .hitl-field-replicas input").wait_for(timeout=30_000)
        assert "How many replicas, and why?" in card.inner_text()
        # every input labelled; the schema's text drawn as text
        unlabelled = card.evaluate(
            "c => [...c.querySelectorAll('input,select,textarea')]"
            ".filter(i => !c.querySelector(`label[for='${i.id}']`)"
            " && !i.getAttribute('aria-label')).length"
        )
        assert unlabelled == 0
        shots = _shots(tmp_path)
        for dark in (False, True):
            lab.set_theme(page, dark)
            page.screenshot(path=str(shots / f"lab-panel-form-{'dark' if dark else 'light'}.png"))
        lab.set_theme(page, False)
        card.locator(".hitl-field-replicas input").fill("2.5")
        card.locator("button", has_text="Submit").click()
        card.get_by_text("Enter a whole number").first.wait_for(timeout=10_000)
        card.locator(".hitl-field-replicas input").fill("12")  # the agent's 422: at most 10
        card.locator(".hitl-field-reason input").fill("load")
        card.locator("button", has_text="Submit").click()
        card.get_by_text("the agent refused the answer").wait_for(timeout=30_000)
        assert card.locator(".hitl-field-replicas [aria-invalid=true]").count() == 1
        card.locator(".hitl-field-replicas input").fill("3")
        card.locator("button", has_text="Submit").click()
        card.get_by_text("the agent accepted the answer").wait_for(timeout=60_000)
        after = _kernels(base)
        # Answered again (the relay's route, as a second page would): 409, nothing sent.
        again = httpx.post(
            f"{base}/hitl/lab/prompts/{key}/answer",
            json={"payload": {"replicas": 4}},
            headers={"Authorization": f"token {lab.TOKEN}"},
        )
        assert again.status_code == 409, again.text
        answers = run(answers_at_agent(agent.url, task.id))
    assert after == before  # no kernel was started to answer
    assert [a["payload"] for a in answers] == [{"replicas": 3, "reason": "load"}]


def test_a_digests_link_opens_the_panel(chromium: lab.Chromium, server: tuple[str, Path]) -> None:
    base, _ = server
    with chromium(1200, 900) as context:
        page = _open(context, base, "lab?hitl-inbox=1")
        page.locator(".hitl-lab-panel").first.wait_for(state="visible", timeout=60_000)


def test_hostile_text_is_drawn_as_text_and_read_whole(
    chromium: lab.Chromium, server: tuple[str, Path]
) -> None:
    base, _ = server
    # A deadline puts it first in the list (soonest deadline first), in view.
    hostile = Scenario(
        "hostile", "Markup as a question.", steps=[Step(HOSTILE, APPROVE, None, 3600)]
    )
    with MockAgent(scenarios=[hostile]) as agent, chromium(1200, 900) as context:
        page = _open(context, base)
        task = run(start_task(agent.url, "hostile"))
        register(base, lab.TOKEN, agent.url, task.id)
        open_panel(page)
        page.wait_for_function(
            "() => document.querySelector('.hitl-lab-status')?.textContent !== undefined",
            timeout=60_000,
        )
        row = until(lambda: _hostile_row(page, base), what="the hostile prompt listed", timeout=60)
        question = row.locator(".hitl-lab-question")
        assert question.evaluate("q => q.children.length") == 0  # text, no elements
        assert question.inner_text().startswith("<script>window.__hitl_pwned = 1</script>")
        toast = page.locator(".Toastify__toast", has_text="<script>")
        assert toast.count() == 1 and len(toast.inner_text()) < 220
        row.locator("button", has_text="Read all").click()
        whole = page.locator(".hitl-lab-whole")
        page.wait_for_function(
            "(n) => document.querySelector('.hitl-lab-whole')?.textContent.length === n",
            arg=len(HOSTILE),
            timeout=30_000,
        )
        assert whole.evaluate("w => w.children.length") == 0
        assert page.evaluate("window.__hitl_pwned") is None


def test_notifications_can_be_turned_off(chromium: lab.Chromium, server: tuple[str, Path]) -> None:
    base, _ = server
    with MockAgent() as agent, chromium(1200, 900) as context:
        page = _open(context, base)
        page.evaluate(
            "window.jupyterapp.serviceManager.settings.save('hitl-nb:plugin',"
            " JSON.stringify({reminderMinutes: 0.5, notifications: false}))"
        )
        page.reload()
        page.wait_for_function("() => window.jupyterapp?.shell !== undefined", timeout=120_000)
        wait_ready(page)
        try:
            task = run(start_task(agent.url, "approval"))
            reg = register(base, lab.TOKEN, agent.url, task.id)
            # The page has the prompt (its row is drawn), and said nothing of it.
            open_panel(page)
            row_of(page, base, lab.TOKEN, f"{reg['id']}/{reg['prompts'][0]['prompt_id']}")
            assert [t for t in toasts(page) if "for you" in t] == []
        finally:
            page.evaluate(
                "window.jupyterapp.serviceManager.settings.save('hitl-nb:plugin',"
                " JSON.stringify({reminderMinutes: 0.5}))"
            )


def test_the_hidden_tab_counts_the_prompts_in_its_title(
    chromium: lab.Chromium, server: tuple[str, Path]
) -> None:
    base, _ = server
    with MockAgent() as agent, chromium(1200, 900) as context:
        page = _open(context, base)
        # Headless Chromium never hides a page: the tab is hidden as a browser hides
        # it (document.hidden, then the visibilitychange event).
        page.evaluate(VISIBILITY, True)
        task = run(start_task(agent.url, "approval"))
        register(base, lab.TOKEN, agent.url, task.id)
        # The title starts with the count the tab's badge shows (prompts of the other
        # tests come and go meanwhile: both are read at once).
        page.wait_for_function(TITLE_COUNTS, timeout=60_000)
        page.evaluate(VISIBILITY, False)
        page.wait_for_function("() => !/^\\(\\d/.test(document.title)", timeout=30_000)


def test_thousands_of_open_prompts_stay_light_and_one_notification(
    chromium: lab.Chromium, server: tuple[str, Path]
) -> None:
    base, root = server
    with chromium(1200, 900) as context:
        page = _open(context, base)
        before = len([t for t in toasts(page) if "for you" in t])
        # Straight into the store: the gateway's feed reads it again by itself (at its
        # recheck, as it would after another replica's change).
        # 2,000 show the virtual list as well as 10,000 do (bench_lab_panel.py --prompts
        # measures the panel at any number), and the module's later tests list them all.
        seed_prompts(root / ".hitl", 2_000, text="Hostile prompt {n}: approve?")
        panel = open_panel(page)
        page.wait_for_function(
            "() => (document.querySelector('.hitl-lab-summary')?.textContent || '')"
            ".includes('2,0')",
            timeout=120_000,
        )
        drawn = page.locator(".hitl-lab-row").count()
        assert 0 < drawn < 40  # a virtual list: the rows in view
        # Scrolled to where prompt 1,400 is (the list's order: soonest deadline first),
        # its row is drawn there.
        scroll_to(page, base, lab.TOKEN, "Hostile prompt 1400:")
        assert len([t for t in toasts(page) if "for you" in t]) == before + 1
        assert panel.locator(".hitl-lab-row").count() < 40


def test_a_page_whose_login_ended_shows_nothing(
    chromium: lab.Chromium, named_lab: tuple[str, Path]
) -> None:
    base, _ = named_lab
    gateway = GatewayInfo(base, "alice-token", "alice's own token")
    with MockAgent() as agent, chromium(1200, 900) as context:
        context.add_cookies([{"name": "test-login", "value": "alice-token", "url": base}])
        page = _open(context, base.rstrip("/"))
        first = run(start_task(agent.url, "specific", responder="alice"))
        with GatewayClient(gateway) as gw:
            gw.register(agent.url, first.id)
            open_panel(page)
            page.locator(".hitl-lab-row").first.wait_for(timeout=60_000)
            # The login ends (the cookie goes); the next change is not read.
            context.clear_cookies()
            second = run(start_task(agent.url, "specific", responder="alice"))
            gw.register(agent.url, second.id)
        banner = page.locator(".hitl-lab-banner[data-state='logged-out']")
        banner.wait_for(state="attached", timeout=60_000)
        assert "not logged in" in banner.inner_text()
        assert page.locator(".hitl-lab-row").count() == 0
        assert page.locator(".lm-TabBar-tab[data-hitlcount]").count() == 0
        assert not page.locator(".hitl-lab-status").is_visible()
