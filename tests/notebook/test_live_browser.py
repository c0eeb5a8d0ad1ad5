"""Live cards in a real browser: JupyterLab, a real kernel, the mock agent, Chromium.

The cards follow their task while the person watches: working (with a clock), the
prompt (a countdown, the "Answering as" field), an answer accepted from a slow agent,
a deadline that fails the task while the card is open, and the countdown costing the
kernel nothing (no widget message while it ticks). The screenshots of each card state
are taken by ``docs/img/take_screenshots.py``.

Chromium comes from the system (Debian's ``chromium``). Without it these tests are
skipped, except under ``CI=true``, where a missing browser is a failure.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.lab import TOKEN, jupyter_server, write_notebook

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.kernel]

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("jupyterlab")

CELLS = [
    # 0: two agents (one slow to resume) and a prompt with both a deadline and a named
    # responder
    """
from hitl_nb.mock_agent import MockAgent, Scenario, Step
from hitl_nb.notebook import Conversation

review = Scenario("review", "a named reviewer and a deadline", steps=[Step(
    "Ship release 4.2 to production?",
    {"type": "object", "required": ["ship"], "additionalProperties": False,
     "properties": {"ship": {"type": "boolean", "title": "Ship"},
                    "note": {"type": "string", "title": "Note"}}},
    allowed_responders=["specific:reviewer@example.org"], deadline_seconds=600)])
agent = MockAgent(scenarios=[review]).start()
slow = MockAgent(faults=["slow-resume=3000"]).start()
""",
    # 1: an agent that thinks before its first prompt
    'working = Conversation.start(agent.url, {"scenario": "approval", '
    '"start_delay_seconds": 6}, settle=0)\nworking',
    # 2: another cell, while the agent thinks
    'print("another cell ran")',
    # 3: a deadline that fails the task while the card is open
    'late = Conversation.start(agent.url, {"scenario": "deadline", "deadline_seconds": 14, '
    '"on_deadline": "fail"}, poll_interval=60)\nlate',
    # 4: a named responder, answered by click
    'who = Conversation.start(agent.url, {"scenario": "review"}, responder="intern@example.org")'
    "\nwho",
    # 5: a slow agent's accepted answer
    'patient = Conversation.start(slow.url, {"scenario": "approval"})\npatient',
]

RUN_CELL_JS = """(i) => {
  const panel = window.jupyterapp.shell.currentWidget;
  panel.content.activeCellIndex = i;
  return window.jupyterapp.commands.execute('notebook:run-cell');
}"""
CELL_OUTPUT_JS = """(i) => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel.content.widgets[i].model.outputs.toJSON();
}"""
# The clock's animated custom property, read from the live page.
CLOCK_JS = """(el) => {
  const style = getComputedStyle(el);
  for (const name of style) if (name.startsWith('--hitl-s-')) return style.getPropertyValue(name);
  return null;
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("live-lab")
    write_notebook(root / "live.ipynb", CELLS)
    tracker = root / ".settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)  # every cell rendered, so cards off screen still update
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    with jupyter_server(root, unset=("JUPYTERHUB_USER",)) as base:
        yield base


@pytest.fixture(scope="module")
def page(chromium: Any, lab: str) -> Iterator[Any]:
    with chromium(1100, 1400) as context:
        page = context.new_page()
        frames: list[tuple[float, str, str]] = []

        def on_socket(ws: Any) -> None:
            ws.on("framesent", lambda f: frames.append((time.monotonic(), "sent", str(f))))
            ws.on("framereceived", lambda f: frames.append((time.monotonic(), "recv", str(f))))

        page.on("websocket", on_socket)
        page.frames_log = frames
        page.goto(f"{lab}/lab/tree/live.ipynb?token={TOKEN}")
        page.wait_for_function(
            "() => { const w = window.jupyterapp?.shell?.currentWidget;"
            " return w?.sessionContext?.session?.kernel?.status === 'idle'; }",
            timeout=120_000,
        )
        page.evaluate(RUN_CELL_JS, 0)
        _wait_idle(page)
        yield page


def _wait_idle(page: Any, timeout: float = 60_000) -> None:
    page.wait_for_timeout(300)
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
        " === 'idle'",
        timeout=timeout,
    )


def _conversation(page: Any, cell: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(cell).locator(".hitl-conversation").first


def test_an_agent_thinking_first_never_blocks_the_cells(page: Any) -> None:
    page.evaluate(RUN_CELL_JS, 1)
    chat = _conversation(page, 1)
    chat.locator(".hitl-conversation-state").filter(has_text="Working").wait_for(timeout=30_000)
    page.evaluate(RUN_CELL_JS, 2)  # while the agent thinks
    _wait_idle(page)
    texts = [o.get("text", "") for o in page.evaluate(CELL_OUTPUT_JS, 2)]
    assert "another cell ran\n" in texts
    assert chat.locator(".hitl-card").count() == 0  # still thinking
    assert "Preparing the first question." in chat.inner_text()
    chat.locator(".hitl-card").wait_for(timeout=60_000)  # the prompt arrives by itself
    assert "Approve the deployment" in chat.locator(".hitl-card-prompt").inner_text()


def test_a_countdown_ticks_in_the_browser_and_costs_the_kernel_nothing(page: Any) -> None:
    page.evaluate(RUN_CELL_JS, 3)
    _wait_idle(page)
    chat = _conversation(page, 3)
    clock = chat.locator(".hitl-deadline .hitl-clock").first
    clock.wait_for(timeout=30_000)
    first = int(page.evaluate(CLOCK_JS, clock.element_handle()))
    page.wait_for_timeout(500)
    start = time.monotonic()
    page.wait_for_timeout(4000)
    end = time.monotonic()
    later = int(page.evaluate(CLOCK_JS, clock.element_handle()))
    assert 0 < later < first <= 14, (first, later)
    traffic = [f for f in page.frames_log if start <= f[0] <= end and "comm_msg" in f[2]]
    assert traffic == [], traffic[:3]  # not one widget message while the clock ticked
    # The deadline passes: the agent fails the task; the card closes without a click.
    status = chat.locator(".hitl-card-status").filter(has_text="expired")
    status.wait_for(timeout=60_000)
    assert "deadline passed" in status.inner_text() and "409" not in status.inner_text()
    # Nobody filled the form in: it leaves the card, Submit with it (the outcome says why).
    card = chat.locator(".hitl-card").filter(has=status)
    card.locator(".hitl-form").wait_for(state="detached", timeout=30_000)
    assert card.locator(".hitl-submit button, button.hitl-submit").count() == 0
    assert "Failed" in chat.locator(".hitl-conversation-state").inner_text()


def test_a_named_responder_answers_by_click(page: Any) -> None:
    page.evaluate(RUN_CELL_JS, 4)
    _wait_idle(page)
    chat = _conversation(page, 4)
    card = chat.locator(".hitl-card").first
    card.wait_for(timeout=30_000)
    field = card.locator(".hitl-responder input").first
    assert field.input_value() == "intern@example.org"
    assert "deadline in" in card.locator(".hitl-card-prompt").inner_text()
    card.locator(".hitl-field-ship input[type=radio]").first.check()
    submit = card.locator(".hitl-submit button, button.hitl-submit").first
    page.wait_for_function("(b) => !b.disabled", arg=submit.element_handle(), timeout=10_000)
    submit.click()
    status = card.locator(".hitl-card-status")
    status.filter(has_text="refused").wait_for(timeout=20_000)
    assert "reviewer@example.org" in status.inner_text()
    assert card.locator(".hitl-responder-override").first.is_visible()  # offered, not taken
    field.fill("reviewer@example.org")
    field.press("Tab")
    page.wait_for_function("(b) => !b.disabled", arg=submit.element_handle(), timeout=10_000)
    submit.click()
    status.filter(has_text="COMPLETED").wait_for(timeout=30_000)
    assert "accepted" in status.inner_text()
    assert "Completed" in chat.locator(".hitl-conversation-state").inner_text()


def test_a_slow_agents_answer_is_accepted(page: Any) -> None:
    page.evaluate(RUN_CELL_JS, 5)
    _wait_idle(page)
    chat = _conversation(page, 5)
    card = chat.locator(".hitl-card").first
    card.wait_for(timeout=30_000)
    card.locator(".hitl-field-approve input[type=radio]").first.check()
    submit = card.locator(".hitl-submit button, button.hitl-submit").first
    page.wait_for_function("(b) => !b.disabled", arg=submit.element_handle(), timeout=10_000)
    submit.click()
    status = card.locator(".hitl-card-status")
    status.filter(has_text="accepted").wait_for(timeout=20_000)
    assert "submitted" not in card.inner_text()
    status.filter(has_text="COMPLETED").wait_for(timeout=30_000)
    assert "failed" not in status.inner_text()
