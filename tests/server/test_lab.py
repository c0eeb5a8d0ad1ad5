"""What JupyterLab's prompts panel reads from a real Jupyter server (hitl_nb/server/_lab.py,
_relay.py): each person's list, the event on the server's event bus at each change, the
changes since a number, a whole question, the gateway's feed as server-sent events; and
requests without a login or with hostile arguments."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from hitl_nb.a2a import aiter_events
from hitl_nb.mock_agent import MockAgent, Scenario, Step
from hitl_nb.server._lab import EVENT_SCHEMA
from tests.helpers.contract import conforms
from tests.helpers.jupyter_users import auth
from tests.helpers.tasks import start_task
from tests.helpers.until import until_async

pytestmark = pytest.mark.kernel

Api = Callable[..., Awaitable[tuple[int, Any]]]
APPROVE = {"type": "object", "properties": {"approve": {"type": "boolean"}}}
LONG = "Read all of this: " + "lorem ipsum " * 900  # 10,818 characters


async def _register(api: Api, url: str, task_id: str, user: str = "alice") -> dict[str, Any]:
    status, reg = await api(
        "POST", "hitl/api/tasks", user=user, body={"agent_url": url, "task_id": task_id}
    )
    assert status in (200, 201), reg
    return dict(reg)


class Events:
    """The prompts panel's events on the server's event bus, as a page hears them."""

    def __init__(self, serverapp: Any) -> None:
        self.seen: list[dict[str, Any]] = []
        serverapp.event_logger.add_listener(schema_id=EVENT_SCHEMA["$id"], listener=self._heard)

    async def _heard(self, logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        self.seen.append(conforms("LabEvent", dict(data)))

    def last(self, feed: str) -> dict[str, Any] | None:
        mine = [e for e in self.seen if e["feed"] == feed]
        return mine[-1] if mine else None


async def test_each_person_follows_the_prompts_they_may_answer(
    api: Api, agent: MockAgent, jp_serverapp: Any
) -> None:
    events = Events(jp_serverapp)
    status, bob = await api("GET", "hitl/lab/prompts", user="bob")
    assert status == 200 and bob["full"] and bob["items"] == []
    conforms("Listing", bob)
    assert bob["status"]["state"] == "ok" and bob["source"]["kind"] == "server"
    assert bob["me"] == {"name": "bob", "display_name": "Bob", "identified": True}
    assert bob["kernel"] and bob["feed"] == "user:bob"
    _, alice = await api("GET", "hitl/lab/prompts", user="alice")
    # alice registers a prompt for bob only: bob's list has it, and his pages are told.
    task = await start_task(agent.url, "specific", responder="bob")
    reg = await _register(api, agent.url, task.id)
    told = await _until(lambda: _after(events.last("user:bob"), bob["seq"]), "bob's event")
    assert set(told) == {"feed", "epoch", "seq"}  # never a prompt on the bus
    status, changes = await api(
        "GET", "hitl/lab/prompts", user="bob", params={"epoch": bob["epoch"], "since": bob["seq"]}
    )
    assert status == 200 and not changes["full"] and changes["remove"] == []
    conforms("Listing", changes)
    (item,) = changes["upsert"]
    assert item["registration"] == reg["id"] and item["may_answer"]
    assert item["specific"] == ["bob"] and "response_schema" not in item
    # alice may not answer it: her list stays empty (the server shows all, she answers none).
    _, again = await api(
        "GET", "hitl/lab/prompts", user="alice", params={"epoch": alice["epoch"], "since": "0"}
    )
    assert again["full"] or again["upsert"] == []
    # bob answers: it leaves his list.
    path = f"hitl/api/tasks/{reg['id']}/prompts/{item['prompt_id']}/answer"
    status, _ = await api("POST", path, user="bob", body={"payload": {"approve": True}})
    assert status == 200
    seq = changes["seq"]
    await _until(lambda: _after(events.last("user:bob"), seq), "the removal's event")
    _, gone = await api(
        "GET", "hitl/lab/prompts", user="bob", params={"epoch": bob["epoch"], "since": seq}
    )
    assert gone["remove"] == [item["key"]] and gone["upsert"] == []
    conforms("Listing", gone)


def _after(event: dict[str, Any] | None, seq: int) -> dict[str, Any] | None:
    return event if event is not None and event["seq"] > seq else None


async def _until(check: Callable[[], Any], what: str) -> Any:
    async def ask() -> Any:
        return check()

    return await until_async(ask, timeout=30, what=what)


async def test_a_whole_question_is_read_on_demand(api: Api, tmp_path: Any) -> None:
    long = Scenario("long", "A very long question.", steps=[Step(LONG, APPROVE)])
    with MockAgent(scenarios=[long]) as agent:
        task = await start_task(agent.url, "long")
        reg = await _register(api, agent.url, task.id)
    _, listing = await api("GET", "hitl/lab/prompts", user="carol")
    (item,) = conforms("Listing", listing)["items"]
    assert item["prompt_length"] == len(LONG) and len(item["prompt"]) == 1000
    status, whole = await api(
        "GET", f"hitl/lab/prompts/{reg['id']}/{item['prompt_id']}", user="carol"
    )
    assert status == 200 and whole["prompt"]["prompt"] == LONG
    status, none = await api("GET", f"hitl/lab/prompts/{reg['id']}/no-such-prompt", user="carol")
    assert status == 404 and "no such open prompt" in none["message"]


@pytest.mark.parametrize(
    "params",
    [
        {"since": "-1"},
        {"since": "abc"},
        {"since": "9" * 40},
        {"epoch": "<script>alert(1)</script>", "since": "1"},
        {"epoch": "", "since": ""},
    ],
    ids=["negative", "not-a-number", "huge", "markup-epoch", "empty"],
)
async def test_hostile_arguments_get_the_whole_list(api: Api, params: dict[str, str]) -> None:
    status, body = await api("GET", "hitl/lab/prompts", user="alice", params=params)
    assert status == 200 and body["full"] is True and body["items"] == []
    conforms("Listing", body)


async def test_without_a_login_nothing_is_shown(api: Api) -> None:
    for path in ("hitl/lab/prompts", "hitl/lab/prompts/r/p", "hitl/api/feed"):
        status, body = await api("GET", path, user=None)
        assert status == 403, (path, body)
        assert "items" not in (body or {})


async def test_the_gateways_feed_is_served_as_server_sent_events(
    api: Api, agent: MockAgent, server_url: str
) -> None:
    task = await start_task(agent.url, "approval")
    reg = await _register(api, agent.url, task.id)
    seen: list[tuple[str, Any]] = []
    async with httpx.AsyncClient(headers=auth("carol"), timeout=30) as http:
        async with http.stream("GET", server_url + "hitl/api/feed") as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            async for event in aiter_events(response.aiter_bytes()):
                seen.append((event.event, json.loads(event.data)))
                if event.event == "synced":
                    break
    assert [name for name, _ in seen] == ["reset", "upsert", "synced"]
    for name, body in seen:  # each event as the contract says (FeedReset, FeedUpsert...)
        conforms("Feed" + name.capitalize(), body)
    (item,) = seen[1][1]["items"]
    assert item["registration"] == reg["id"] and seen[2][1] == {"total": 1}


async def test_the_feed_of_the_tasks_one_registered_is_served_alike(
    api: Api, agent: MockAgent, server_url: str
) -> None:
    task = await start_task(agent.url, "approval")
    reg = await _register(api, agent.url, task.id, user="alice")
    seen: dict[str, list[tuple[str, Any]]] = {}
    async with httpx.AsyncClient(timeout=30) as http:
        for user in ("alice", "bob"):
            seen[user] = []
            url = server_url + "hitl/api/feed?registered=mine"
            async with http.stream("GET", url, headers=auth(user)) as response:
                assert response.status_code == 200
                async for event in aiter_events(response.aiter_bytes()):
                    seen[user].append((event.event, json.loads(event.data)))
                    if event.event == "synced":
                        break
        bad = await http.get(server_url + "hitl/api/feed?registered=all", headers=auth("bob"))
    assert [name for name, _ in seen["alice"]] == ["reset", "upsert", "synced"]
    (item,) = seen["alice"][1][1]["items"]
    assert item["registration"] == reg["id"]
    assert seen["bob"] == [("reset", {"total": 0}), ("synced", {"total": 0})]
    assert bad.status_code == 400 and "mine" in bad.json()["message"]


async def test_the_feed_follower_leaves_with_its_client(
    agent: MockAgent, server_url: str, gateway: Any
) -> None:
    async with httpx.AsyncClient(headers=auth("carol"), timeout=30) as http:
        async with http.stream("GET", server_url + "hitl/api/feed") as response:
            async for event in aiter_events(response.aiter_bytes()):
                if event.event == "synced":
                    break
            assert gateway.feed.followers == 1
    await _until(lambda: gateway.feed.followers == 0, "the follower leaving")


async def test_a_relay_says_once_that_its_source_is_down_and_tries_again() -> None:
    from hitl_nb.client import GatewayInfo
    from hitl_nb.server._relay import Relay, RemoteSource
    from tests.helpers.ports import free_port

    class Counted(RemoteSource):
        tries = 0

        def changes(self) -> Any:
            Counted.tries += 1
            return super().changes()

    told: list[dict[str, Any]] = []
    port = free_port()  # nobody listens: the source is down
    relay = Relay(Counted(GatewayInfo(f"http://127.0.0.1:{port}/", "t", "test")), "r", told.append)
    relay.start()
    try:
        await relay.ready(30)
        assert relay.status["state"] == "unavailable"
        assert "could not be reached" in relay.status["message"]
        await _until(lambda: Counted.tries >= 3, "two more tries")
        assert len(told) == 1  # said once, however many tries
        body = relay.since(None, None)
        assert body["status"]["state"] == "unavailable" and body["items"] == []
    finally:
        await relay.stop()
