"""hitl-nb's own harness (CF-1..CF-7 and every further MUST) against the agents that
hitl_nb.agent serves (an a2a-sdk executor, a LangGraph graph, a Pydantic AI agent, an
OpenAI Agents SDK agent, an ADK agent, a Microsoft Agent Framework agent), on every
dialect: all green, EXT-CARD and EXT-ECHO included (the same harness finds both broken
on a bare a2a-sdk agent, tests/conformance/test_sdk_agent.py)."""

from __future__ import annotations

from typing import Any

import pytest

from hitl_nb.conformance import Settings, run

pytestmark = pytest.mark.slow

DIALECTS = [
    pytest.param(("JSONRPC", "1.0"), id="jsonrpc-1.0"),
    pytest.param(("HTTP+JSON", "1.0"), id="http-json-1.0"),
    pytest.param(("JSONRPC", "0.3"), id="jsonrpc-0.3"),
]


@pytest.mark.parametrize(
    "which",
    ["ask_agent", "graph_agent", "pydantic_agent", "openai_agent", "adk_agent", "maf_agent"],
)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_check_is_green(
    request: pytest.FixtureRequest, which: str, dialect: tuple[str, str]
) -> None:
    agent: Any = request.getfixturevalue(which)
    binding, version = dialect
    report = run(
        agent.url,
        binding=binding,
        version=version,
        driver="release",
        # The harness's own 20 trials: CF-4's bound is a 95th percentile, and of 5 trials
        # the 95th is the slowest (one stall of a loaded machine failed CI at 1.27 s).
        settings=Settings(transition_timeout=1.0),
    )
    assert report.passed, report.to_text()
    results = {r.id: r for r in report.results}
    for check in ["CF-1", "CF-2", "CF-3", "CF-4", "CF-5", "CF-6", "CF-7", "EXT-CARD", "EXT-ECHO"]:
        assert results[check].passed, report.to_text()
    assert results["CF-4"].metrics["p95_ms"] <= 1000
