"""The prompts panel in Notebook 7, in Chromium: each notebook is a page of its own.

A conversation in one notebook's page asks while another notebook's page is in front:
a notification comes there, "Answer" draws the card in that page's side panel, its
Submit reaches the agent exactly once, and the first page's card says what became of
its prompt. Notebook 7 has no status bar: the side panel's tab carries the count. A link
to one prompt (``tree?hitl-prompt=<id>``) opens its card on the file page.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers import lab
from tests.helpers.panel import register, run, toasts, wait_ready
from tests.helpers.tasks import answers_at_agent, start_task

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.kernel]

ASKING = [
    "from hitl_nb.mock_agent import MockAgent\n"
    "from hitl_nb.notebook import Conversation\n"
    "agent = MockAgent().start()",
    "chat = Conversation.start(agent.url, {'scenario': 'approval', 'start_delay_seconds': 8},"
    " poll_interval=1)\nchat",
]
RAN = (
    "() => { const w = window.jupyterapp.shell.currentWidget;"
    " return w.sessionContext.session.kernel.status === 'idle'"
    " && w.content.widgets.every(c => c.model.type !== 'code' || c.model.executionCount); }"
)


@pytest.fixture(scope="module")
def notebook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One Notebook 7 server for the module (its two notebooks written first): its URL."""
    root = tmp_path_factory.mktemp("notebook7")
    lab.write_notebook(root / "asking.ipynb", ASKING)
    lab.write_notebook(root / "other.ipynb", ["1 + 1"])
    with lab.jupyter_server(root, "notebook") as base:
        yield base


def test_a_prompt_asked_in_one_notebooks_page_is_answered_in_anothers(
    chromium: lab.Chromium, notebook: str, tmp_path: Path
) -> None:
    base = notebook
    with chromium(1300, 900) as context:
        # The other page is open and has read the list before anything asks: a prompt
        # already waiting when a page opens is counted there, not notified (notifier.ts).
        other = lab.open_notebook(context, base, "other.ipynb", app="notebook")
        wait_ready(other)
        asking = lab.open_notebook(context, base, "asking.ipynb", app="notebook")
        wait_ready(asking)
        lab.run_all(asking)
        asking.wait_for_function(RAN, timeout=60_000)
        agent_url, task_id = lab.kernel(asking, "print(agent.url, chat.task.id)").split()
        other.bring_to_front()
        toast = other.locator(".Toastify__toast", has_text="A prompt for you")
        toast.wait_for(timeout=90_000)
        assert "Approve the deployment of build 41 to staging?" in toast.inner_text()
        assert [t for t in toasts(other) if "for you" in t] == [toast.inner_text()]
        # No status bar here; the count is on the panel's tab.
        assert other.locator(".hitl-lab-status").count() == 0
        toast.locator("button", has_text="Answer").click()
        card = other.locator(".hitl-lab-card .hitl-card")
        card.locator(".hitl-form").wait_for(timeout=90_000)
        _screenshot(other, tmp_path)
        card.locator(".hitl-field-approve input[type=radio]").first.check()
        card.locator("button", has_text="Submit").click()
        card.get_by_text("the agent accepted the answer").wait_for(timeout=60_000)
        first = asking.locator(".jp-Cell").nth(1)
        first.get_by_text("answered through the Jupyter server").wait_for(timeout=60_000)
        answers = run(answers_at_agent(agent_url, task_id))  # the agent lives in the kernel
    assert answers == [{"prompt_id": answers[0]["prompt_id"], "payload": {"approve": True}}]


def _screenshot(page: Any, tmp_path: Path) -> None:
    folder = Path(os.environ.get("HITL_NB_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / "notebook7-panel-card.png"))


def test_a_link_to_one_prompt_opens_its_card_on_the_file_page(
    chromium: lab.Chromium, notebook: str
) -> None:
    base = notebook
    with MockAgent() as agent, chromium(1200, 800) as context:
        task = run(start_task(agent.url, "approval"))
        reg = register(base, lab.TOKEN, agent.url, task.id)
        prompt_id = reg["prompts"][0]["prompt_id"]
        page = context.new_page()
        page.goto(f"{base}/tree?hitl-prompt={prompt_id}&token={lab.TOKEN}")
        card = page.locator(".hitl-lab-card .hitl-card")
        card.locator(".hitl-form").wait_for(timeout=90_000)
        assert "Approve the deployment of build 41 to staging?" in card.inner_text()
