"""The official a2a-sdk client configures push notifications on the mock agent (both
bindings), and the agent delivers to the webhook it named."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import httpx
import pytest

pytest.importorskip("a2a.client")

from a2a.client import ClientConfig, create_client  # noqa: E402
from a2a.types import (  # noqa: E402
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    TaskPushNotificationConfig,
)
from google.protobuf.json_format import MessageToDict  # noqa: E402

from hitl_nb.mock_agent import MockAgent  # noqa: E402
from tests.helpers.tiny_server import Conn, Request, TinyServer  # noqa: E402
from tests.helpers.until import until  # noqa: E402


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent(push_backoff=0.05) as a:
        yield a


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_the_sdk_client_configures_push_and_the_agent_delivers(
    agent: MockAgent, binding: str
) -> None:
    def ok(request: Request, conn: Conn) -> None:
        conn.answer({}, 200)

    receiver = TinyServer(ok).start()

    async def run() -> dict[str, object]:
        async with httpx.AsyncClient(timeout=10) as http:
            config = ClientConfig(
                streaming=False, httpx_client=http, supported_protocol_bindings=[binding]
            )
            client = await create_client(agent.url, config)
            first = Message(
                message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text="approval")]
            )
            async for resp in client.send_message(SendMessageRequest(message=first)):
                task = resp.task
            made = await client.create_task_push_notification_config(
                TaskPushNotificationConfig(
                    task_id=task.id,
                    id="sdk-config",
                    url=receiver.url + "/sdk",
                    token="sdk-token",
                    authentication=AuthenticationInfo(scheme="Bearer", credentials="sdk-cred"),
                )
            )
            got = await client.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id=task.id, id="sdk-config")
            )
            listed = await client.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=task.id)
            )
            await client.cancel_task(CancelTaskRequest(id=task.id))
            until(lambda: receiver.requests, what="the notification")
            await client.delete_task_push_notification_config(
                DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="sdk-config")
            )
            after = await client.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=task.id)
            )
            await client.close()
            return {
                "task": task.id,
                "made": MessageToDict(made),
                "got": MessageToDict(got),
                "listed": [MessageToDict(c) for c in listed.configs],
                "after": list(after.configs),
            }

    try:
        out = asyncio.run(run())
        made = out["made"]
        assert made == {
            "taskId": out["task"],
            "id": "sdk-config",
            "url": receiver.url + "/sdk",
            "token": "sdk-token",
            "authentication": {"scheme": "Bearer", "credentials": "sdk-cred"},
        }
        assert out["got"] == made and out["listed"] == [made] and out["after"] == []
        (note,) = receiver.requests
        assert note.header("X-A2A-Notification-Token") == "sdk-token"
        assert note.header("Authorization") == "Bearer sdk-cred"
        body = note.json()
        assert body["statusUpdate"]["taskId"] == out["task"]
        assert body["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"
    finally:
        receiver.stop()
