"""The pytest plugin: nothing without ``--hitl-agent``; one item per check with it."""

from __future__ import annotations

import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers.inprocess import warm_http_stack

pytest_plugins = ["pytester"]
PLUGIN = "hitl_nb.conformance.pytest_plugin"


def _pytest(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", PLUGIN, "-p", "no:cacheprovider", *args)


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    warm_http_stack()


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
            project,
            "--hitl-agent",
            agent.url,
            "--hitl-trials",
            "2",
            "--hitl-binding",
            "HTTP+JSON",
            "--hitl-only",
            "CF-1,CF-4,EXT-CARD",
            "-rA",
        )
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
            project,
            "--hitl-agent",
            agent.url,
            "-k",
            "CF-2 or CF-3",
            "--junitxml",
            str(junit),
        )
    result.assert_outcomes(passed=1, failed=1, deselected=13)
    out = result.stdout.str()
    assert "FAILED hitl-conformance::CF-3" in out
    assert "expected a validation_errors array" in out
    assert "Traceback" not in out
    assert 'name="CF-3"' in junit.read_text("utf-8")


def test_text_data_header_and_xfail_like_the_cli(project: pytest.Pytester) -> None:
    report = project.path / "report.json"
    with MockAgent(faults=["no-echo"]) as agent:
        result = _pytest(
            project,
            "--hitl-agent",
            agent.url,
            "--hitl-data",
            '{"scenario": "approval"}',
            "--hitl-header",
            "X-Team: qa",
            "--hitl-only",
            "EXT-ECHO,CF-1",
            "--hitl-xfail",
            "ext-echo",
            "--hitl-json",
            str(report),
            "-rA",
            "--hitl-har",
            str(project.path / "wire.har"),
        )
        strict = _pytest(
            project,
            "--hitl-agent",
            agent.url,
            "--hitl-text",
            "approval",
            "--hitl-only",
            "EXT-ECHO",
            "-rA",
        )
    result.assert_outcomes(passed=2, xfailed=1)
    result.stdout.fnmatch_lines(["XFAIL hitl-conformance::EXT-ECHO*--hitl-xfail EXT-ECHO*"])
    import json

    data = json.loads(report.read_text("utf-8"))
    assert "driver: message: data {'scenario': 'approval'}" in data["notes"]
    assert {r["id"] for r in data["results"]} == {"CF-1", "EXT-ECHO"}
    har = json.loads((project.path / "wire.har").read_text("utf-8"))
    assert len(har["log"]["entries"]) > 2
    sent = [h for e in har["log"]["entries"] for h in e["request"]["headers"]]
    assert {"name": "x-team", "value": "qa"} in sent  # --hitl-header reached the agent
    strict.assert_outcomes(passed=1, failed=1)


def test_a_check_marked_xfail_that_passes_is_xpass(project: pytest.Pytester) -> None:
    with MockAgent() as agent:
        result = _pytest(
            project,
            "--hitl-agent",
            agent.url,
            "--hitl-only",
            "EXT-ECHO",
            "--hitl-xfail",
            "EXT-ECHO",
            "-rA",
        )
    result.assert_outcomes(passed=1, xpassed=1)


def test_unknown_ids_are_a_usage_error(project: pytest.Pytester) -> None:
    result = _pytest(project, "--hitl-agent", "http://127.0.0.1:9", "--hitl-only", "CF-42")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--hitl-only: unknown check id(s) CF-42*"])


def test_bad_options_are_usage_errors(project: pytest.Pytester) -> None:
    for args, message in [
        (("--hitl-trials", "0"), "*trials must be a positive integer*"),
        (("--hitl-data", "[1]"), "*--hitl-data must be a JSON object*"),
        (("--hitl-data", "{"), "*--hitl-data is not JSON*"),
        (("--hitl-text", "hi", "--hitl-scenario", "echo"), "*at most one of*"),
        (("--hitl-header", "nocolon"), "*--hitl-header wants NAME:VALUE*"),
        (("--hitl-xfail", "EXT-NOPE"), "*--hitl-xfail: unknown check id(s) EXT-NOPE*"),
    ]:
        result = _pytest(project, "--hitl-agent", "http://127.0.0.1:9", *args)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, args
        result.stderr.fnmatch_lines([message])


def test_an_unreachable_agent_is_one_error(project: pytest.Pytester) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    # In a process of its own: an in-process run re-imports the HTTP stack's lazily
    # loaded modules, and an exception class from the second copy escapes translation.
    result = project.runpytest_subprocess(
        "-p", PLUGIN, "-p", "no:cacheprovider", "--hitl-agent", url, "--hitl-xfail", "CF-1", "-rA"
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors") == 1 and outcomes.get("passed") == 1, outcomes
    assert outcomes.get("skipped") == 13 and "failed" not in outcomes, outcomes
    out = result.stdout.str()
    assert "ERROR hitl-conformance::CF-1" in out  # xfail does not hide it
    assert f"against {url} could not start: cannot talk to the agent: AgentUnreachable" in out
    assert "Traceback" not in out and "def setup" not in out
    assert "see the error of hitl-conformance::CF-1" in out


LOADED_BY_THE_PLUGIN = """
import sys, pytest
import hitl_nb.conformance.pytest_plugin
heavy = ("ipywidgets", "tornado", "jsonschema", "httpx", "hitl_nb.client", "hitl_nb.forms",
         "hitl_nb.conformance._runner", "hitl_nb.testing._transcript")
print([m for m in heavy if m in sys.modules])
"""


def test_loading_the_plugin_loads_no_harness_widgets_or_server() -> None:
    # pytest loads the plugin in every run of anyone who has hitl-nb installed.
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", LOADED_BY_THE_PLUGIN],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert out.strip() == "[]", out
