"""An agent built on the official a2a-sdk, with the SDK's own push notifications: the
gateway configures push through our client, and its receiver accepts what the SDK's
sender POSTs (its header, its body)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("a2a.server")

from hitl_nb.client import HitlClient, PromptEvent, prompt_of  # noqa: E402
from tests.helpers.sdk_agent import SdkAgent  # noqa: E402
from tests.helpers.until import until_async

pytestmark = pytest.mark.kernel


async def test_the_receiver_takes_pushes_from_an_sdk_agent(api: Any, gateway: Any) -> None:
    gateway.watchers.poll_interval = 3600.0  # only a push can tell the gateway
    with SdkAgent(push=True) as sdk:
        async with HitlClient(sdk.url) as client:
            task = await client.send("hello")
            prompt = prompt_of(task)
            assert isinstance(prompt, PromptEvent)
            status, reg = await api(
                "POST", "hitl/api/tasks", body={"agent_url": sdk.url, "task_id": prompt.task_id}
            )
            assert status == 201 and len(reg["prompts"]) == 1, reg

            async def pushed() -> bool:
                return reg["id"] in gateway.watchers.pushed

            await until_async(pushed)  # the SDK agent took our CreateTaskPushNotificationConfig
            (config,) = await client.list_push_configs(prompt.task_id)
            assert config.url.endswith(f"/hitl/push/{reg['id']}") and config.token
            # Answered at the agent directly: only its push can close the prompt here.
            await client.respond(prompt.task_id, prompt.prompt_id, {"approved": True})

            async def closed() -> bool:
                status, body = await api("GET", "hitl/api/prompts")
                return status == 200 and body["prompts"] == []

            await until_async(closed)
    assert gateway.push.received[reg["id"]] >= 1
