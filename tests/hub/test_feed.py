"""The hub service's feed (``{service}api/feed``, server-sent events): each person hears
of the prompts they may answer, a request the hub does not vouch for gets JSON, never a
stream."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from hitl_nb.a2a import aiter_events
from hitl_nb.client import GatewayClient, GatewayInfo
from hitl_nb.mock_agent import MockAgent
from tests.helpers.hub import Hub
from tests.helpers.tasks import start_task

pytestmark = [pytest.mark.slow, pytest.mark.kernel]


async def _first_list(hub: Hub, token: str | None) -> tuple[int, list[dict[str, Any]]]:
    headers = {"Authorization": f"token {token}"} if token else {}
    items: list[dict[str, Any]] = []
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        async with http.stream("GET", hub.service + "api/feed") as response:
            if response.status_code != 200:
                await response.aread()
                return response.status_code, [response.json()]
            async for event in aiter_events(response.aiter_bytes()):
                if event.event == "upsert":
                    items += json.loads(event.data)["items"]
                if event.event == "synced":
                    return 200, items
    raise AssertionError("the feed ended before its first list")


def test_each_person_hears_of_the_prompts_they_may_answer(hub: Hub) -> None:
    with MockAgent() as agent:
        task = asyncio.run(start_task(agent.url, "specific", responder="carol"))
        alice = GatewayInfo(hub.service, hub.user_token("alice"), "alice", hub.service + "api/")
        with GatewayClient(alice) as gw:
            reg = gw.register(agent.url, task.id)
        status, carols = asyncio.run(_first_list(hub, hub.user_token("carol")))
        assert status == 200
        (item,) = [i for i in carols if i["registration"] == reg["id"]]
        assert item["specific"] == ["carol"] and item["may_answer"]
        _, bobs = asyncio.run(_first_list(hub, hub.user_token("bob")))
        assert reg["id"] not in {i["registration"] for i in bobs}


@pytest.mark.parametrize("token", [None, "not-a-hub-token"], ids=["none", "unknown"])
def test_a_request_the_hub_does_not_vouch_for_gets_json(hub: Hub, token: str | None) -> None:
    status, (body,) = asyncio.run(_first_list(hub, token))
    assert status in (401, 403) and body["error"] == status and body["message"]
