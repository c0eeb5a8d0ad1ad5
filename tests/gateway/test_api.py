"""The REST routes written once (hitl_nb/gateway/_api.py), called as a host calls them:
with the caller it authenticated. Who sees which tasks and prompts on a hub, who reads
the audit trail, and the routes' hostile query arguments."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.gateway import AgentPool, ApiRequest, Caller, Gateway, GatewayAPI, GatewaySettings
from hitl_nb.gateway._audit import answer_entry
from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.gateway._store import Registration

ALICE, BOB, CAROL = Caller("alice", "alice"), Caller("bob", "bob"), Caller("carol", "carol")
DORA = Caller("dora", "dora", admin=True)
SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def _envelope(prompt_id: str, responders: list[str]) -> dict[str, Any]:
    return {
        "prompt_id": prompt_id,
        "prompt": f"Prompt {prompt_id}?",
        "response_schema": SCHEMA,
        "allowed_responders": responders,
    }


@pytest.fixture
def hub_api(tmp_path: Path) -> Iterator[GatewayAPI]:
    """A hub's gateway (each caller sees their own) with alice's task holding three
    prompts: for anyone, for carol only, and a consensus; and its audit trail."""
    settings = GatewaySettings(show_all=False, watch=False, push=False, where="this hub")

    async def make() -> GatewayAPI:
        store = SQLiteStore(tmp_path / "gw.sqlite")
        reg = await store.add_registration(
            Registration("r1", "http://agent.invalid", "t1", "alice", time.time(), "alice")
        )
        for pid, who in [
            ("p-any", ["any"]),
            ("p-carol", ["specific:carol"]),
            ("p-two", ["consensus:2"]),
        ]:
            row = await store.see_prompt("r1", pid, None, _envelope(pid, who), None)
            await store.add_audit(
                answer_entry(
                    reg, row, BOB, {"ok": True}, status=403, action="refused", reason="a test entry"
                )
            )
        return GatewayAPI(Gateway(store, AgentPool([], 5.0), settings))

    api = asyncio.run(make())
    yield api
    asyncio.run(api.gateway.close())


def call(
    api: GatewayAPI, route: str, caller: Caller, method: str = "GET", *args: str, **query: str
) -> tuple[int, Any, str]:
    reply = asyncio.run(api.handle(route, caller, ApiRequest(method, args, query)))
    return reply.status, reply.body, reply.media


def _listed(api: GatewayAPI, caller: Caller, **query: str) -> list[str]:
    status, body, _ = call(api, "prompts", caller, **query)
    assert status == 200, body
    return sorted(p["prompt_id"] for p in body["prompts"])


def test_on_a_hub_each_caller_sees_what_they_may_answer_and_their_own(hub_api: Any) -> None:
    assert _listed(hub_api, ALICE) == ["p-any", "p-carol", "p-two"]  # she registered it
    assert _listed(hub_api, BOB) == ["p-any", "p-two"]
    assert _listed(hub_api, CAROL) == ["p-any", "p-carol", "p-two"]
    assert _listed(hub_api, DORA) == ["p-any", "p-carol", "p-two"]  # an administrator
    assert _listed(hub_api, BOB, responder="carol") == ["p-any", "p-two"]  # not p-carol
    assert _listed(hub_api, ALICE, responder="me") == ["p-any", "p-two"]


def test_on_a_hub_the_task_list_is_the_callers_own(hub_api: Any) -> None:
    assert [t["id"] for t in call(hub_api, "tasks", ALICE)[1]["tasks"]] == ["r1"]
    assert call(hub_api, "tasks", BOB)[1]["tasks"] == []
    assert [t["id"] for t in call(hub_api, "tasks", DORA)[1]["tasks"]] == ["r1"]


def test_the_audit_trail_is_for_administrators_and_the_registrant(hub_api: Any) -> None:
    status, body, _ = call(hub_api, "audit", ALICE)
    assert status == 200 and len(body["entries"]) == 3 and body["after"] == 3
    assert call(hub_api, "audit", BOB)[1]["entries"] == []  # he answered; not his task
    status, body, _ = call(hub_api, "audit", BOB, registration="r1")
    assert status == 403 and "registered this task" in body["message"]
    assert call(hub_api, "audit", DORA, registration="r1")[0] == 200
    assert call(hub_api, "audit", DORA, registration="nope")[0] == 404
    status, text, media = call(hub_api, "audit", DORA, format="jsonl", after="1", limit="1")
    assert (status, media) == (200, "application/x-ndjson")
    (line,) = text.splitlines()
    assert json.loads(line)["id"] == 2


@pytest.mark.parametrize(
    "query",
    [
        {"format": "xml"},
        {"limit": "0"},
        {"limit": "100001"},
        {"after": "-1"},
        {"after": "nan"},
        {"limit": "ten"},
    ],
)
def test_hostile_audit_arguments_get_400(hub_api: Any, query: dict[str, str]) -> None:
    status, body, _ = call(hub_api, "audit", DORA, **query)
    assert status == 400 and body["error"] == 400


def test_a_method_a_route_does_not_answer_is_405_naming_those_it_does(hub_api: Any) -> None:
    status, body, _ = call(hub_api, "tasks", ALICE, "DELETE")
    assert status == 405 and "GET, POST" in body["message"]
    assert call(hub_api, "audit", DORA, "POST")[0] == 405
    assert GatewayAPI.methods("answer") == ["POST"]


def test_on_a_hub_a_task_with_nothing_for_the_caller_is_not_theirs_to_know_of(
    hub_api: Any,
) -> None:
    store = hub_api.gateway.store

    async def add() -> None:
        await store.add_registration(
            Registration("r2", "http://agent.invalid", "t2", "alice", time.time(), "alice")
        )
        await store.see_prompt("r2", "p-c2", None, _envelope("p-c2", ["specific:carol"]), None)

    asyncio.run(add())
    for caller in (ALICE, CAROL, DORA):  # the registrant, the responder, an administrator
        status, body, _ = call(hub_api, "task", caller, "GET", "r2")
        assert status == 200 and [p["prompt_id"] for p in body["prompts"]] == ["p-c2"], body
    status, body, _ = call(hub_api, "task", BOB, "GET", "r2")
    assert status == 404 and body["message"] == "no registered task with id 'r2'"
    assert call(hub_api, "task", BOB, "GET", "nope")[1]["message"] == (
        "no registered task with id 'nope'"
    )  # the same words as an id that does not exist
    assert call(hub_api, "task", BOB, "GET", "r1")[0] == 200  # r1 has prompts for him
