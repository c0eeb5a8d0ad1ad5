"""Take the screenshots in docs/forms.md: JupyterLab in Chromium, light and dark.

    python docs/img/take_screenshots.py [--out docs/img] [--measure]

The approval card and the form tour (pristine, after a Submit with errors, with the
mock agent's 422 on fields, answered), each in the light and the dark theme.
``--measure`` also prints what the browser tests check (left edges, overflow, clipping,
error contrast, the contrast of values and placeholders).
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--measure", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
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
                shoot(page, ".hitl-card", 0, args.out / f"approval-{theme}.png")
                shoot(page, ".hitl-card", tour_nth, args.out / f"tour-pristine-{theme}.png")
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
                shoot(page, ".hitl-card", tour_nth, args.out / f"tour-submit-errors-{theme}.png")
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
                shoot(page, ".hitl-card", tour_nth, args.out / f"tour-agent-422-{theme}.png")
                if args.measure:
                    print(theme, "422", json.dumps(lab.measure_form(page, ".hitl-form", tour_nth)))
                # the answer put right and accepted: the form keeps it, read-only
                print(lab.kernel(page, f"print(tour.current.answer({GOOD!r}))").strip())
                page.wait_for_timeout(800)
                shoot(page, ".hitl-card", tour_nth, args.out / f"tour-answered-{theme}.png")
                if args.measure:
                    answered = lab.measure_form(page, ".hitl-form", tour_nth)
                    print(theme, "answered", json.dumps(answered))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
