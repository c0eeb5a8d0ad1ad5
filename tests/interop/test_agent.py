"""The official A2A SDKs answering both agents hitl_nb.agent serves: the a2a-sdk agent
whose executor ``await ask(...)`` and the LangGraph graph.

The JavaScript SDK (@a2a-js/sdk, pinned in tests/interop/js/), on both bindings: a prompt,
the agent's 422 and 409 as the SDK hands them to its caller, a streamed answer, a
resubscription that replays the prompt (CF-6). Without node/npm these skip, except under
``CI=true`` (a failure there). The Python SDK's client (a2a-sdk), on both bindings: a
streamed answer that begins with the Task (A2A 1.0 §3.1.2)."""

from __future__ import annotations

import json
import uuid
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
    # A2A 1.0 §3.1.2: the stream begins with the Task, here as the WORKING update left it.
    assert answered[0] == f"task:{WORKING}" and answered[-1] == f"statusUpdate:{COMPLETED}"
    assert report["streamedAnswer"]["answerInHistory"]
    resubscribed = report["resubscribe"]
    assert resubscribed["replayed"] == resubscribed["promptId"]  # CF-6: the prompt again
    assert resubscribed["kinds"][0] == f"task:{INPUT_REQUIRED}"
    assert resubscribed["kinds"][-1] == f"statusUpdate:{COMPLETED}"
    assert report["getTask"]["state"] == COMPLETED


async def _streamed_answer(url: str, binding: str, answer_id: str) -> list[Any]:
    """The events the a2a-sdk client hands over for a new task's stream, then for the
    streamed answer (message ``answer_id``) to its prompt."""
    import httpx
    from a2a.client import ClientCallContext, ClientConfig, create_client
    from a2a.client.service_parameters import ServiceParametersFactory, with_a2a_extensions
    from a2a.types import Message, Part, Role, SendMessageRequest
    from google.protobuf.struct_pb2 import Struct

    from hitl_nb.spec import EXTENSION_URI

    params = ServiceParametersFactory.create([with_a2a_extensions([EXTENSION_URI])])
    ctx = ClientCallContext(service_parameters=params)
    async with httpx.AsyncClient(timeout=30) as http:
        config = ClientConfig(
            streaming=True, httpx_client=http, supported_protocol_bindings=[binding]
        )
        client = await create_client(url, config)
        first = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text="v6")])
        opened = [
            e async for e in client.send_message(SendMessageRequest(message=first), context=ctx)
        ]
        asked = opened[-1].status_update
        envelope = asked.status.message.metadata.fields[EXTENSION_URI].struct_value
        meta = Struct()
        meta.update(
            {
                "hitl_response_for": {
                    "prompt_id": envelope.fields["prompt_id"].string_value,
                    "payload": {"approved": True},
                }
            }
        )
        answer = Message(
            message_id=answer_id,
            role=Role.ROLE_USER,
            task_id=asked.task_id,
            context_id=asked.context_id,
            parts=[Part(text="yes")],
            metadata=meta,
        )
        events = [
            e async for e in client.send_message(SendMessageRequest(message=answer), context=ctx)
        ]
        await client.close()
    return [opened, events]


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_the_python_sdk_client_sees_an_answers_stream_begin_with_the_task(
    agent: Any, binding: str
) -> None:
    import asyncio

    from a2a.types import TaskState

    answer_id = str(uuid.uuid4())
    opened, answered = asyncio.run(_streamed_answer(agent.url, binding, answer_id))
    assert opened[0].WhichOneof("payload") == "task"
    assert answered[0].WhichOneof("payload") == "task"
    task = answered[0].task
    assert task.status.state == TaskState.TASK_STATE_WORKING
    assert task.history[-1].message_id == answer_id  # the SDK kept the answer
    assert [e.WhichOneof("payload") for e in answered[1:]][-1] == "status_update"
    assert answered[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
