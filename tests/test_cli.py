"""The ``hitl-nb`` command: argument errors, each command's parser alone, the help
(``mock-agent``'s own options: tests/mock_agent/test_cli.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hitl_nb.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_a_subcommand_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2
    assert "COMMAND" in capsys.readouterr().err


def test_a_command_loads_only_its_own_modules() -> None:
    # every hitl-nb command used to build the whole parser: the mock agent's web
    # server, the conformance harness and the client, whatever was asked
    code = (
        "import sys; from hitl_nb.cli import main; main(['nbval-sanitize']); "
        "print([m for m in ('tornado', 'httpx', 'hitl_nb.conformance._runner', "
        "'hitl_nb.mock_agent') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.splitlines()
    assert out[0].endswith("nbval-sanitize.cfg") and out[-1] == "[]", out


def test_help_still_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = capsys.readouterr().out
    for name in (
        "mock-agent",
        "tutorials",
        "conformance",
        "nbval-sanitize",
        "inbox",
        "hub-service",
    ):
        assert name in listed
