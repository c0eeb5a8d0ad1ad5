"""The official a2a-sdk client against the mock agent, on both bindings."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("a2a.client")

from a2a.client import ClientCallContext, ClientConfig, create_client  # noqa: E402
from a2a.client.service_parameters import (  # noqa: E402
    ServiceParametersFactory,
    with_a2a_extensions,
)
from a2a.types import (  # noqa: E402
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from a2a.utils.errors import A2AError as SdkError  # noqa: E402
from google.protobuf.json_format import MessageToDict  # noqa: E402
from google.protobuf.struct_pb2 import Struct  # noqa: E402

from hitl_nb.mock_agent import MockAgent  # noqa: E402
from hitl_nb.spec import EXTENSION_URI, PromptEnvelope  # noqa: E402
from tests.helpers.until import until_async  # noqa: E402


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as a:
        yield a


def _context() -> ClientCallContext:
    params = ServiceParametersFactory.create([with_a2a_extensions([EXTENSION_URI])])
    return ClientCallContext(service_parameters=params)


def _answer(task_id: str, prompt_id: str, payload: dict[str, Any]) -> SendMessageRequest:
    meta = Struct()
    meta.update({"hitl_response_for": {"prompt_id": prompt_id, "payload": payload}})
    msg = Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_USER,
        task_id=task_id,
        parts=[Part(text="answer")],
        metadata=meta,
    )
    return SendMessageRequest(message=msg)


async def _round_trip(url: str, binding: str, streaming: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    ctx = _context()
    async with httpx.AsyncClient(timeout=10) as http:
        config = ClientConfig(
            streaming=streaming, httpx_client=http, supported_protocol_bindings=[binding]
        )
        client = await create_client(url, config)  # resolves the card
        first = Message(
            message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text="approval")]
        )
        kinds = []
        async for resp in client.send_message(SendMessageRequest(message=first), context=ctx):
            kinds.append(resp.WhichOneof("payload"))
            last = MessageToDict(resp)
        out["kinds"] = kinds
        body = last.get("task") or last["statusUpdate"]
        task_id = body.get("id") or body["taskId"]
        task = MessageToDict(await client.get_task(GetTaskRequest(id=task_id), context=ctx))
        env = PromptEnvelope.from_json(task["status"]["message"]["metadata"][EXTENSION_URI])
        out["state_before"] = task["status"]["state"]

        events: list[dict[str, Any]] = []

        async def subscribe() -> None:
            async for ev in client.subscribe(SubscribeToTaskRequest(id=task_id), context=ctx):
                events.append(MessageToDict(ev))

        sub = asyncio.create_task(subscribe()) if streaming else None
        if sub is not None:

            async def first_event() -> bool:
                return bool(events)

            await until_async(first_event, timeout=30, what="the first event", interval=0.01)
        answer = _answer(task_id, env.prompt_id, {"approve": True, "comment": "sdk"})
        async for resp in client.send_message(answer, context=ctx):
            last = MessageToDict(resp)
        if sub is not None:
            await asyncio.wait_for(sub, 10)
            out["subscribed"] = [next(iter(e)) for e in events]
            out["snapshot_envelope"] = (
                events[0]["task"]["status"]["message"]["metadata"][EXTENSION_URI]["prompt_id"]
                == env.prompt_id
            )
        final = MessageToDict(await client.get_task(GetTaskRequest(id=task_id), context=ctx))
        out["state_after"] = final["status"]["state"]
        try:
            async for _ in client.send_message(answer, context=ctx):
                pass
            out["duplicate"] = "accepted"
        except SdkError as exc:
            out["duplicate"] = str(exc)
        await client.close()
    return out


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
def test_a2a_sdk_client_round_trip(agent: MockAgent, binding: str, streaming: bool) -> None:
    out = asyncio.run(_round_trip(agent.url, binding, streaming))
    assert out["state_before"] == "TASK_STATE_INPUT_REQUIRED"
    assert out["state_after"] == "TASK_STATE_COMPLETED"
    # JSON-RPC carries the spec's code and message; the SDK's REST transport reports
    # the HTTP status (it knows no reason HITL_ALREADY_ANSWERED_OR_UNKNOWN).
    expected = "409" if binding == "HTTP+JSON" else "-32010: hitl_already_answered_or_unknown"
    assert expected in out["duplicate"]
    if streaming:
        assert out["kinds"] == ["task", "status_update", "status_update"]
        assert out["subscribed"][0] == "task" and out["snapshot_envelope"]
        assert out["subscribed"][1:] == ["statusUpdate", "statusUpdate"]
    else:
        assert out["kinds"] == ["task"]
