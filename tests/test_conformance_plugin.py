"""The pytest plugin: nothing without ``--hitl-agent``; one item per check with it."""

from __future__ import annotations

import pytest

from hitl_nb.mock_agent import MockAgent

pytest_plugins = ["pytester"]
PLUGIN = "hitl_nb.conformance.pytest_plugin"


def _pytest(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", PLUGIN, "-p", "no:cacheprovider", *args)


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # Only this plugin, loaded with -p (also when an installed entry point would load
    # it): no scan of every installed plugin, no double registration.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_own="def test_own():\n    assert True\n")
    return pytester


def test_without_the_option_the_plugin_adds_nothing(project: pytest.Pytester) -> None:
    result = _pytest(project, "--collect-only", "-q")
    assert result.ret == 0
    out = result.stdout.str()
    assert "test_own.py::test_own" in out and "hitl-conformance" not in out
    result = _pytest(project, "-q")
    result.assert_outcomes(passed=1)


def test_items_per_check_and_a_green_run(project: pytest.Pytester) -> None:
    with MockAgent() as agent:
        listed = _pytest(project, "--collect-only", "-q", "--hitl-agent", agent.url)
        result = _pytest(
            project, "--hitl-agent", agent.url, "--hitl-trials", "2", "--hitl-binding",
            "HTTP+JSON", "--hitl-only", "CF-1,CF-4,EXT-CARD", "-rA",
        )  # fmt: skip
    names = listed.stdout.str()
    assert "test_own.py::test_own" in names
    for check in ("CF-1", "CF-7", "EXT-CARD", "EXT-SCHEMA-SIZE"):
        assert f"hitl-conformance::{check}" in names
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["PASSED hitl-conformance::CF-4"])


def test_a_failing_check_fails_its_item_and_deselection_works(project: pytest.Pytester) -> None:
    junit = project.path / "junit.xml"
    with MockAgent(faults=["422-without-errors"]) as agent:
        result = _pytest(
            project, "--hitl-agent", agent.url, "-k", "CF-2 or CF-3", "--junitxml", str(junit),
        )  # fmt: skip
    result.assert_outcomes(passed=1, failed=1, deselected=13)
    out = result.stdout.str()
    assert "FAILED hitl-conformance::CF-3" in out
    assert "expected a validation_errors array" in out
    assert "Traceback" not in out
    assert 'name="CF-3"' in junit.read_text("utf-8")


def test_unknown_ids_are_a_usage_error(project: pytest.Pytester) -> None:
    result = _pytest(project, "--hitl-agent", "http://127.0.0.1:9", "--hitl-only", "CF-42")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--hitl-only: unknown check id(s) CF-42*"])


def test_a_run_that_cannot_start_fails_every_item_once(project: pytest.Pytester) -> None:
    result = _pytest(project, "--hitl-agent", "http://127.0.0.1:9", "--hitl-trials", "0",
                     "--hitl-only", "CF-1,CF-2")  # fmt: skip
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*could not start: trials must be a positive integer*"])
