"""hitl_nb.testing: the shipped nbval sanitizer, stable output, the pytest fixtures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from hitl_nb import _display
from hitl_nb.cli import main as cli_main
from hitl_nb.testing import (
    STABLE_OUTPUT_ENV,
    sanitize,
    sanitize_file,
    sanitize_patterns,
    stable_output,
    write_sanitize_file,
)
from tests.helpers.inprocess import warm_http_stack

pytest_plugins = ["pytester"]
PLUGIN = "hitl_nb.conformance.pytest_plugin"


def test_the_file_is_in_the_package_and_absolute() -> None:
    path = sanitize_file()
    assert path.is_absolute() and path.is_file()
    assert path.parent == Path(__import__("hitl_nb.testing").testing.__file__).parent
    assert len(sanitize_patterns()) >= 6
    for regex, _ in sanitize_patterns():
        re.compile(regex)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("task 3f2b8c1e-0a4d-4f5e-9b6a-1c2d3e4f5a6b", "task UUID"),
        ("at 2026-11-30T19:11:02.123Z and 2026-11-30T19:11:02+01:00", "at TIMESTAMP and TIMESTAMP"),
        ("http://127.0.0.1:54321/rpc", "http://127.0.0.1:PORT/rpc"),
        ("localhost:8888 and [::1]:9", "localhost:PORT and [::1]:PORT"),
        ("took 12.5 ms, then 3ms", "took N ms, then N ms"),
        ("waited 1.25 s", "waited N s"),
        ("<object at 0x7f3a2b1c4d50>", "<object at 0xADDRESS>"),
        # Left alone: plain numbers, words ending in s or ms, deadlines in whole seconds.
        ("CF-4: 20 trials, 30 s deadline, items", "CF-4: 20 trials, 30 s deadline, items"),
        ("version 1.0 of 2 forms", "version 1.0 of 2 forms"),
    ],
)
def test_sanitize_makes_run_dependent_values_equal(text: str, expected: str) -> None:
    assert sanitize(text) == expected


def test_sanitize_reads_like_nbval() -> None:
    nbval_plugin = pytest.importorskip("nbval.plugin")
    ours = nbval_plugin.get_sanitize_patterns(sanitize_file().read_text("utf-8"))
    assert [tuple(p) for p in ours] == sanitize_patterns()


def test_write_sanitize_file(tmp_path: Path) -> None:
    assert write_sanitize_file(tmp_path) == tmp_path / "nbval-sanitize.cfg"
    target = write_sanitize_file(tmp_path / "mine.cfg")
    assert target.read_text("utf-8") == sanitize_file().read_text("utf-8")


def test_the_command_prints_the_path_or_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["nbval-sanitize"]) == 0
    assert capsys.readouterr().out.strip() == str(sanitize_file())
    assert cli_main(["nbval-sanitize", "--write", str(tmp_path / "x.cfg")]) == 0
    assert (tmp_path / "x.cfg").read_text("utf-8") == sanitize_file().read_text("utf-8")
    assert capsys.readouterr().out.strip() == str(tmp_path / "x.cfg")
    assert cli_main(["nbval-sanitize", "--write", str(tmp_path / "no" / "such" / "x")]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_the_installed_command() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "hitl_nb.cli", "nbval-sanitize"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert Path(out.stdout.strip()) == sanitize_file()


def test_stable_output_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STABLE_OUTPUT_ENV, raising=False)
    try:
        assert _display.stable_output() is False
        monkeypatch.setenv(STABLE_OUTPUT_ENV, "1")
        assert _display.stable_output() is True
        stable_output(False)
        assert _display.stable_output() is False
        stable_output()
        monkeypatch.delenv(STABLE_OUTPUT_ENV)
        assert _display.stable_output() is True
        with pytest.raises(TypeError, match="True, False or None"):
            stable_output("yes")  # type: ignore[arg-type]
    finally:
        stable_output(None)
    assert _display.stable_output() is False


# --- the fixtures, through the plugin as users load it -------------------------------


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    warm_http_stack()


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv(STABLE_OUTPUT_ENV, raising=False)
    return pytester


def _pytest(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", PLUGIN, "-p", "no:cacheprovider", *args)


def test_fixtures_against_the_mock_agent(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent="""
from hitl_nb.client import PromptEvent, prompt_of

def test_client(hitl_client, mock_agent, hitl_agent_url):
    assert hitl_agent_url == mock_agent.url
    task = hitl_client.send({"scenario": "approval"})
    prompt = prompt_of(task)
    assert isinstance(prompt, PromptEvent)
    done = hitl_client.respond(task.id, prompt.prompt_id, {"approve": True}, wait=True)
    assert done.status.state.name == "COMPLETED"

def test_conversation(conversation):
    chat = conversation({"scenario": "approval"})
    outcome = chat.answer({"approve": True})
    assert outcome.status == "accepted", outcome
    assert chat.task.status.state.name == "COMPLETED"

import pytest

@pytest.fixture
def mock_agent_options():
    return {"deadline_seconds": 5.0}

def test_overridden_options(mock_agent):
    assert mock_agent.deadline_seconds == 5.0
"""
    )
    result = _pytest(project, "-q")
    result.assert_outcomes(passed=3)


def test_fixtures_cost_nothing_until_used(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_plain="""
import threading

def test_nothing_started():
    assert [t.name for t in threading.enumerate()] == ["MainThread"]
"""
    )
    # A fresh process: with the plugin loaded and no fixture used, nothing runs.
    result = project.runpytest_subprocess("-p", PLUGIN, "-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)


def test_hitl_nbval_sets_the_sanitizer_and_stable_output(
    project: pytest.Pytester, tmp_path: Path, plain_nbval: type
) -> None:
    import nbval.kernel

    project.makepyfile(
        test_cfg=f'''
import os

import nbval.kernel

def test_configured(pytestconfig):
    assert pytestconfig.option.nbval_sanitize_with == {str(sanitize_file())!r}
    assert os.environ["{STABLE_OUTPUT_ENV}"] == "1"
    # The kernels listen on Unix sockets: nothing started beside them takes their ports.
    assert nbval.kernel.KernelManager().transport == "ipc"
'''
    )
    try:
        result = _pytest(project, "-p", "nbval", "-q", "--hitl-nbval")
        result.assert_outcomes(passed=1)
        assert nbval.kernel.KernelManager is plain_nbval  # as it was once the run ended
        without = _pytest(project, "-p", "nbval", "-q")
        without.assert_outcomes(failed=1)  # without the option, nothing of this is set
        other = tmp_path / "other.cfg"
        other.write_text("", "utf-8")
        clash = _pytest(project, "-p", "nbval", "--hitl-nbval", "--nbval-sanitize-with", str(other))
        assert clash.ret == pytest.ExitCode.USAGE_ERROR
        clash.stderr.fnmatch_lines(["*--hitl-nbval and --nbval-sanitize-with*were both given*"])
    finally:
        import os

        os.environ.pop(STABLE_OUTPUT_ENV, None)


def test_a_failing_test_shows_the_wire(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_wire="""
def test_fails(hitl_client):
    hitl_client.send("approval")
    assert False, "the agent did something else"

def test_passes(hitl_client):
    hitl_client.send("approval")
"""
    )
    result = _pytest(project, "-q")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "hitl wire trace" in out
    assert "#2 POST / (SendMessage) 200" in out
    assert out.count("hitl wire trace") == 1  # only the failed test carries it
