"""Take the Inbox screenshots: JupyterLab in Chromium, light and dark.

    python docs/img/take_inbox_screenshots.py [--out docs/img]

A JupyterLab server with hitl-nb's extension; a notebook registers three tasks of the
mock agent with the server's gateway (one anyone may answer, one with a deadline, one
for a named person), then shows ``Inbox()`` and opens the prompt with the deadline.
Needs the system Chromium and JupyterLab (the test extra).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from tests.helpers import lab  # noqa: E402

CELLS = [
    """
import time

from hitl_nb.client import GatewayClient, SyncHitlClient, find_gateway
from hitl_nb.mock_agent import MockAgent

for _ in range(10):  # a loaded machine: the server may be busy serving JupyterLab
    info = find_gateway()
    if info is not None:
        break
    time.sleep(3)

agent = MockAgent().start()
asks = [{"scenario": "approval"}, {"scenario": "deadline", "deadline_seconds": 900},
        {"scenario": "specific", "responder": "release-manager"}]
with SyncHitlClient(agent.url) as client, GatewayClient(info) as gateway:
    for ask in asks:
        gateway.register(agent.url, client.send(ask).id)
""",
    """
from hitl_nb import Inbox

inbox = Inbox()
inbox
""",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        lab.write_notebook(root / "inbox.ipynb", CELLS)
        state = f"--HitlServer.state_dir={root / '.hitl'}"  # this run's prompts only
        with lab.jupyter_server(root, "jupyterlab", state) as base, lab.playwright() as pw:
            with lab.browser(pw, root / "profile", 1200, 900) as context:
                page = lab.open_notebook(context, base, "inbox.ipynb")
                lab.run_all(page)
                row = page.locator(".hitl-inbox-row", has_text="deadline").first
                try:
                    row.locator("button", has_text="Open").click(timeout=60_000)
                except Exception:
                    page.screenshot(path=str(args.out / "inbox-failed.png"))
                    raise
                inbox = page.locator(".hitl-inbox")
                inbox.locator(".hitl-inbox-detail .hitl-form").wait_for(timeout=60_000)
                for dark in (False, True):
                    lab.set_theme(page, dark)
                    name = f"inbox-{'dark' if dark else 'light'}.png"
                    inbox.screenshot(path=str(args.out / name))
                    print("wrote", args.out / name)


if __name__ == "__main__":
    main()
