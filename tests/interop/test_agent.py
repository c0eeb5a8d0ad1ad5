"""The official A2A JavaScript SDK (@a2a-js/sdk, pinned in tests/interop/js/) answering
both agents hitl_nb.agent serves: the a2a-sdk agent whose executor ``await ask(...)`` and
the LangGraph graph. On both bindings: a prompt, the agent's 422 and 409 as the SDK hands
them to its caller, a streamed answer, a resubscription that replays the prompt (CF-6).
Without node/npm these skip, except under ``CI=true`` (a failure there)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.ask_agent import AskAgent
from tests.helpers.graph_agent import GraphAgent
from tests.helpers.js import js_workdir, run_node

pytestmark = pytest.mark.slow

# TaskState numbers of the SDK's protobuf enum.
SUBMITTED, WORKING, COMPLETED, INPUT_REQUIRED = 1, 2, 3, 6


@pytest.fixture(scope="module")
def work() -> Path:
    return js_workdir()


@pytest.fixture(scope="module", params=["ask", "graph"])
def agent(request: pytest.FixtureRequest) -> Iterator[Any]:
    with AskAgent() if request.param == "ask" else GraphAgent() as running:
        yield running


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_the_js_client_answers_the_agent(work: Path, agent: Any, binding: str) -> None:
    valid, invalid = json.dumps({"approved": True}), json.dumps({"approved": "yes"})
    report = json.loads(run_node(work, "answer.mjs", agent.url, binding, "v5", valid, invalid))
    assert report["binding"] == binding
    blocking = report["blocking"]
    assert blocking["state"] == INPUT_REQUIRED and blocking["promptId"]
    assert blocking["prompt"].startswith("Approve the release?")
    refused, conflict = report["invalid"], report["conflict"]
    assert refused["message"] == "hitl_response_invalid"
    assert conflict["message"] == "hitl_already_answered_or_unknown"
    if binding == "JSONRPC":
        assert (refused["envelopeCode"], conflict["envelopeCode"]) == (-32011, -32010)
        assert refused["validationErrors"] == [
            {"path": "/approved", "keyword": "type", "message": "expected boolean, got string"}
        ]
    else:
        assert (refused["statusCode"], conflict["statusCode"]) == (422, 409)
        # As with the mock agent: the SDK drops error details whose reason it cannot type.
        assert refused["validationErrors"] == []
    assert report["accepted"]["state"] == COMPLETED
    stream = report["stream"]
    assert stream["kinds"][0] == f"task:{SUBMITTED}"
    assert stream["kinds"][-1] == f"statusUpdate:{INPUT_REQUIRED}" and stream["promptId"]
    answered = report["streamedAnswer"]["kinds"]
    assert answered[0] == f"statusUpdate:{WORKING}" and answered[-1] == f"statusUpdate:{COMPLETED}"
    resubscribed = report["resubscribe"]
    assert resubscribed["replayed"] == resubscribed["promptId"]  # CF-6: the prompt again
    assert resubscribed["kinds"][0] == f"task:{INPUT_REQUIRED}"
    assert resubscribed["kinds"][-1] == f"statusUpdate:{COMPLETED}"
    assert report["getTask"]["state"] == COMPLETED
