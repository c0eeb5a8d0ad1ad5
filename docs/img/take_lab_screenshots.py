"""Take the screenshots of docs/lab.md and the README: JupyterLab's prompts panel and
Notebook 7's, in Chromium, light and dark.

    python docs/img/take_lab_screenshots.py [--out docs/img]

On a plain ``jupyter lab`` with a token: a notebook whose conversation asks with a
15-minute deadline, and prompts of other tasks (a consensus, one for a named person, a
long question) registered with the server's gateway. Shots: the panel with its rows and
a notification (``lab-panel-<theme>.png``), the card drawn in the panel
(``lab-card-<theme>.png``), and Notebook 7's side panel (``notebook7-panel-<theme>.png``).
Needs the system Chromium and JupyterLab (the test extra).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from hitl_nb.mock_agent import MockAgent, Scenario, Step  # noqa: E402
from tests.helpers import lab  # noqa: E402
from tests.helpers.panel import command, open_panel, register, run, wait_ready  # noqa: E402
from tests.helpers.tasks import start_task  # noqa: E402

ASKING = [
    "from hitl_nb.mock_agent import MockAgent\n"
    "from hitl_nb.notebook import Conversation\n"
    "agent = MockAgent().start()",
    "review = Conversation.start(agent.url, {'scenario': 'deadline', 'deadline_seconds': 900,"
    " 'start_delay_seconds': 6}, poll_interval=1)\nreview",
]
LONG = Step(
    "The nightly import found 1,204 rows whose customer id matches no customer. Keep them "
    "for a person to look at, drop them, or stop the import until someone has looked at "
    "the source? Dropping them loses the orders they carry.",
    {
        "type": "object",
        "required": ["action"],
        "properties": {"action": {"enum": ["keep", "drop", "stop"], "title": "What to do"}},
    },
    None,
    3600,
)


def _shots(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        lab.write_notebook(root / "review.ipynb", ASKING)
        lab.write_notebook(root / "analysis.ipynb", ["import math\nmath.tau"])
        imports = Scenario("imports", "a long question", steps=[LONG])
        with (
            MockAgent(scenarios=[imports]) as agent,
            lab.jupyter_server(root, "jupyterlab", unset=("JUPYTERHUB_USER",)) as base,
            lab.playwright() as pw,
            lab.browser(pw, root / "profile", 1300, 760) as context,
        ):
            page = lab.open_notebook(context, base, "review.ipynb")
            wait_ready(page)
            lab.run_all(page)
            for scenario, options in [
                ("consensus", {"n": 2}),
                ("specific", {"responder": "bob"}),
                ("imports", {}),
            ]:
                task = run(start_task(agent.url, scenario, **options))
                register(base, lab.TOKEN, agent.url, task.id)
            burst = page.locator(".Toastify__toast", has_text="3 prompts for you came in")
            burst.wait_for(timeout=60_000)
            burst.locator("button", has_text="Open the prompts panel").click()
            burst.wait_for(state="detached", timeout=30_000)
            command(page, "docmanager:open", {"path": "analysis.ipynb"})
            toast = page.locator(".Toastify__toast", has_text="min left")
            toast.wait_for(timeout=60_000)
            open_panel(page)
            page.locator(".hitl-lab-where").first.wait_for(timeout=60_000)
            page.wait_for_timeout(1200)
            _both_themes(page, out, "lab-panel")
            lab.set_theme(page, False)
            row = page.locator(".hitl-lab-row", has_text="nightly import")
            row.locator("button", has_text="Answer").click()
            page.locator(".hitl-lab-card .hitl-form").wait_for(timeout=90_000)
            page.wait_for_timeout(800)
            _both_themes(page, out, "lab-card")
            page.close()
        with (
            MockAgent() as agent,
            lab.jupyter_server(root, "notebook", unset=("JUPYTERHUB_USER",)) as base,
            lab.playwright() as pw,
            lab.browser(pw, root / "profile7", 1100, 700) as context,
        ):
            page = lab.open_notebook(context, base, "analysis.ipynb", app="notebook")
            wait_ready(page)
            task = run(start_task(agent.url, "approval"))
            register(base, lab.TOKEN, agent.url, task.id)
            page.locator(".Toastify__toast", has_text="A prompt for you").wait_for(timeout=60_000)
            page.locator(".Toastify__toast button", has_text="Answer").click()
            page.locator(".hitl-lab-card .hitl-form").wait_for(timeout=90_000)
            page.wait_for_timeout(800)
            _both_themes(page, out, "notebook7-panel")


def _both_themes(page: Any, out: Path, name: str) -> None:
    """``<name>-light.png`` and ``<name>-dark.png`` of the page as it is now."""
    for dark in (False, True):
        path = out / f"{name}-{'dark' if dark else 'light'}.png"
        lab.set_theme(page, dark)
        page.screenshot(path=str(path))
        print("wrote", path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    _shots(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
