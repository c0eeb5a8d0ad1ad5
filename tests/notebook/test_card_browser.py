"""A person in a real browser: JupyterLab, a real kernel, the mock agent, Chromium.

The notebook below shows a prompt card; the test clicks an answer and Submit as a person
would, and reads what the card says the agent did. This is the only test that proves the
widgets render and round-trip through a real front end with core ipywidgets alone. Then
it measures, light and dark, that a card asks everything on one column (the form's
inputs, "Answering as" and the override box start within 2 px of each other) and that
nothing a conversation shows (its state, the agent's words) is drawn outside its frame.

Chromium comes from the system (Debian's ``chromium``; CI installs it). Without it these
tests are skipped, except under ``CI=true``, where a missing browser is a failure.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers.lab import TOKEN, jupyter_server, measure_card, set_theme, write_notebook

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.kernel]

pytest.importorskip("jupyterlab")

CELLS = [
    """
from hitl_nb.mock_agent import MockAgent, Scenario, Step
from hitl_nb.notebook import Conversation

sneaky = Scenario("sneaky", "markup in the prompt", steps=[Step(
    "<img src=x onerror=alert(1)><script>alert(2)</script> Ship it?",
    {"type": "object", "required": ["ship"], "additionalProperties": False,
     "properties": {"ship": {"type": "boolean", "title": "Ship"}}})])
agent = MockAgent(scenarios=[sneaky]).start()
""",
    'chat = Conversation.start(agent.url, {"scenario": "approval"})\nchat',
    'other = Conversation.start(agent.url, {"scenario": "sneaky"})\nother',
    # refused: the "Answering as" field, its note and the override box on the form's columns
    'who = Conversation.start(agent.url, {"scenario": "specific", "responder": "rm@example.com"},'
    ' responder="intern@example.com")\nwho.answer({"approve": True})\nwho',
    # completed: the conversation's state and the agent's words in the frame
    'done = Conversation.start(agent.url, {"scenario": "approval"})\n'
    'done.answer({"approve": True, "comment": "fine"})\ndone',
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("lab")
    write_notebook(root / "cards.ipynb", CELLS)
    with jupyter_server(root) as base:
        yield base


@pytest.fixture(scope="module")
def page(chromium: Any, lab: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    shot = tmp_path_factory.mktemp("cards") / "cards.png"
    with chromium(1280, 720) as context:
        page = context.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{lab}/lab/tree/cards.ipynb?token={TOKEN}")
        page.wait_for_function(
            "() => { const w = window.jupyterapp?.shell?.currentWidget;"
            " return w?.sessionContext?.session?.kernel?.status === 'idle'; }",
            timeout=90_000,
        )
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_selector(".hitl-card", timeout=60_000)
        page.dialogs = dialogs  # type: ignore[attr-defined]
        try:
            yield page
        finally:
            page.screenshot(path=str(shot), full_page=True)


def test_a_person_answers_in_the_browser(page) -> None:  # type: ignore[no-untyped-def]
    card = page.locator(".hitl-card").first
    assert "Approve the deployment of build 41 to staging?" in card.inner_text()
    submit = card.locator(".hitl-submit button, button.hitl-submit").first
    assert card.locator(".hitl-error").count() == 0  # a pristine form shows no error
    submit.click()  # a required yes/no is unset: Submit says what is missing
    summary = card.locator(".hitl-summary")
    summary.filter(has_text="Choose Yes or No").wait_for(timeout=10_000)
    card.locator(".hitl-field-approve input[type=radio]").first.check()
    card.locator(".hitl-field-comment input, .hitl-field-comment textarea").first.fill("looks good")
    page.wait_for_function("(b) => !b.disabled", arg=submit.element_handle(), timeout=10_000)
    submit.click()
    status = card.locator(".hitl-card-status")
    status.filter(has_text="accepted").wait_for(timeout=20_000)
    # The card follows the task: "accepted" comes first, the agent's COMPLETED after it.
    status.filter(has_text="COMPLETED").wait_for(timeout=20_000)


def test_the_prompt_is_text_not_markup(page) -> None:  # type: ignore[no-untyped-def]
    card = page.locator(".hitl-card").nth(1)
    card.wait_for(timeout=20_000)
    text = card.locator(".hitl-card-prompt").inner_text()
    assert "<script>alert(2)</script>" in text and "<img src=x" in text
    assert card.locator(".hitl-card-prompt img, .hitl-card-prompt script").count() == 0
    page.wait_for_timeout(500)
    assert page.dialogs == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_one_column_and_one_frame(page, dark: bool) -> None:  # type: ignore[no-untyped-def]
    conversations = page.locator(".hitl-conversation")
    refused, done = conversations.nth(2), conversations.nth(3)
    refused.locator(".hitl-responder-override").wait_for(timeout=30_000)
    done.locator(".hitl-agent-message").wait_for(timeout=30_000)
    set_theme(page, dark)
    try:
        measured = [measure_card(page, c) for c in (refused, done)]
    finally:
        set_theme(page, False)
    asks = measured[0]
    assert {"answering as", "send anyway"} <= {i["what"] for i in asks["inputs"]}, asks
    lefts = [i["left"] for m in measured for i in m["inputs"]] + [
        n["left"] for n in asks["notes"]
    ]  # the refusal's note starts at the inputs' edge too
    assert asks["notes"] and max(lefts) - min(lefts) <= 2, measured
    for m in measured:
        assert m["frames"] == 1 and m["outside"] == [], m  # one frame, everything in it
    assert "Completed" in done.locator(".hitl-conversation-state").inner_text()
