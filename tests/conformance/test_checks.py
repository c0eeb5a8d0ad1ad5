"""The harness against the bundled mock agent: green when healthy, red where it is broken.

Each fault mode of the mock agent breaks one rule; the harness must fail exactly the
check that owns that rule (and CF-7, which aggregates CF-1..CF-6), with a message that
says what was expected and what was seen. A harness that cannot fail is worth nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from hitl_nb.a2a._model import Part
from hitl_nb.conformance import (
    CHECK_IDS,
    CallableDriver,
    MessageDriver,
    PromptInfo,
    Report,
    ScenarioDriver,
    Settings,
    arun,
    run,
)
from hitl_nb.mock_agent import MockAgent

# Lean: two CF-4 trials, short waits for what never comes.
FAST = Settings(trials=2, transition_timeout=0.5, resume_timeout=1.5, replay_timeout=2.0)


@pytest.fixture
def agent(request: pytest.FixtureRequest) -> Iterator[MockAgent]:
    faults = getattr(request, "param", ())
    with MockAgent(faults=faults) as running:
        yield running


def _failed(report: Report) -> set[str]:
    return {r.id for r in report.failed}


@pytest.mark.parametrize(
    ("binding", "version"),
    [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3")],
    ids=["jsonrpc-1.0", "http-json-1.0", "jsonrpc-0.3"],
)
def test_healthy_mock_agent_is_green(agent: MockAgent, binding: str, version: str) -> None:
    report = run(agent.url, binding=binding, version=version, settings=FAST)
    assert report.passed, report.to_text()
    assert report.ids() == list(CHECK_IDS)
    assert (report.binding, report.version) == (binding, version)
    cf4 = report["CF-4"].metrics
    assert cf4["trials"] == 2 and cf4["p95_ms"] <= 1000 and len(cf4["trials_ms"]) == 2
    assert any("2 trials: the spec asks for at least 20" in n for n in report["CF-4"].notes)
    assert [s for s, _ in report["CF-1"].steps][-1].startswith("step 7: Assert the agent rejects")
    assert all(o == "passed" for r in report.results for _, o in r.steps)


FAULTS = [
    pytest.param(
        "reuse-prompt-ids",
        {"EXT-UNIQUE"},
        "EXT-UNIQUE",
        "a distinct prompt_id for every prompt",
        "S-5",
        id="reuse-prompt-ids",
    ),
    pytest.param(
        "accept-duplicates",
        {"CF-1", "CF-7"},
        "CF-1",
        "seen accepted (HTTP 200",
        "Scenario CF-1",
        id="accept-duplicates",
    ),
    pytest.param(
        "no-replay",
        {"CF-6", "CF-7"},
        "CF-6",
        "the prompt envelope replayed after reconnecting",
        "§Outbox / Replay",
        id="no-replay",
    ),
    pytest.param(
        "422-without-errors",
        {"CF-3", "CF-7"},
        "CF-3",
        "seen no validation_errors",
        "Acceptance and rejection",
        id="422-without-errors",
    ),
    pytest.param(
        "envelope-without-activation",
        {"EXT-NO-ACTIVATION"},
        "EXT-NO-ACTIVATION",
        "seen an envelope in",
        "§Activation",
        id="envelope-without-activation",
    ),
    pytest.param(
        "no-echo",
        {"EXT-ECHO"},
        "EXT-ECHO",
        "answers without it",
        "HTTP header echo",
        id="no-echo",
    ),
]


@pytest.mark.parametrize(("fault", "failing", "check", "text", "section"), FAULTS)
def test_each_fault_fails_its_own_check(
    fault: str, failing: set[str], check: str, text: str, section: str
) -> None:
    with MockAgent(faults=[fault]) as agent:
        report = run(agent.url, settings=FAST)
    assert _failed(report) == failing, report.to_text()
    result = report[check]
    assert result.outcome == "failed"
    assert text in result.message and section in result.message, result.message
    assert result.failures[0].expected and result.failures[0].seen


def test_oversize_schema_fails_the_s2_checks() -> None:
    with MockAgent(faults=["oversize-schema"]) as agent:
        report = run(agent.url, only=["EXT-SCHEMA-SIZE", "EXT-STRICT"], settings=FAST)
    size = report["EXT-SCHEMA-SIZE"]
    assert size.outcome == "failed"
    assert "bytes (limit 65536)" in size.message and "S-2" in size.message
    assert "over 64 KiB" in report["EXT-STRICT"].message


def test_slow_resume_fails_cf4_with_the_percentiles() -> None:
    settings = Settings(trials=1, resume_timeout=3.0)
    with MockAgent(faults=["slow-resume=1100"]) as agent:
        report = run(agent.url, only=["CF-4"], settings=settings)
    result = report["CF-4"]
    assert result.outcome == "failed", report.to_text()
    assert "95th percentile of t1 - t0 <= 1000 ms" in result.message
    assert 1100 <= result.metrics["p95_ms"] < 3000


def test_slow_but_in_time_resume_passes_cf4() -> None:
    with MockAgent(faults=["slow-resume=150"]) as agent:
        report = run(agent.url, only=["CF-4"], settings=FAST)
    assert report.passed, report.to_text()
    assert report["CF-4"].metrics["p50_ms"] >= 150


def test_never_resume_fails_cf2_and_cf4() -> None:
    with MockAgent(faults=["never-resume"]) as agent:
        report = run(agent.url, only=["CF-2", "CF-4"], settings=FAST)
    assert _failed(report) == {"CF-2", "CF-4"}
    assert "still INPUT_REQUIRED" in report["CF-2"].message
    assert "step 4" in report["CF-2"].message
    assert "stopped after 1 trial(s)" in report["CF-4"].message


def test_only_cf7_brings_cf1_to_cf6(agent: MockAgent) -> None:
    report = run(agent.url, only=["cf-7"], settings=FAST)
    assert report.ids() == ["CF-1", "CF-2", "CF-3", "CF-4", "CF-5", "CF-6", "CF-7"]
    assert report.passed


def test_other_drivers_multi_step_text_and_callable(agent: MockAgent) -> None:
    purposes: list[str] = []

    def start(purpose: str) -> list[Part]:
        purposes.append(purpose)
        return [Part(text="please"), Part(data={"scenario": "multi-step"})]

    for driver in (
        ScenarioDriver("multi-step", as_text=True),
        MessageDriver(text="echo"),
        CallableDriver(start),
    ):
        report = run(agent.url, only=["CF-1", "CF-3", "CF-6"], driver=driver, settings=FAST)
        assert report.passed, report.to_text()
    assert purposes == ["CF-1", "CF-3", "CF-6"]


def test_driver_payloads_are_used(agent: MockAgent) -> None:
    seen: list[PromptInfo] = []

    def valid(info: PromptInfo) -> dict[str, Any]:
        seen.append(info)
        return {"approve": False, "comment": "from the driver"}

    async def start(purpose: str) -> dict[str, Any]:
        return {"scenario": "approval"}

    driver = CallableDriver(start, valid=valid, invalid=lambda info: {"approve": "nope"})
    report = run(agent.url, only=["CF-3"], driver=driver, settings=FAST)
    assert report.passed, report.to_text()
    assert seen and seen[0].response_schema["required"] == ["approve"]
    assert any("the driver's invalid payload" in n for n in report["CF-3"].notes)


def test_a_driver_that_never_asks_fails_with_a_clear_message(agent: MockAgent) -> None:
    # The "echo" scenario asks; a task that is answered at once does not. Unknown
    # scenario names are refused by the mock agent: the check errors and says so.
    report = run(agent.url, only=["CF-2"], driver={"scenario": "nope"}, settings=FAST)
    result = report["CF-2"]
    assert result.outcome == "error"
    assert "unknown scenario 'nope'" in result.message and "step 1" in result.message


def test_unreachable_agent_reports_errors_not_a_crash() -> None:
    with MockAgent() as agent:
        url = agent.url
    report = run(url, only=["CF-1", "EXT-CARD"], settings=FAST)
    assert [r.outcome for r in report.results] == ["error", "error"]
    assert "cannot talk to the agent" in report["CF-1"].message


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"only": ["CF-9"]}, "unknown check id"),
        ({"binding": "websocket"}, "binding must be"),
        ({"version": "2.0"}, "version must be"),
        ({"binding": "http-json"}, "binding must be"),
        ({"trials": 0}, "trials must be a positive integer"),
        ({"driver": 42}, "driver must be"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_sent(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        run("http://127.0.0.1:9", **kwargs)


def test_run_inside_a_running_loop_and_arun(agent: MockAgent) -> None:
    async def cell() -> tuple[Report, Report]:
        # A notebook cell: run() must not need (nor nest) the running loop.
        blocking = run(agent.url, only=["CF-2"], settings=FAST)
        seen: list[str] = []
        awaited = await arun(
            agent.url,
            only=["CF-2", "EXT-CARD"],
            settings=FAST,
            on_result=lambda r: seen.append(r.id),
        )
        assert seen == ["CF-2", "EXT-CARD"]
        return blocking, awaited

    blocking, awaited = asyncio.run(cell())
    assert blocking.passed and awaited.passed
