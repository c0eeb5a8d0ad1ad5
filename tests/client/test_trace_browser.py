"""The wire trace widget in a real JupyterLab with Chromium: rows open, errors stand out.

A notebook runs one round trip against the mock agent with ``trace=True`` (a stream, an
answer the agent refuses with 422, an accepted one) and shows ``client.trace``. The test
opens two rows as a person would and checks what they show, in the light and the dark
theme; screenshots go to ``HITL_NB_SCREENSHOTS`` when set (kept in ``docs/img``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.lab import TOKEN, jupyter_server, set_theme, write_notebook

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.kernel]

pytest.importorskip("jupyterlab")

CELLS = [
    """
from hitl_nb.client import PromptEvent, SyncHitlClient
from hitl_nb.mock_agent import MockAgent

agent = MockAgent().start()
client = SyncHitlClient(agent.url, binding="HTTP+JSON", trace=True)
events = list(client.stream({"scenario": "approval"}))
prompt = next(e for e in events if isinstance(e, PromptEvent))
try:
    client.respond(prompt.task_id, prompt.prompt_id, {"approve": "yes"}, validate=False)
except Exception as exc:
    print(type(exc).__name__)
client.respond(prompt.task_id, prompt.prompt_id, {"approve": True, "comment": "ship it"})
""",
    "client.trace",
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("lab")
    write_notebook(root / "trace.ipynb", CELLS)
    with jupyter_server(root) as base:
        yield base


@pytest.fixture(scope="module")
def page(chromium: Any, lab: str) -> Iterator[Any]:
    with chromium(1100, 900) as context:
        page = context.new_page()
        page.goto(f"{lab}/lab/tree/trace.ipynb?token={TOKEN}")
        page.wait_for_function(
            "() => { const w = window.jupyterapp?.shell?.currentWidget;"
            " return w?.sessionContext?.session?.kernel?.status === 'idle'; }",
            timeout=90_000,
        )
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_selector(".hitl-trace details", timeout=90_000)
        yield page


def _shot(locator: Any, name: str) -> None:
    folder = os.environ.get("HITL_NB_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        locator.screenshot(path=str(Path(folder) / f"{name}.png"))


def test_the_timeline_opens_and_highlights_the_422(page: Any) -> None:
    view = page.locator(".hitl-trace").first
    rows = view.locator("details")
    assert rows.count() >= 4
    summaries = [rows.nth(i).locator("summary").inner_text() for i in range(rows.count())]
    assert summaries[0].startswith("#1 GET /.well-known/agent-card.json")
    stream = next(i for i, s in enumerate(summaries) if "message:stream" in s)
    refused = next(i for i, s in enumerate(summaries) if "422 hitl_response_invalid" in s)
    assert "3 event(s)" in summaries[stream]
    rows.nth(stream).locator("summary").click()
    assert "event 1" in rows.nth(stream).inner_text()
    rows.nth(stream).locator("summary").click()  # closed again
    rows.nth(refused).locator("summary").click()
    body = rows.nth(refused).inner_text()
    assert "A2A-Version: 1.0" in body and '"approve": "yes"' in body
    assert "validation_errors" in body or "HITL_RESPONSE_INVALID" in body
    view.evaluate("e => e.scrollIntoView()")
    colors = []
    for dark in (False, True):
        set_theme(page, dark)
        colors.append(
            rows.nth(refused)
            .locator("summary")
            .evaluate("e => getComputedStyle(e).borderLeftColor")
        )
        _shot(page, f"trace-{'dark' if dark else 'light'}")
    set_theme(page, False)
    assert colors[0] != colors[1]  # theme variables, not fixed colours
