"""``hitl-nb conformance URL``: the table, the files, and the exit status."""

from __future__ import annotations

import json
import os
import select
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.cli import main
from hitl_nb.mock_agent import MockAgent
from tests.helpers import wire
from tests.helpers.scripted import rpc_agent

ROOT = Path(__file__).resolve().parents[2]


def test_green_run_exits_0_and_writes_both_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_json, out_xml, out_har = tmp_path / "r.json", tmp_path / "r.xml", tmp_path / "r.har"
    with MockAgent() as agent:
        code = main(
            [
                "conformance",
                agent.url,
                "--binding",
                "HTTP+JSON",
                "--trials",
                "2",
                "--only",
                "CF-1",
                "CF-3",
                "EXT-ECHO",
                "--json",
                str(out_json),
                "--junit",
                str(out_xml),
                "--har",
                str(out_har),
            ]
        )
    captured = capsys.readouterr()
    assert code == 0, captured.out
    assert "GREEN: 3 passed" in captured.out and "CF-3" in captured.out
    assert captured.err == ""  # no terminal: no progress, the table alone
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
        code = main(
            ["conformance", agent.url, "--binding", "auto", "--only", "CF-1", "--quiet"]
            + ["--scenario", "echo"]
        )
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
        main(["conformance", "http://x", "--binding", "websocket"])
    assert info.value.code == 2
    assert "invalid choice: 'websocket'" in capsys.readouterr().err


def test_console_entry_runs_as_a_process(tmp_path: Path) -> None:
    with MockAgent(faults=["no-echo"]) as agent:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "hitl_nb.cli",
                "conformance",
                agent.url,
                "--only",
                "EXT-ECHO",
                "--text",
                "approval",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 1, proc.stderr
    assert "EXT-ECHO" in proc.stdout and "FAIL" in proc.stdout
    assert "answers without it" in proc.stdout


# --- progress: a live line on a terminal, nothing off one ----------------------------


def _screen(raw: str) -> list[str]:
    """The lines a terminal shows for ``raw``: "\r" goes back to the line's start and
    what follows overwrites it (a pty also turns each "\n" into "\r\n")."""
    lines: list[str] = []
    line: list[str] = []
    col = 0
    for ch in raw:
        if ch == "\r":
            col = 0
        elif ch == "\n":
            lines.append("".join(line).rstrip())
            line, col = [], 0
        else:
            line[col : col + 1] = [ch]
            col += 1
    lines.append("".join(line).rstrip())
    return [text for text in lines if text]


def _conformance(url: str, *, stdout_on_terminal: bool, columns: int) -> tuple[str, str]:
    """Run the command with stderr (and stdout, if asked) on a pty ``columns`` wide.

    Returns (what reached the terminal, what reached the stdout pipe).
    """
    import fcntl
    import pty
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "hitl_nb.cli", "conformance", url, "--binding", "auto"]
        + ["--only", "CF-1", "CF-3"],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=slave if stdout_on_terminal else subprocess.PIPE,
        stderr=slave,
        env={k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")},
    )
    os.close(slave)
    chunks: list[bytes] = []
    end = time.monotonic() + 120
    try:
        while time.monotonic() < end:
            ready, _, _ = select.select([master], [], [], 1)
            if not ready:
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the command has exited and closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        piped = proc.stdout.read().decode() if proc.stdout else ""
        assert proc.wait(30) == 0
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()
    return b"".join(chunks).decode(), piped


def _table_rows(lines: list[str], check_id: str) -> list[str]:
    return [line for line in lines if line.split()[:1] == [check_id]]


pytestmark_posix = pytest.mark.skipif(os.name != "posix", reason="a pty is POSIX")


@pytestmark_posix
def test_a_terminal_sees_one_live_line_then_the_table_once() -> None:
    with MockAgent() as agent:
        raw, _ = _conformance(agent.url, stdout_on_terminal=True, columns=80)
    # The line was drawn and rewritten in place as each check ended ...
    drawn = [part for part in raw.split("\r") if "checks done" in part]
    assert len(drawn) >= 3, raw
    assert any("0 of 2 checks done, running CF-1" in part for part in drawn)
    assert any("1 of 2 checks done (1 passed), running CF-3" in part for part in drawn)
    assert any("2 of 2 checks done (2 passed)" in part for part in drawn)
    # ... and erased: what stays on the screen is the table, each check in it once.
    screen = _screen(raw)
    assert not any("checks done" in line for line in screen), screen
    assert len(_table_rows(screen, "CF-1")) == 1 and len(_table_rows(screen, "CF-3")) == 1
    assert sum(line.startswith("GREEN: 2 passed") for line in screen) == 1


@pytestmark_posix
def test_with_stdout_piped_the_pipe_gets_the_table_alone() -> None:
    with MockAgent() as agent:
        raw, piped = _conformance(agent.url, stdout_on_terminal=False, columns=30)
    # The person at the terminal still sees progress, cut to the terminal's width (a
    # wrapped line would only be rewritten from its last row); none is left behind ...
    drawn = [part for part in raw.split("\r") if "checks done" in part]
    assert drawn and all(len(part.rstrip()) < 30 for part in drawn), drawn
    assert _screen(raw) == []
    # ... and nothing of it reaches the pipe.
    assert "\r" not in piped and "checks done" not in piped
    lines = piped.splitlines()
    assert len(_table_rows(lines, "CF-1")) == 1 and len(_table_rows(lines, "CF-3")) == 1


def test_piped_output_is_the_table_alone() -> None:
    with MockAgent() as agent:
        proc = subprocess.run(
            [sys.executable, "-m", "hitl_nb.cli", "conformance", agent.url, "--binding", "auto"]
            + ["--only", "CF-1"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no terminal: no progress at all
    assert "\r" not in proc.stdout
    assert len(_table_rows(proc.stdout.splitlines(), "CF-1")) == 1


def test_by_default_every_binding_the_card_declares_is_checked(tmp_path: Path) -> None:
    """The mock agent's card declares JSON-RPC and HTTP+JSON: the command checks both,
    a table each, and ``--json`` holds both reports."""
    out = tmp_path / "report.json"
    with MockAgent() as agent:
        proc = subprocess.run(
            [sys.executable, "-m", "hitl_nb.cli", "conformance", agent.url, "--only", "CF-1"]
            + ["--json", str(out)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 0, proc.stderr
    assert len(_table_rows(proc.stdout.splitlines(), "CF-1")) == 2
    assert "every binding the card declares: JSONRPC GREEN, HTTP+JSON GREEN" in proc.stdout
    data = json.loads(out.read_text("utf-8"))
    assert data["passed"] is True
    assert [r["binding"] for r in data["reports"]] == ["JSONRPC", "HTTP+JSON"]


def test_binding_all_on_an_a2a_0_3_card(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A 0.3 card (url + preferredTransport, HTTP+JSON among additionalInterfaces) in
    # front of the mock agent, which speaks 0.3 on both bindings. The harness checks
    # JSON-RPC in 0.3; HTTP+JSON it speaks in 1.0 only: reported skipped, saying so, and
    # the run is not green (an unchecked binding never is).
    with MockAgent() as agent:

        def card(_: str) -> dict[str, Any]:
            made = wire.card_v03(agent.url + "/")
            made["additionalInterfaces"] = [
                {"url": agent.url + "/", "transport": "JSONRPC"},
                {"url": agent.url, "transport": "HTTP+JSON"},
            ]
            return made

        out = tmp_path / "report.json"
        with rpc_agent({}, card=card) as front:
            code = main(
                ["conformance", front.url, "--only", "CF-1", "EXT-ECHO"]
                + ["--trials", "2", "--json", str(out)]
            )
            alone = main(["conformance", front.url, "--binding", "JSONRPC", "--only", "CF-1"])
    text = capsys.readouterr().out
    assert code == 1 and alone == 0, text
    assert "binding JSONRPC, A2A 0.3" in text, text
    assert "every binding the card declares: JSONRPC GREEN, HTTP+JSON RED" in text, text
    assert "offers no interface for binding='HTTP+JSON'" in text
    assert "HTTP+JSON 1.0" in text  # what this client speaks, in the note
    written = json.loads(out.read_text())
    assert written["passed"] is False
    jsonrpc, http_json = written["reports"]
    assert (jsonrpc["binding"], jsonrpc["a2a_version"], jsonrpc["passed"]) == (
        "JSONRPC",
        "0.3",
        True,
    )
    assert http_json["binding"] == "HTTP+JSON"
    assert {c["outcome"] for c in http_json["results"]} == {"skipped"}
