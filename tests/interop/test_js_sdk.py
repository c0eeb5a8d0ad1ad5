"""hitl-nb and the official A2A JavaScript SDK (@a2a-js/sdk, pinned in tests/interop/js/).

Both ways: the SDK's client against the bundled mock agent, and hitl-nb (the conformance
harness, ``SyncHitlClient``, a ``Conversation``) against an agent written with the SDK's
server the way its samples do (tests/interop/js/agent.mjs). Each agent starts once per
module. Without node/npm these skip, except under ``CI=true`` (a failure there).

What the SDK carries (asserted below, listed in hitl_nb/mock_agent/README.md):
``validation_errors`` reach a JS caller over JSON-RPC (``error.data`` is kept whole);
over HTTP+JSON the SDK keeps only the message and the status of an error whose ErrorInfo
reason it does not know (the extension's own), so the list does not reach it there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.a2a import TaskState
from hitl_nb.client import PromptEvent, StatusEvent, SyncHitlClient, TaskEvent
from hitl_nb.conformance import Settings, run
from hitl_nb.errors import PromptConflict, ResponseInvalid
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook import Conversation
from hitl_nb.spec import RESPONSE_KEY
from tests.helpers.js import NodeProcess, js_workdir, run_node

pytestmark = pytest.mark.slow

BINDINGS = ["JSONRPC", "HTTP+JSON"]
# TaskState numbers of the SDK's protobuf enum.
SUBMITTED, WORKING, COMPLETED, INPUT_REQUIRED = 1, 2, 3, 6


@pytest.fixture(scope="module")
def work() -> Path:
    return js_workdir()


@pytest.fixture(scope="module")
def mock() -> Iterator[MockAgent]:
    with MockAgent() as agent:
        yield agent


@pytest.fixture(scope="module")
def js_agent(work: Path) -> Iterator[NodeProcess]:
    with NodeProcess(work, "agent.mjs") as agent:
        yield agent


# -- the JS SDK's client against the mock agent ------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_js_client_against_the_mock_agent(work: Path, mock: MockAgent, binding: str) -> None:
    report = json.loads(run_node(work, "client.mjs", mock.url, binding))
    assert (report["binding"], report["version"]) == (binding, "1.0")
    assert report["blocking"]["state"] == INPUT_REQUIRED and report["blocking"]["promptId"]
    assert report["blocking"]["schemaKeys"] == ["approve", "comment"]
    invalid, conflict = report["invalid"], report["conflict"]
    assert invalid["message"] == "hitl_response_invalid"
    assert conflict["message"] == "hitl_already_answered_or_unknown"
    if binding == "JSONRPC":
        assert (invalid["envelopeCode"], conflict["envelopeCode"]) == (-32011, -32010)
        assert invalid["validationErrors"] == [
            {"path": "/approve", "keyword": "type", "message": "expected boolean, got string"}
        ]
    else:
        assert (invalid["statusCode"], conflict["statusCode"]) == (422, 409)
        assert invalid["validationErrors"] == []  # the SDK drops details it cannot type
    assert report["accepted"]["state"] == COMPLETED
    assert report["stream"]["kinds"] == [
        f"task:{SUBMITTED}",
        f"statusUpdate:{WORKING}",
        f"statusUpdate:{INPUT_REQUIRED}",
    ]
    answer = report["streamedAnswer"]
    assert answer["kinds"][0] == f"task:{WORKING}"  # A2A 1.0 §3.1.2: the Task first
    assert answer["kinds"][-1] == f"statusUpdate:{INPUT_REQUIRED}"
    assert answer["nextPrompt"] not in (None, report["stream"]["prompt"])
    assert report["resubscribe"]["kinds"] == [
        f"task:{INPUT_REQUIRED}",
        f"statusUpdate:{WORKING}",
        f"statusUpdate:{COMPLETED}",
    ]
    assert report["getTask"]["state"] == COMPLETED


# -- hitl-nb against an agent built with the JS SDK ---------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_conformance_against_the_js_sdk_agent(js_agent: NodeProcess, binding: str) -> None:
    report = run(
        js_agent.url,
        binding=binding,
        version="1.0",
        driver="release",
        settings=Settings(trials=3, transition_timeout=1.0),
    )
    results = {r.id: r for r in report.results}
    assert all(results[f"CF-{i}"].passed for i in range(1, 8)), report.to_text()
    # The SDK echoes A2A-Extensions only on answers its executor produced (not GetTask,
    # not a rejection made before the executor): that one MUST fails, and only it.
    assert {r.id for r in report.failed} == {"EXT-ECHO"}, report.to_text()
    # Its 422 can only carry the list as JSON text in an ErrorInfo's metadata: read, and
    # reported as a departure from the spec's shape.
    assert any("JSON text" in w for w in results["CF-3"].warnings)


@pytest.mark.parametrize("binding", BINDINGS)
def test_sync_client_against_the_js_sdk_agent(js_agent: NodeProcess, binding: str) -> None:
    with SyncHitlClient(js_agent.url, binding=binding, call_timeout=30) as client:
        events = list(client.stream("release"))
        prompt = events[-1]
        assert isinstance(prompt, PromptEvent) and prompt.prompt == "Approve the release?"
        assert list(prompt.response_schema["properties"]) == ["approve", "comment"]
        assert type(prompt.response_schema["properties"]["comment"]["maxLength"]) is int
        with pytest.raises(ResponseInvalid) as invalid:  # the agent's 422, not ours
            client.respond(prompt.task_id, prompt.prompt_id, {"approve": "yes"}, validate=False)
        assert invalid.value.validation_errors == [
            {"path": "/approve", "keyword": "type", "message": "expected boolean, got string"}
        ]
        assert client.get_task(prompt.task_id).status.state is TaskState.INPUT_REQUIRED
        answer = {RESPONSE_KEY: {"prompt_id": prompt.prompt_id, "payload": {"approve": True}}}
        streamed = list(client.stream("yes", task_id=prompt.task_id, metadata=answer))
        assert isinstance(streamed[0], TaskEvent) and streamed[0].state is TaskState.INPUT_REQUIRED
        assert not any(isinstance(e, PromptEvent) for e in streamed)
        last = streamed[-1]
        assert isinstance(last, StatusEvent) and last.state is TaskState.COMPLETED
        with pytest.raises(PromptConflict):
            client.respond(prompt.task_id, prompt.prompt_id, {"approve": True})


def test_a_conversation_with_the_js_sdk_agent(js_agent: NodeProcess) -> None:
    chat = Conversation.start(js_agent.url, "release")
    try:
        assert chat.current is not None
        refused = chat.answer({"approve": "yes"}, validate=False)
        assert refused.status == "invalid" and refused.validation_errors
        outcome = chat.answer({"approve": True, "comment": "ship it"})
        assert outcome.status == "accepted", outcome
        assert chat.task is not None
        final: Any = chat.refresh()
        assert final.status.state is TaskState.COMPLETED
        assert chat.current is None
    finally:
        chat.close()
