"""Forms as a person sees them: JupyterLab (and Notebook 7) in Chromium, measured.

One front end per module run: the notebook below shows the form tour's schema and the
approval schema as forms, and the tour once more, submitted; the tests measure the
rendered page (tests/helpers/measure_form.js): inputs of one nesting level start on one
line (within 2 px), nothing is wider than the form, no input is clipped or squeezed, a
pristine form shows no error, after Submit the summary lists every error, each entry
moves the focus to its field, error text keeps a contrast of at least 4.5:1 (WCAG AA)
in the light and the dark theme, a submitted answer keeps the contrast it had while it
was typed (placeholders stay muted and italic beside it), a help note starts at its
input's left edge, and a map entry's remove button is the same small button as a list
entry's.

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
    # the tour as it looks once answered: submitted, every input disabled
    f"submitted = Form(schemas['form-tour'], value={FILLED!r})\nsubmitted.submit()\nsubmitted",
]


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
            page.locator(".hitl-form").nth(2).wait_for(timeout=90_000)
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


def test_a_help_note_starts_at_its_inputs_left_edge(page) -> None:  # type: ignore[no-untyped-def]
    _reset(page)
    notes = lab.measure_form(page, ".hitl-form", 0)["notes"]
    assert any(n["text"] == "Free text" for n in notes), notes  # the tour's Notes field
    for note in notes:
        assert abs(note["left"] - note["inputLeft"]) <= 1, note


def test_list_and_map_entries_have_the_same_remove_button(page) -> None:  # type: ignore[no-untyped-def]
    _reset(page)
    lab.kernel(page, f"tour.value = {FILLED!r}")
    page.wait_for_timeout(800)
    removes = lab.measure_form(page, ".hitl-form", 0)["removes"]
    assert {r["row"] for r in removes} == {"list", "map"}, removes  # tags and labels
    widths, heights = [r["width"] for r in removes], [r["height"] for r in removes]
    assert max(widths) - min(widths) <= 1 and max(heights) - min(heights) <= 1, removes
    assert max(widths) < 3 * max(heights), removes  # a small button, not a bar
    assert {r["text"] for r in removes} == {"✕"}


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_a_submitted_answer_reads_as_the_answer(page, dark: bool) -> None:  # type: ignore[no-untyped-def]
    # The submitted tour beside the live one holding the same answer: every value keeps
    # the contrast it had while it was typed (not the browser's disabled grey), and an
    # empty field's placeholder stays muted and italic, told apart from an answer.
    _reset(page)
    lab.kernel(page, f"tour.value = {FILLED!r}")
    lab.set_theme(page, dark)
    try:
        page.wait_for_timeout(500)
        live = {v["field"]: v for v in lab.measure_form(page, ".hitl-form", 0)["values"]}
        values = lab.measure_form(page, ".hitl-form", 2)["values"]
    finally:
        lab.set_theme(page, False)
    assert values and all(v["disabled"] for v in values)
    answers = [v for v in values if not v["empty"]]
    hints = [v for v in values if v["empty"] and v["placeholder"].replace("\u200b", "").strip()]
    assert len(answers) >= 8 and len(hints) >= 5, values
    for v in answers:
        assert v["ratio"] >= 4.5 and v["style"] == "normal", v
        assert v["ratio"] >= live[v["field"]]["ratio"] - 0.05, (v, live[v["field"]])
    for v in hints:
        assert v["placeholderStyle"] == "italic", v
        assert 4.5 <= v["placeholderRatio"] <= min(a["ratio"] for a in answers) / 2, v


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
