"""Cards answering through the server's responder gateway, clicked in JupyterLab (S-3).

JupyterLab runs as under JupyterHub: an IdentityProvider that names people (alice, bob,
carol of :mod:`tests.helpers.jupyter_users`), the server owned by alice (her API token
in the server's, so the kernel's, environment) and Chromium logged in as alice. The
kernel finds the gateway by itself; the cards say "Answering as alice" and the server
decides: a ``specific:alice`` prompt is answered by her click, a ``specific:bob`` one is
refused on the card with nothing sent, and a ``consensus:2`` card shows the gateway's
count and, once carol answers differently, the disagreement; then bob answers the same
consensus from his own kernel of the same server (his own token), the gateway forwards
one answer, and alice's card says the agreed answer was hers. The refused and the
consensus card are measured light and dark (the server's "Answering as" and its note on
the form's input column, nothing outside the frame); their screenshots go to
``HITL_NB_SCREENSHOTS`` when set (kept in ``docs/img``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.client import GatewayClient, GatewayInfo, SyncHitlClient
from tests.helpers import lab
from tests.helpers.server_kernel import result_of, server_kernel

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.kernel]

pytest.importorskip("jupyterlab")

CELLS = [
    """
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook import Conversation
agent = MockAgent().start()
""",
    'mine = Conversation.start(agent.url, {"scenario": "specific", "responder": "alice"})\nmine',
    'theirs = Conversation.start(agent.url, {"scenario": "specific", "responder": "bob"})\ntheirs',
    'vote = Conversation.start(agent.url, {"scenario": "consensus", "n": 2}, poll_interval=1)'
    "\nvote",
]
RUN_CELL_JS = """(i) => {
  const panel = window.jupyterapp.shell.currentWidget;
  panel.content.activeCellIndex = i;
  return window.jupyterapp.commands.execute('notebook:run-cell');
}"""


@pytest.fixture(scope="module")
def page(chromium: lab.Chromium, named_lab: tuple[str, Path]) -> Iterator[Any]:
    base, root = named_lab
    lab.write_notebook(root / "gateway.ipynb", CELLS)
    with chromium(1100, 1200) as context:
        context.add_cookies([{"name": "test-login", "value": "alice-token", "url": base}])
        page = lab.open_notebook(context, base.rstrip("/"), "gateway.ipynb")
        page.base, page.root = base, root
        _run_cell(page, 0, card=False)
        yield page


def _run_cell(page: Any, index: int, card: bool = True) -> Any:
    page.evaluate(RUN_CELL_JS, index)
    page.wait_for_timeout(300)
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
        " === 'idle'",
        timeout=60_000,
    )
    if not card:
        return None
    found = page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".hitl-card").first
    found.wait_for(timeout=30_000)
    return found


def _click_yes_and_submit(page: Any, card: Any) -> None:
    card.locator(".hitl-field-approve input[type=radio]").first.check()
    submit = card.locator(".hitl-submit button, button.hitl-submit").first
    page.wait_for_function("(b) => !b.disabled", arg=submit.element_handle(), timeout=10_000)
    submit.click()


def _answers_at_agent(page: Any, chat: str) -> int:
    url, task_id = _agent_url(page), _task_id(page, chat)
    with SyncHitlClient(url) as client:  # its own loop (Playwright's runs on this thread)
        task = client.get_task(task_id)
    return sum(1 for m in task.history if m.metadata and "hitl_response_for" in m.metadata)


def _shot(card: Any, name: str) -> None:
    folder = os.environ.get("HITL_NB_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        frame = card.locator("xpath=..")  # the conversation's frame around the card
        frame.screenshot(path=str(Path(folder) / f"{name}.png"))


def test_the_named_person_answers_by_click_as_the_server_says(page: Any) -> None:
    card = _run_cell(page, 1)
    field = card.locator(".hitl-responder input").first
    assert field.input_value() == "alice" and field.is_disabled()  # the server decides
    assert card.locator(".hitl-responder-override").count() == 0
    _click_yes_and_submit(page, card)
    status = card.locator(".hitl-card-status")
    status.filter(has_text="COMPLETED").wait_for(timeout=30_000)
    assert "accepted" in status.inner_text()
    assert lab.kernel(page, "print(mine.registration is not None)").strip() == "True"
    assert _answers_at_agent(page, "mine") == 1


def test_someone_elses_prompt_is_refused_on_the_card_and_nothing_is_sent(page: Any) -> None:
    card = _run_cell(page, 2)
    _click_yes_and_submit(page, card)
    status = card.locator(".hitl-card-status")
    status.filter(has_text="refused").wait_for(timeout=30_000)
    words = status.inner_text()
    assert "bob" in words and "nothing was sent to the agent" in words
    assert _answers_at_agent(page, "theirs") == 0
    for dark in (False, True):
        lab.set_theme(page, dark)
        _shot(card, f"card-gateway-refused-{'dark' if dark else 'light'}")
        _one_column_one_frame(page, card)
    lab.set_theme(page, False)


def _one_column_one_frame(page: Any, card: Any) -> None:
    """The server's "Answering as" on the form's input column, everything in the frame."""
    measured = lab.measure_card(page, card.locator("xpath=.."))
    lefts = [i["left"] for i in measured["inputs"]] + [n["left"] for n in measured["notes"]]
    assert "answering as" in {i["what"] for i in measured["inputs"]}, measured
    assert max(lefts) - min(lefts) <= 2 and measured["outside"] == [], measured


def test_a_consensus_card_shows_the_gateways_count_and_a_disagreement(page: Any) -> None:
    card = _run_cell(page, 3)
    _click_yes_and_submit(page, card)
    note = card.locator(".hitl-responder-note")
    note.filter(has_text="1 of 2 agreeing; 1 more needed").wait_for(timeout=30_000)
    # The count and the status line are two widgets, updated one after the other: wait
    # for the status line itself (under load it still said "sending" a moment longer).
    card.locator(".hitl-card-status").filter(has_text="held").wait_for(timeout=30_000)
    # Carol answers differently from her own login; alice's card learns it from the gateway.
    registration = lab.kernel(page, "print(vote.registration)").strip()
    prompt_id = lab.kernel(page, "print(vote.current.prompt_id)").strip()
    with GatewayClient(GatewayInfo(page.base, "carol-token", "carol")) as carol:
        assert carol.answer(registration, prompt_id, {"approve": False}).disagreement
    note.filter(has_text="differ").wait_for(timeout=30_000)
    assert "2 answers collected" in note.inner_text()
    assert _answers_at_agent(page, "vote") == 0
    for dark in (False, True):
        lab.set_theme(page, dark)
        _shot(card, f"card-gateway-{'dark' if dark else 'light'}")
        _one_column_one_frame(page, card)
    lab.set_theme(page, False)

    # Bob, on the same server, answers from his own kernel with his own token: the
    # second agreeing answer. The gateway forwards once; alice's card learns it was hers.
    code = BOB.format(agent=_agent_url(page), task=_task_id(page, "vote"))
    with server_kernel(page.base, "bob-token", page.root / ".runtime") as run:
        said = result_of(run(code))
    assert said == {"user": "bob", "field": "bob", "disabled": True, "status": "accepted"}
    status = card.locator(".hitl-card-status")
    status.filter(has_text="2 people agreed: alice, bob").wait_for(timeout=30_000)
    assert "accepted" in status.inner_text()
    assert "2 of 2 agreeing: enough" in note.inner_text()  # the count is not left stale
    assert _answers_at_agent(page, "vote") == 1


BOB = """
import json, os
os.environ["HITL_NB_GATEWAY_TOKEN"] = "bob-token"   # his own API token
from hitl_nb.notebook import Conversation
chat = Conversation.attach({agent!r}, {task!r})
card = chat.next_prompt(timeout=30)
outcome = chat.answer({{"approve": True}}, timeout=60)
print("RESULT" + json.dumps({{"user": chat.gateway and chat.gateway.name,
      "field": card.who.input.value, "disabled": card.who.input.disabled,
      "status": outcome.status}}))
"""


def _agent_url(page: Any) -> str:
    return lab.kernel(page, "print(agent.url)").strip()


def _task_id(page: Any, chat: str) -> str:
    return lab.kernel(page, f"print({chat}.task.id)").strip()
