"""``hitl-nb mock-agent`` (hitl_nb.mock_agent._cli): its options, bad ones reported
without starting, and the agent served in the foreground until a signal."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from hitl_nb.cli import build_parser, main
from hitl_nb.mock_agent._cli import agent_from_cli

ROOT = Path(__file__).resolve().parents[2]


def test_mock_agent_options_parse() -> None:
    args = build_parser().parse_args(
        [
            "mock-agent",
            "--port",
            "0",
            "--fault",
            "no-echo",
            "--fault",
            "slow-resume=5",
            "--on-deadline",
            "fail",
            "--deadline-seconds",
            "2",
        ]
    )
    assert args.fault == ["no-echo", "slow-resume=5"]
    assert args.on_deadline == "fail" and args.deadline_seconds == 2.0


@pytest.mark.parametrize(("flags", "advertised"), [([], True), (["--no-push"], False)])
def test_mock_agent_push_can_be_turned_off(flags: list[str], advertised: bool) -> None:
    # an agent without push is what the TCK's CORE-CAP-001 / -32003 tests need
    args = build_parser().parse_args(["mock-agent", "--port", "0", *flags])
    with agent_from_cli(args) as agent:
        card = httpx.get(agent.card_url).json()
        created = httpx.post(
            agent.url + "/tasks/t/pushNotificationConfigs",
            json={"url": "https://example.com/hook"},
            headers={"A2A-Version": "1.0"},
        )
    assert card["capabilities"]["pushNotifications"] is advertised
    if not advertised:
        assert created.status_code == 400
        assert "push" in created.text.lower()


def test_unknown_fault_is_reported_without_starting(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mock-agent", "--fault", "explode"]) == 2
    err = capsys.readouterr().err
    assert "unknown fault 'explode'" in err and "reuse-prompt-ids" in err


def test_unusable_store_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a database" * 200)
    assert main(["mock-agent", "--store", str(bad)]) == 1
    assert "not a usable mock-agent store" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_mock_agent_serves_until_signalled(sig: signal.Signals) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "hitl_nb.cli", "mock-agent", "--fault", "no-echo"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()
        url = line.rsplit(" ", 1)[-1].strip()
        assert url.startswith("http://127.0.0.1:"), line + proc.stderr.read()
        card = httpx.get(url + "/.well-known/agent-card.json", timeout=5).json()
        assert card["capabilities"]["streaming"] is True
        proc.send_signal(sig)
        assert proc.wait(10) == 0
        assert proc.stderr.read() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
