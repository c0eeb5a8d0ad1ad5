"""Forms as a person sees them: JupyterLab (and Notebook 7) in Chromium, measured.

One front end per module run: the notebook below shows the form tour's schema and the
approval schema as forms; the tests measure the rendered page (tests/helpers/
measure_form.js): inputs of one nesting level start on one line (within 2 px), nothing
is wider than the form, no input is clipped or squeezed, a pristine form shows no error,
after Submit the summary lists every error, each entry moves the focus to its field,
and error text keeps a contrast of at least 4.5:1 (WCAG AA) in the light and the dark
theme.

Chromium comes from the system (Debian's ``chromium``); without it these tests are
skipped, except under ``CI=true``. The Notebook 7 tests need the ``notebook`` package.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from tests.helpers import lab

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.kernel]

pytest.importorskip("jupyterlab")

CELLS = [
    """
from hitl_nb.forms import Form
from hitl_nb.mock_agent import BUILTIN_SCENARIOS

schemas = {s.name: s.steps[0].response_schema for s in BUILTIN_SCENARIOS if s.steps}
tour = Form(schemas["form-tour"])
tour
""",
    """
approval = Form(schemas["approval"])
approval
""",
]

#: Fills every kind of nesting the tour has: array entries, an added section, a map, a
#: variant's option (the measure then sees levels 0, 1 and 2).
FILLED = {
    "title": "Release v2.0.3",
    "priority": "high",
    "approve": True,
    "tags": ["db", "web"],
    "owner": {"name": "Ada", "email": "ada@example.com"},
    "reviewers": [{"name": "Grace"}],
    "target": {"kind": "host", "host": "web-1"},
    "labels": {"team": "platform"},
}


def _start(
    tmp_path_factory: pytest.TempPathFactory, chromium: lab.Chromium, app: str
) -> Iterator[object]:
    root = tmp_path_factory.mktemp(app)
    lab.write_notebook(root / "forms.ipynb", CELLS)
    with (
        lab.jupyter_server(root, app) as base,
        chromium(1200, 3000) as ctx,
    ):
        page = lab.open_notebook(ctx, base, "forms.ipynb", app)
        try:
            lab.run_all(page)
            page.locator(".hitl-form").nth(1).wait_for(timeout=90_000)
            page.wait_for_timeout(1000)
            yield page
        finally:
            page.screenshot(path=str(root / "last.png"), full_page=True)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory, chromium: lab.Chromium) -> Iterator[object]:
    yield from _start(tmp_path_factory, chromium, "jupyterlab")


def _reset(page) -> None:  # type: ignore[no-untyped-def]
    lab.kernel(
        page,
        "for f in (tour, approval):\n"
        "    f.value = {}\n    f._attempted = False\n    f.ctx.reveal = False\n    f._refresh()",
    )
    page.wait_for_timeout(300)


def _check_layout(measured: dict) -> None:  # type: ignore[type-arg]
    spread = lab.edge_spread(measured)
    assert spread and all(s <= 2 for s in spread.values()), measured["edges"]
    assert measured["overflow"] == []
    assert measured["clipped"] == []


def test_a_pristine_form_lines_up_and_shows_no_error(page) -> None:  # type: ignore[no-untyped-def]
    _reset(page)
    for nth in (0, 1):
        measured = lab.measure_form(page, ".hitl-form", nth)
        _check_layout(measured)
        assert measured["errors"] == [] and measured["summary"] == []


def test_a_filled_form_lines_up_at_every_level(page) -> None:  # type: ignore[no-untyped-def]
    _reset(page)
    lab.kernel(page, f"tour.value = {FILLED!r}")
    page.wait_for_timeout(800)
    measured = lab.measure_form(page, ".hitl-form", 0)
    _check_layout(measured)
    assert {"0", "1", "2"} <= set(measured["edges"]), measured["edges"]


def test_submit_shows_every_error_in_the_summary_and_entries_focus_fields(page) -> None:  # type: ignore[no-untyped-def]
    _reset(page)
    lab.kernel(page, 'tour.value = {"title": "v2", "ticket": "ops 42", "tags": ["a", "a"]}')
    tour = page.locator(".hitl-form").nth(0)
    tour.locator(".hitl-submit").first.click()
    tour.locator(".hitl-summary").wait_for(timeout=20_000)
    page.wait_for_timeout(500)
    expected = lab.kernel(page, "print(len(tour.errors))").strip()
    measured = lab.measure_form(page, ".hitl-form", 0)
    assert len(measured["summary"]) == int(expected) >= 4, measured["summary"]
    assert "Title: Use at least 3 characters" in measured["summary"]
    assert any(s.startswith("Tags › #2: Same as entry #1") for s in measured["summary"])
    assert not any("/" in s.split(":")[0] for s in measured["summary"])  # labels, not pointers
    _check_layout(measured)
    entry = tour.locator(".hitl-summary-link", has_text="Ticket").first
    entry.click()
    page.wait_for_function(
        "() => document.activeElement && document.activeElement.closest('.hitl-field-ticket')",
        timeout=10_000,
    )


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_error_text_keeps_aa_contrast(page, dark: bool) -> None:  # type: ignore[no-untyped-def]
    _reset(page)
    lab.set_theme(page, dark)
    try:
        page.locator(".hitl-form").nth(1).locator(".hitl-submit").first.click()
        page.locator(".hitl-form").nth(1).locator(".hitl-summary").wait_for(timeout=20_000)
        page.wait_for_timeout(300)
        measured = lab.measure_form(page, ".hitl-form", 1)
        assert len(measured["errors"]) >= 2  # the summary's heading and the field's message
        for error in measured["errors"]:
            assert error["ratio"] >= 4.5, error
    finally:
        lab.set_theme(page, False)


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory: pytest.TempPathFactory, chromium: lab.Chromium) -> Iterator[object]:
    if importlib.util.find_spec("notebook") is None:
        pytest.skip("Notebook 7 is not installed (pip install notebook)")
    yield from _start(tmp_path_factory, chromium, "notebook")


def test_notebook_7_lines_up_shows_no_error_until_submit(notebook7) -> None:  # type: ignore[no-untyped-def]
    page = notebook7
    for nth in (0, 1):
        measured = lab.measure_form(page, ".hitl-form", nth)
        _check_layout(measured)
        assert measured["errors"] == []
    form = page.locator(".hitl-form").nth(1)
    form.locator(".hitl-submit").first.click()
    form.locator(".hitl-summary").wait_for(timeout=20_000)
    page.wait_for_timeout(300)
    measured = lab.measure_form(page, ".hitl-form", 1)
    assert measured["summary"] == ["Approve: Choose Yes or No"]
    assert all(e["ratio"] >= 4.5 for e in measured["errors"]) and measured["errors"]
