"""Every tutorial, as a student runs it: JupyterLab in Chromium, *Run All*, no error.

One JupyterLab serves a copy of ``notebooks/`` (so autosave never touches the checkout);
each tutorial is opened in it, its kernel runs every cell through the front end (the
widget manager, comms and all), and the test reads the notebook model: every code cell
ran, no cell has an error output, and no widget failed to display. A screenshot of each
tutorial lands next to the copy, for a person to look at.

Chromium comes from the system (Debian's ``chromium``). Without it these tests are
skipped, except under ``CI=true``, where a missing browser is a failure.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers.lab import TOKEN, jupyter_server
from tests.helpers.tutorials import skip_reason
from tests.helpers.until import until

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.kernel]

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
pytest.importorskip("jupyterlab")


# Read the open notebook's state through the app JupyterLab exposes in the browser.
STATE_JS = """() => {
  const panel = window.jupyterapp?.shell?.currentWidget;
  const kernel = panel?.sessionContext?.session?.kernel;
  if (!panel || !panel.content || !kernel) return null;
  const cells = [];
  for (const cell of panel.content.widgets) {
    if (cell.model.type !== 'code') continue;
    const outputs = cell.model.outputs.toJSON();
    cells.push({
      count: cell.model.executionCount,
      errors: outputs.filter(o => o.output_type === 'error')
                     .map(o => o.ename + ': ' + o.evalue),
      widgetFailed: (cell.node.innerText || '').includes('Error displaying widget'),
    });
  }
  return {status: kernel.status, cells};
}"""


def _when_run(page: Any, looks: int) -> dict[str, Any]:
    """The open notebook's state (:data:`STATE_JS`) once its kernel is idle and every
    code cell ran, or a cell failed (Run All stops at an error), ``looks`` looks in a
    row, half a second apart."""
    in_a_row = [0]

    def look() -> dict[str, Any] | None:
        state = page.evaluate(STATE_JS) or {}
        cells = state.get("cells") or []
        ran = all(c["count"] is not None for c in cells)
        failed = any(c["errors"] for c in cells)
        done = state.get("status") == "idle" and (ran or failed)
        in_a_row[0] = in_a_row[0] + 1 if done else 0
        return state if in_a_row[0] >= looks else None

    return until(look, timeout=300, what="the notebook's cells to run", interval=0.5)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("tutorials-lab")
    folder = root / "notebooks"
    shutil.copytree(ROOT / "notebooks", folder)
    with jupyter_server(folder) as base:
        yield base, root


@pytest.fixture(scope="module")
def page(chromium: Any, lab: tuple[str, Path]) -> Iterator[object]:
    """One JupyterLab page for every tutorial: each is opened in it in turn."""
    base, root = lab
    with chromium(1280, 900) as context:
        page = context.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.dialogs = dialogs  # type: ignore[attr-defined]
        page.goto(f"{base}/lab?reset&token={TOKEN}")
        page.wait_for_function(
            "() => window.jupyterapp?.commands?.hasCommand('docmanager:open')",
            timeout=120_000,
        )
        page.evaluate("async () => { await window.jupyterapp.restored; }")
        yield page


def _tutorial(path: Path) -> Any:
    """``path``'s name as a parameter, skipped where this Python cannot run it."""
    reason = skip_reason(path.name)
    return pytest.param(path.name, marks=[pytest.mark.skip(reason=reason)] if reason else [])


@pytest.mark.parametrize("notebook", [_tutorial(p) for p in NOTEBOOKS])
def test_run_all_in_jupyterlab_has_no_error(lab, page, notebook: str) -> None:  # type: ignore[no-untyped-def]
    base, root = lab
    try:
        page.evaluate(
            # awaited, nothing returned: the opened panel does not serialize ("object
            # reference chain is too long", now and then)
            "async (path) => { await window.jupyterapp.commands.execute('docmanager:open',"
            " {path}); }",
            notebook,
        )
        page.wait_for_function(
            "(path) => { const w = window.jupyterapp.shell.currentWidget;"
            " return w?.context?.path === path"
            " && w.sessionContext?.session?.kernel?.status === 'idle'; }",
            arg=notebook,
            timeout=120_000,
        )
        page.evaluate("window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        # Idle must hold twice in a row: between two cells it blinks.
        state = _when_run(page, looks=2)
        cells = state.get("cells") or []
        errors = [e for c in cells for e in c["errors"]]  # type: ignore[index]
        assert errors == [], f"{notebook}: error output in JupyterLab: {errors}"
        not_run = [i for i, c in enumerate(cells) if c["count"] is None]  # type: ignore[index]
        assert not_run == [], f"{notebook}: code cells {not_run} never ran (status {state})"
        broken = [i for i, c in enumerate(cells) if c["widgetFailed"]]  # type: ignore[index]
        assert broken == [], f"{notebook}: cells {broken} show 'Error displaying widget'"
        assert page.dialogs == [], f"{notebook}: the page opened dialogs: {page.dialogs}"
        cards = page.locator(".jp-mod-current .hitl-card, .jp-NotebookPanel:visible .hitl-card")
        if cards.count():  # a card in view: what a student sees first
            cards.first.scroll_into_view_if_needed()
        page.screenshot(path=str(root / f"{Path(notebook).stem}.png"), full_page=False)
    finally:
        # Stop this tutorial's kernel (and the mock agents in it), then close its panel
        # without the unsaved-changes question (the folder is a throwaway copy).
        auth = {"Authorization": f"token {TOKEN}"}
        for session in httpx.get(f"{base}/api/sessions", headers=auth).json():
            httpx.delete(f"{base}/api/sessions/{session['id']}", headers=auth)
        page.evaluate(
            "() => { for (const w of Array.from(window.jupyterapp.shell.widgets('main')))"
            " w.dispose(); }"
        )


def test_a_student_who_clicks_submit_is_not_punished(lab, page) -> None:  # type: ignore[no-untyped-def]
    # 02 says "click Submit, or run the next cell". A student who clicks runs the cells
    # up to the card, answers in it, then runs the rest: no error, and the cells after
    # report the clicked answer (the comment typed in the browser is what was sent).
    base, root = lab
    notebook = "02-approval-round-trip.ipynb"
    try:
        page.evaluate(
            # awaited, nothing returned: the opened panel does not serialize ("object
            # reference chain is too long", now and then)
            "async (path) => { await window.jupyterapp.commands.execute('docmanager:open',"
            " {path}); }",
            notebook,
        )
        page.wait_for_function(
            "(path) => { const w = window.jupyterapp.shell.currentWidget;"
            " return w?.context?.path === path"
            " && w.sessionContext?.session?.kernel?.status === 'idle'; }",
            arg=notebook,
            timeout=120_000,
        )
        # The answer cell is the first code cell after the one that shows the card.
        answer_index = page.evaluate(
            "() => { const cells = window.jupyterapp.shell.currentWidget.content.widgets;"
            " const i = cells.findIndex(c => c.model.type === 'code'"
            "   && c.model.sharedModel.getSource().trim() === 'chat');"
            " return cells.findIndex((c, j) => j > i && c.model.type === 'code'); }"
        )
        assert answer_index > 0
        page.evaluate(
            "(i) => { const nb = window.jupyterapp.shell.currentWidget.content;"
            " nb.activeCellIndex = i;"
            " return window.jupyterapp.commands.execute('notebook:run-all-above'); }",
            answer_index,
        )
        card = page.locator(".jp-NotebookPanel:visible .hitl-card").first
        card.wait_for(timeout=120_000)
        card.locator(".hitl-field-approve input[type=radio]").first.check()
        comment = card.locator(".hitl-field-comment input, .hitl-field-comment textarea").first
        comment.fill("clicked in the browser")
        submit = card.locator(".hitl-submit button, button.hitl-submit").first
        page.wait_for_function("(b) => !b.disabled", arg=submit.element_handle(), timeout=10_000)
        submit.click()
        card.locator(".hitl-card-status").filter(has_text="accepted").wait_for(timeout=60_000)
        page.evaluate(
            "(i) => { const nb = window.jupyterapp.shell.currentWidget.content;"
            " nb.activeCellIndex = i;"
            " return window.jupyterapp.commands.execute('notebook:run-all-below'); }",
            answer_index,
        )
        state = _when_run(page, looks=1)
        cells = state.get("cells") or []
        assert [e for c in cells for e in c["errors"]] == []  # type: ignore[index]
        text = page.locator(".jp-NotebookPanel:visible .jp-OutputArea").all_inner_texts()
        joined = "\n".join(text)
        assert "accepted - the agent accepted the answer" in joined
        assert '"comment": "clicked in the browser"' in joined  # what was sent: the click's
        page.screenshot(path=str(root / "02-clicked.png"), full_page=False)
    finally:
        auth = {"Authorization": f"token {TOKEN}"}
        for session in httpx.get(f"{base}/api/sessions", headers=auth).json():
            httpx.delete(f"{base}/api/sessions/{session['id']}", headers=auth)
        page.evaluate(
            "() => { for (const w of Array.from(window.jupyterapp.shell.widgets('main')))"
            " w.dispose(); }"
        )
