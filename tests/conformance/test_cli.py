"""``hitl-nb conformance URL``: the table, the files, and the exit status."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hitl_nb.cli import main
from hitl_nb.mock_agent import MockAgent

ROOT = Path(__file__).resolve().parents[2]


def test_green_run_exits_0_and_writes_both_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_json, out_xml, out_har = tmp_path / "r.json", tmp_path / "r.xml", tmp_path / "r.har"
    with MockAgent() as agent:
        code = main(
            ["conformance", agent.url, "--binding", "HTTP+JSON", "--trials", "2",
             "--only", "CF-1", "CF-3", "EXT-ECHO", "--json", str(out_json),
             "--junit", str(out_xml), "--har", str(out_har)]
        )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.out
    assert "GREEN: 3 passed" in captured.out and "CF-3" in captured.out
    assert "CF-1               passed" in captured.err  # progress, one line per check
    data = json.loads(out_json.read_text("utf-8"))
    assert [r["id"] for r in data["results"]] == ["CF-1", "CF-3", "EXT-ECHO"]
    assert data["binding"] == "HTTP+JSON" and data["passed"] is True
    root = ET.parse(out_xml).getroot()
    assert sum(int(s.get("tests", "0")) for s in root.iter("testsuite")) == 3
    har = json.loads(out_har.read_text("utf-8"))["log"]
    assert har["version"] == "1.2" and har["entries"][0]["request"]["url"].endswith(
        "/.well-known/agent-card.json"
    )
    assert any(e["response"]["status"] == 422 for e in har["entries"])  # CF-3's refusal


def test_a_failing_check_exits_1_and_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    with MockAgent(faults=["accept-duplicates"]) as agent:
        code = main(["conformance", agent.url, "--only", "CF-1", "--quiet", "--scenario", "echo"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.strip().startswith("RED: 1 failed")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--trials", "0"], "trials must be a positive integer"),
        (["--only", "CF-0"], "unknown check id(s) CF-0"),
        (["--data", "[1, 2]"], "--data must be a JSON object"),
        (["--data", "{nope"], "--data is not JSON"),
        (["--header", "no-colon"], "--header wants NAME:VALUE"),
    ],
)
def test_bad_arguments_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["conformance", "http://127.0.0.1:9", *args]) == 2
    assert message in capsys.readouterr().err


def test_no_usable_interface_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with MockAgent() as agent:
        code = main(["conformance", agent.url, "--binding", "HTTP+JSON", "--a2a-version", "0.3"])
    assert code == 2
    assert "offers no interface" in capsys.readouterr().err


def test_choices_are_checked_by_argparse(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["conformance", "http://x", "--binding", "grpc"])
    assert info.value.code == 2
    assert "invalid choice: 'grpc'" in capsys.readouterr().err


def test_console_entry_runs_as_a_process(tmp_path: Path) -> None:
    with MockAgent(faults=["no-echo"]) as agent:
        proc = subprocess.run(
            [sys.executable, "-m", "hitl_nb.cli", "conformance", agent.url,
             "--only", "EXT-ECHO", "--text", "approval"],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "EXT-ECHO" in proc.stdout and "FAIL" in proc.stdout
    assert "answers without it" in proc.stdout
