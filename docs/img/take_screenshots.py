"""Take the screenshots in docs/forms.md and docs/notebook.md: JupyterLab in Chromium,
light and dark.

    python docs/img/take_screenshots.py [--out docs/img] [--measure] [--only forms|cards]

forms: the approval card and the form tour (pristine, after a Submit with errors, with
the mock agent's 422 on fields, answered). cards: a conversation in every state a card
can be in (``card-<state>-<theme>.png``, :data:`STATES`): working, the prompt (its
countdown, "Answering as"), held (a consensus), refused, invalid (the agent's 422 on
the fields), completed, expired, closed (the task canceled), conflict (answered
elsewhere). The gateway's cards are taken by tests/notebook/test_gateway_browser.py
(``HITL_NB_SCREENSHOTS=docs/img``), the inbox by take_inbox_screenshots.py.
``--measure`` also prints what the browser tests check (left edges, overflow, clipping,
error contrast, the contrast of values and placeholders; for the cards, the inputs'
left edges and anything outside the frame).
Needs the system Chromium and JupyterLab (the test extra).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from tests.helpers import lab  # noqa: E402

CELLS = [
    """
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook import Conversation

agent = MockAgent().start()
approval = Conversation.start(agent.url, {"scenario": "approval"})
approval
""",
    """
tour = Conversation.start(agent.url, {"scenario": "form-tour"})
tour
""",
]

#: Filled in from code before the 422: valid except what the agent is then sent.
GOOD = {
    "title": "Release v2.0.3",
    "channel": "release",
    "replicas": 2,
    "priority": "high",
    "approve": True,
    "ticket": "OPS-42",
    "when": "2026-12-01T09:30:00+01:00",
    "tags": ["db", "web"],
    "target": {"kind": "host", "host": "web-1"},
}
#: What is sent past the form's own check: the agent answers 422 on these fields.
SENT = {**GOOD, "ticket": "ops 42", "replicas": 0, "link": "not a link"}


#: What a shot takes: a conversation's frame (its cards, its state, the agent's words).
FRAME = ".hitl-conversation"

#: JavaScript: add a cell at the end with ``code`` and run it.
NEW_CELL = """
async (code) => {
  const app = window.jupyterapp;
  await app.commands.execute('notebook:move-cursor-down');
  await app.commands.execute('notebook:insert-cell-below');
  app.shell.currentWidget.content.activeCell.model.sharedModel.setSource(code);
  await app.commands.execute('notebook:run-cell');
}
"""


def shoot(page: object, selector: str, nth: int, path: Path) -> None:
    card = page.locator(selector).nth(nth)  # type: ignore[attr-defined]
    card.scroll_into_view_if_needed()
    page.wait_for_timeout(300)  # type: ignore[attr-defined]
    card.screenshot(path=str(path))
    print("wrote", path)


#: Each state a card can be in: (name, the cell that brings a conversation there, the
#: text its frame shows once it is there).
STATES = [
    (
        "working",
        'Conversation.start(agent.url, {"scenario": "approval", "start_delay_seconds": 3600},'
        " settle=0)",
        "Working",
    ),
    (
        "prompt",
        'Conversation.start(agent.url, {"scenario": "review"}, responder="reviewer@example.org")',
        "deadline in",
    ),
    (
        "held",
        'held = Conversation.start(agent.url, {"scenario": "consensus", "n": 2},'
        ' responder="alice")\nheld.answer({"approve": True})\nheld',
        "held",
    ),
    (
        "refused",
        'refused = Conversation.start(agent.url, {"scenario": "review"},'
        ' responder="intern@example.org")\nrefused.answer({"ship": True})\nrefused',
        "refused",
    ),
    (
        "invalid",
        'invalid = Conversation.start(agent.url, {"scenario": "approval"})\n'
        'invalid.current.form.value = {"approve": True, "comment": "Ship it."}\n'
        'invalid.answer({"approve": "yes please", "extra_unknown_field": 42}, validate=False)\n'
        "invalid",
        "invalid",
    ),
    (
        "completed",
        'done = Conversation.start(agent.url, {"scenario": "approval"})\n'
        'done.answer({"approve": True, "comment": "Smoke tests passed."})\ndone',
        "Completed",
    ),
    (
        "expired",
        'late = Conversation.start(agent.url, {"scenario": "deadline",'
        ' "deadline_seconds": 2, "on_deadline": "fail"}, poll_interval=1)\nlate',
        "expired",
    ),
    (
        "closed",
        'gone = Conversation.start(agent.url, {"scenario": "approval"}, poll_interval=1)\n'
        "client.cancel(gone.task.id)\ngone",
        "closed",
    ),
    (
        "conflict",
        'other = Conversation.start(agent.url, {"scenario": "approval"},'
        " poll_interval=1)\n"
        'client.respond(other.task.id, other.current.prompt_id, {"approve": False})\nother',
        "conflict",
    ),
]

STATES_SETUP = """
from hitl_nb.client import SyncHitlClient
from hitl_nb.mock_agent import MockAgent, Scenario, Step
from hitl_nb.notebook import Conversation

review = Scenario("review", "a named reviewer and a deadline", steps=[Step(
    "Ship release 4.2 to production?",
    {"type": "object", "required": ["ship"], "additionalProperties": False,
     "properties": {"ship": {"type": "boolean", "title": "Ship"},
                    "note": {"type": "string", "title": "Note"}}},
    allowed_responders=["specific:reviewer@example.org"], deadline_seconds=3600)])
agent = MockAgent(scenarios=[review]).start()
client = SyncHitlClient(agent.url)  # someone else, elsewhere
"""


def cards(ctx: object, base: str, root: Path, out: Path, measure: bool) -> None:
    """A conversation in each of :data:`STATES`, shot light and dark."""
    lab.write_notebook(root / "states.ipynb", [STATES_SETUP, *(code for _, code, _ in STATES)])
    page = lab.open_notebook(ctx, base, "states.ipynb")
    page.evaluate("window.jupyterapp.commands.execute('application:toggle-left-area')")
    lab.run_all(page)
    frames = page.locator(".hitl-conversation")
    for n, (_name, _code, shows) in enumerate(STATES):
        frames.nth(n).filter(has_text=shows).wait_for(timeout=120_000)
    page.wait_for_timeout(1500)
    for dark in (False, True):
        theme = "dark" if dark else "light"
        lab.set_theme(page, dark)
        for n, (name, _code, _shows) in enumerate(STATES):
            shoot(page, FRAME, n, out / f"card-{name}-{theme}.png")
            if measure:
                print(theme, name, json.dumps(lab.measure_card(page, frames.nth(n))))
    page.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--measure", action="store_true")
    parser.add_argument("--only", choices=("forms", "cards"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.only != "forms":
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            with (
                lab.jupyter_server(root, unset=("JUPYTERHUB_USER",)) as base,
                lab.playwright() as pw,
                lab.browser(pw, root / "profile", 900, 6000) as ctx,
            ):
                cards(ctx, base, root, args.out, args.measure)
    if args.only == "cards":
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        lab.write_notebook(root / "shots.ipynb", CELLS)
        with (
            lab.jupyter_server(root) as base,
            lab.playwright() as pw,
            lab.browser(pw, root / "profile", 1000, 3000) as ctx,
        ):
            page = lab.open_notebook(ctx, base, "shots.ipynb")
            page.evaluate("window.jupyterapp.commands.execute('application:toggle-left-area')")
            lab.run_all(page)
            page.wait_for_selector(".hitl-card >> nth=1", timeout=90_000)
            page.wait_for_timeout(1500)
            for dark in (False, True):
                theme = "dark" if dark else "light"
                lab.set_theme(page, dark)
                if dark:  # a fresh tour card, pristine again, as the last cell
                    code = "tour = Conversation.start(agent.url, {'scenario': 'form-tour'})\ntour"
                    page.evaluate(NEW_CELL, code)
                    page.locator(".hitl-card").nth(2).wait_for(timeout=60_000)
                    page.wait_for_timeout(1500)
                tour_nth = 2 if dark else 1
                shoot(page, FRAME, 0, args.out / f"approval-{theme}.png")
                shoot(page, FRAME, tour_nth, args.out / f"tour-pristine-{theme}.png")
                if args.measure:
                    print(
                        theme,
                        "pristine",
                        json.dumps(lab.measure_form(page, ".hitl-form", tour_nth)),
                    )
                submit = page.locator(".hitl-card").nth(tour_nth).locator(".hitl-submit").first
                submit.click()
                card = page.locator(".hitl-card").nth(tour_nth)
                card.locator(".hitl-summary").wait_for(timeout=20_000)
                shoot(page, FRAME, tour_nth, args.out / f"tour-submit-errors-{theme}.png")
                if args.measure:
                    print(
                        theme,
                        "submitted",
                        json.dumps(lab.measure_form(page, ".hitl-form", tour_nth)),
                    )
                code = (
                    f"tour.current.form.value = {GOOD!r}\n"
                    f"print(tour.current.answer({SENT!r}, validate=False))"
                )
                print(lab.kernel(page, code).strip())
                page.wait_for_timeout(800)
                shoot(page, FRAME, tour_nth, args.out / f"tour-agent-422-{theme}.png")
                if args.measure:
                    print(theme, "422", json.dumps(lab.measure_form(page, ".hitl-form", tour_nth)))
                # the answer put right and accepted: the form keeps it, read-only
                print(lab.kernel(page, f"print(tour.current.answer({GOOD!r}))").strip())
                page.wait_for_timeout(800)
                shoot(page, FRAME, tour_nth, args.out / f"tour-answered-{theme}.png")
                if args.measure:
                    answered = lab.measure_form(page, ".hitl-form", tour_nth)
                    print(theme, "answered", json.dumps(answered))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
