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
from hitl_nb.gateway._push import Refused
from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.gateway._store import Registration
from hitl_nb.spec import RESPONSE_KEY
from tests.gateway.conftest import Opener
from tests.helpers import wire
from tests.helpers.one_prompt import OnePromptAgent

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


# -- NUL characters (U+0000): refused alike on every database ---------------------------
# PostgreSQL's text refuses a NUL (SQLite keeps it): what would go into a text column of
# its own is checked before anything is written; JSON text escapes it (\u0000).


class _NulAgent(OnePromptAgent):
    """Its task's context id holds a NUL, or (``name``) its prompt names such a person."""

    def __init__(self, *, name: str | None = None) -> None:
        super().__init__(keeps_history=True)
        if name is not None:
            self.env = wire.envelope(allowed_responders=[f"specific:{name}"])
            self.prompt_id = self.env["prompt_id"]
        self.context = "ctx-1" if name is not None else "ctx-\x00-1"

    def task(self) -> dict[str, Any]:
        return {**super().task(), "contextId": self.context}


def _on(opener: Opener, agent: OnePromptAgent, go: Any) -> None:
    async def main() -> None:
        settings = GatewaySettings(watch=False, show_all=False, push=False)
        api = GatewayAPI(Gateway(opener(), AgentPool([], 5.0), settings))
        await api.gateway.start()
        try:
            with agent.serve() as server:
                await go(api, server.url)
        finally:
            await api.gateway.close()

    asyncio.run(asyncio.wait_for(main(), 60))


def _post(body: Any, *args: str) -> ApiRequest:
    return ApiRequest("POST", args, {}, json.dumps(body).encode(), "application/json")


@pytest.mark.parametrize(
    ("agent", "words"),
    [
        pytest.param(_NulAgent(), "its context id holds a NUL character", id="context-id"),
        pytest.param(_NulAgent(name="a\x00b"), "specific:'a\\x00b'", id="responder"),
    ],
)
def test_nul_in_what_the_agent_says_is_its_malformed_output(
    opener: Opener, agent: _NulAgent, words: str
) -> None:
    async def go(api: GatewayAPI, url: str) -> None:
        reply = await api.handle("tasks", ALICE, _post({"agent_url": url, "task_id": "t1"}))
        assert reply.status == 502, reply.body
        assert "the agent's" in reply.body["message"] and words in reply.body["message"]
        assert "U+0000" in reply.body["message"] and "nothing" in reply.body["message"]
        assert await api.gateway.store.registrations() == []  # nothing half-written
        # The watcher's and a push's path refuse it too, writing nothing.
        reg = await api.gateway.store.add_registration(
            Registration("r1", url, "t1", "alice", time.time(), "alice")
        )
        assert await api.gateway._refresh_for_watch(reg) is None
        task = await api.gateway._get_task(url, "t1")
        with pytest.raises(Refused) as pushed:
            await api.gateway._see_pushed(reg, task)
        assert pushed.value.status == 400 and words in pushed.value.message
        assert await api.gateway.store.prompts("r1") == []

    _on(opener, agent, go)


@pytest.mark.parametrize("field", ["agent_url", "task_id"])
def test_nul_in_a_registration_is_400_naming_the_field(opener: Opener, field: str) -> None:
    async def go(api: GatewayAPI, url: str) -> None:
        body = {"agent_url": url + "/x", "task_id": "t1"}
        body[field] += "\x00"
        reply = await api.handle("tasks", ALICE, _post(body))
        assert reply.status == 400, reply.body
        assert reply.body["message"].startswith(f"{field} holds a NUL character (U+0000)")
        assert await api.gateway.store.registrations() == []

    _on(opener, OnePromptAgent(keeps_history=True), go)


def test_nul_in_an_answer_is_kept_and_in_a_path_or_caller_refused(opener: Opener) -> None:
    agent = OnePromptAgent(keeps_history=True)

    async def go(api: GatewayAPI, url: str) -> None:
        reply = await api.handle("tasks", ALICE, _post({"agent_url": url, "task_id": "t1"}))
        assert reply.status == 201, reply.body
        reg_id = reply.body["id"]
        for args, caller in [
            ((reg_id + "\x00", agent.prompt_id), BOB),
            ((reg_id, agent.prompt_id + "\x00"), BOB),
            ((reg_id, agent.prompt_id), Caller("b\x00b", "bob")),
        ]:
            refused = await api.handle("answer", caller, _post({"payload": {}}, *args))
            assert refused.status == 400 and "NUL character" in refused.body["message"]
        listed = await api.handle("prompts", BOB, ApiRequest("GET", (), {"agent": "a\x00"}))
        assert listed.status == 400 and "'agent'" in listed.body["message"]
        # A payload is JSON text (\u0000): kept and forwarded as given.
        payload = {"approved": True, "comment": "a\x00b"}
        reply = await api.handle(
            "answer", BOB, _post({"payload": payload}, reg_id, agent.prompt_id)
        )
        assert reply.status == 200 and reply.body["status"] == "forwarded", reply.body
        assert agent.sends[0]["metadata"][RESPONSE_KEY]["payload"] == payload
        fwd = await api.gateway.store.forward(reg_id, agent.prompt_id)
        assert fwd is not None and json.loads(fwd.payload) == payload

    _on(opener, agent, go)
