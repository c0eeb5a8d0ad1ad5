"""The harness against the agent built on the official a2a-sdk (tests/helpers/sdk_agent.py).

That agent implements the extension's behaviour, so CF-1..CF-7 are green on every
dialect. Two further MUSTs fail, as they must for every a2a-sdk 1.3.0 agent: the SDK
drops ``"required": false`` and ``"params": {}`` from the card it serves, and it never
echoes ``A2A-Extensions``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hitl_nb.conformance import Settings, run
from tests.helpers.sdk_agent import SdkAgent

CONFORMANCE = ["CF-1", "CF-2", "CF-3", "CF-4", "CF-5", "CF-6", "CF-7"]


@pytest.fixture(scope="module")
def agent() -> Iterator[SdkAgent]:
    with SdkAgent() as running:
        yield running


@pytest.mark.parametrize(
    ("binding", "version"),
    [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3")],
    ids=["jsonrpc-1.0", "http-json-1.0", "jsonrpc-0.3"],
)
def test_sdk_agent_passes_every_conformance_scenario(
    agent: SdkAgent, binding: str, version: str
) -> None:
    report = run(
        agent.url,
        binding=binding,
        version=version,
        driver="release",
        settings=Settings(trials=3, transition_timeout=1.0),
    )
    results = {r.id: r for r in report.results}
    assert all(results[i].passed for i in CONFORMANCE), report.to_text()
    # The agent opens each streamed answer with the stored task (still on the prompt):
    # CF-4 follows the stream past it instead of falling back to polling GetTask.
    assert results["CF-4"].metrics["observed_by"] == ["stream"], results["CF-4"].metrics
    assert {r.id for r in report.failed} == {"EXT-CARD", "EXT-ECHO"}
    card = results["EXT-CARD"]
    assert "no required member" in str(card.failures[0])
    assert "no params member" in str(card.failures[1])
    assert "answers without it" in results["EXT-ECHO"].message
    # The SDK's card lists 1.0 interfaces only; 0.3 is tried at the same JSON-RPC URL.
    fallback = [n for n in report.notes if "lists no JSONRPC interface for A2A 0.3" in n]
    assert bool(fallback) == (version == "0.3"), report.notes
