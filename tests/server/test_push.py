"""Push notifications into the gateway: the watcher configures them for agents that
advertise them, prompts arrive by push (polling slowed to an hour, nothing streams),
and every unauthenticated or malformed push is refused with a clear 4xx and changes
nothing."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from hitl_nb.a2a import Task, TaskState, TaskStatus
from hitl_nb.client import GatewayClient, GatewayInfo, HitlClient
from hitl_nb.gateway import AgentPool, Caller, Gateway, GatewaySettings, Refused
from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.mock_agent import MockAgent
from hitl_nb.spec import EXTENSION_URI
from tests.helpers.jupyter_process import jupyter_server
from tests.helpers.jupyter_users import auth
from tests.helpers.until import until, until_async

ENVELOPE_KEY = EXTENSION_URI


async def _working_task(url: str, delay: float = 1.0) -> str:
    async with HitlClient(url) as client:
        task = await client.send(
            {"scenario": "approval", "start_delay_seconds": delay}, return_immediately=True
        )
    return str(task.id)  # type: ignore[union-attr]


async def _inbox(api: Any) -> list[dict[str, Any]]:
    status, body = await api("GET", "hitl/api/prompts")
    assert status == 200, body
    return list(body["prompts"])


async def _pushed_registration(api: Any, gateway: Any, agent: MockAgent) -> tuple[dict, str]:
    """A task registered while it works, with push set up; returns (registration, secret)."""
    gateway.watchers.poll_interval = 3600.0  # only a push can bring the prompt
    # The agent asks after 5 s: registering and setting up push must come first, or the
    # watcher's read after the setup finds the prompt and no push is ever sent for it
    # (at 1 s, a loaded CI machine was once too slow).
    task_id = await _working_task(agent.url, delay=5.0)
    status, reg = await api(
        "POST", "hitl/api/tasks", body={"agent_url": agent.url, "task_id": task_id}
    )
    assert status == 201 and reg["prompts"] == [], reg

    async def pushed() -> bool:
        return reg["id"] in gateway.watchers.pushed

    await until_async(pushed)
    assert not [p for p in await _inbox(api) if p["task_id"] == task_id], "asked before push"
    async with HitlClient(agent.url) as client:
        (config,) = await client.list_push_configs(task_id)
    assert config.url.endswith(f"/hitl/push/{reg['id']}")
    assert config.token and config.authorization() == f"Bearer {config.token}"

    async def asked() -> bool:  # the agent's own prompt, by push: the state is settled
        return any(p["task_id"] == task_id for p in await _inbox(api))

    await until_async(asked)
    return reg, config.token


@pytest.mark.kernel
async def test_a_prompt_arrives_by_push(api: Any, gateway: Any, agent: MockAgent) -> None:
    reg, _secret = await _pushed_registration(api, gateway, agent)  # it waits for the prompt

    async def listed() -> list[dict[str, Any]]:
        return [p for p in await _inbox(api) if p["task_id"] == reg["task_id"]]

    (prompt,) = await until_async(listed)
    assert prompt["prompt"].startswith("Approve")
    assert gateway.push.received[reg["id"]] >= 1
    assert not gateway.watchers.streaming  # nothing held open for a pushing agent
    # Answered through the gateway, the task completes; the push closes the prompt.
    path = f"hitl/api/tasks/{reg['id']}/prompts/{prompt['prompt_id']}/answer"
    status, body = await api("POST", path, body={"payload": {"approve": True}})
    assert status == 200, body

    async def gone() -> bool:
        return not await listed()

    await until_async(gone)


@pytest.mark.kernel
async def test_a_read_that_crosses_a_push_does_not_close_the_new_prompt(
    api: Any, gateway: Any, agent: MockAgent
) -> None:
    reg, _secret = await _pushed_registration(api, gateway, agent)
    (prompt,) = [p for p in await _inbox(api) if p["task_id"] == reg["task_id"]]
    registration = await gateway.store.registration(reg["id"])
    # A GetTask answered before the agent asked (WORKING, an older timestamp), recorded
    # after the push that brought the prompt: it must not close the prompt.
    older = Task(reg["task_id"], "c", TaskStatus(TaskState.WORKING, None, "2000-01-01T00:00:00Z"))
    await gateway._see(registration, older)
    assert [p["prompt_id"] for p in await _inbox(api)] == [prompt["prompt_id"]]
    # A newer sighting without the prompt does close it (the agent moved on).
    newer = Task(reg["task_id"], "c", TaskStatus(TaskState.WORKING, None, "2999-01-01T00:00:00Z"))
    await gateway._see(registration, newer)
    assert await _inbox(api) == []


@pytest.mark.kernel
async def test_an_agent_without_push_is_watched_as_before(api: Any, gateway: Any) -> None:
    gateway.watchers.poll_interval = 0.2
    with MockAgent(push_notifications=False) as agent:
        task_id = await _working_task(agent.url)
        status, reg = await api(
            "POST", "hitl/api/tasks", body={"agent_url": agent.url, "task_id": task_id}
        )
        assert status == 201

        async def listed() -> list[dict[str, Any]]:
            return [p for p in await _inbox(api) if p["task_id"] == task_id]

        await until_async(listed)
        assert reg["id"] not in gateway.watchers.pushed
        assert gateway.push.received[reg["id"]] == 0


def _status_update(task_id: str, prompt_id: str, text: str) -> dict[str, Any]:
    envelope = {
        "prompt_id": prompt_id,
        "prompt": text,
        "response_schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    }
    message = {
        "messageId": "m1",
        "role": "ROLE_AGENT",
        "parts": [{"text": text}],
        "metadata": {ENVELOPE_KEY: envelope},
    }
    return {
        "statusUpdate": {
            "taskId": task_id,
            "contextId": "c",
            "status": {
                "state": "TASK_STATE_INPUT_REQUIRED",
                "message": message,
                "timestamp": "2099-01-01T00:00:00Z",
            },
        }
    }


HOSTILE: dict[str, tuple[Any, int, str]] = {
    # name: (how to build (headers, body) from (secret, registration), status, words)
    "no-token": (lambda s, r: ({}, _forged(r)), 401, "no token"),
    "wrong-token": (
        lambda s, r: ({"X-A2A-Notification-Token": s[:-1] + "x"}, _forged(r)),
        403,
        "wrong",
    ),
    "wrong-bearer": (lambda s, r: ({"Authorization": "Bearer nope"}, _forged(r)), 403, "wrong"),
    "jupyter-token-is-not-enough": (lambda s, r: ({**auth("alice")}, _forged(r)), 401, "no token"),
    "other-task": (
        lambda s, r: (
            {"X-A2A-Notification-Token": s},
            json.dumps(_status_update("someone-else", _PID, "Forged?")),
        ),
        400,
        "about task",
    ),
    "not-json": (lambda s, r: ({"X-A2A-Notification-Token": s}, "{nope"), 400, "JSON"),
    "json-array": (lambda s, r: ({"X-A2A-Notification-Token": s}, "[]"), 400, "object"),
    "not-a-stream-response": (
        lambda s, r: ({"X-A2A-Notification-Token": s}, '{"hello": 1}'),
        400,
        "not an A2A task update",
    ),
    "two-events": (
        lambda s, r: (
            {"X-A2A-Notification-Token": s},
            json.dumps({**json.loads(_forged(r)), "task": {"id": r["task_id"]}}),
        ),
        400,
        "not an A2A task update",
    ),
    "xml": (
        lambda s, r: ({"X-A2A-Notification-Token": s, "Content-Type": "text/xml"}, _forged(r)),
        415,
        "JSON",
    ),
    "oversize": (
        lambda s, r: (
            {"X-A2A-Notification-Token": s},
            '{"pad": "' + "x" * (1024 * 1024 + 10) + '"}',
        ),
        413,
        "limit",
    ),
    # A lone UTF-16 surrogate is no character: refused as JSON (it was a 500 later on).
    "lone-surrogate-in-a-value": (
        lambda s, r: ({"X-A2A-Notification-Token": s}, _forged(r).replace("money?", "\\ud800")),
        400,
        "lone UTF-16 surrogate",
    ),
    "lone-surrogate-in-a-key": (
        lambda s, r: (
            {"X-A2A-Notification-Token": s},
            _forged(r).replace('"contextId"', '"\\uDC00": 1, "contextId"'),
        ),
        400,
        "lone UTF-16 surrogate",
    ),
    # One byte over the limit, with its length declared or chunked: 413 either way.
    "one-byte-over": (
        lambda s, r: ({"X-A2A-Notification-Token": s}, _padded(_MAX + 1)),
        413,
        "limit",
    ),
    "one-byte-over-chunked": (
        lambda s, r: ({"X-A2A-Notification-Token": s}, _chunked(_padded(_MAX + 1))),
        413,
        "limit",
    ),
}
_PID = "00000000-0000-4000-8000-000000000001"
_MAX = 1024 * 1024


def _padded(size: int) -> bytes:
    """A JSON object of exactly ``size`` bytes."""
    return b'{"pad": "' + b"x" * (size - 11) + b'"}'


async def _chunked(body: bytes) -> Any:
    """``body`` in 64 KiB chunks (sent with Transfer-Encoding: chunked)."""
    for i in range(0, len(body), 65536):
        yield body[i : i + 65536]


def _forged(reg: dict[str, Any]) -> str:
    return json.dumps(_status_update(reg["task_id"], _PID, "Wire the money?"))


@pytest.mark.kernel
async def test_hostile_pushes_are_refused_and_change_nothing(
    api: Any, gateway: Any, agent: MockAgent, server_url: str
) -> None:
    reg, secret = await _pushed_registration(api, gateway, agent)
    before = (await _inbox(api), gateway.push.received[reg["id"]])
    async with httpx.AsyncClient() as http:
        for name, (build, status, words) in sorted(HOSTILE.items()):
            headers, body = build(secret, reg)
            headers = {"Content-Type": "application/a2a+json", **headers}
            r = await http.post(
                f"{server_url}hitl/push/{reg['id']}", headers=headers, content=body, timeout=60
            )
            assert r.status_code == status, (name, r.text)
            assert r.json()["error"] == status and words in r.json()["message"], (name, r.text)
            assert (await _inbox(api), gateway.push.received[reg["id"]]) == before, name
    assert all(p["prompt_id"] != _PID for p in await _inbox(api))


@pytest.mark.kernel
async def test_unknown_registration_wrong_method_and_a_good_push(
    api: Any, gateway: Any, agent: MockAgent, server_url: str
) -> None:
    reg, secret = await _pushed_registration(api, gateway, agent)
    async with httpx.AsyncClient() as http:
        good = {"X-A2A-Notification-Token": secret, "Content-Type": "application/a2a+json"}
        r = await http.post(
            f"{server_url}hitl/push/nope", headers=good, content=_forged(reg), timeout=60
        )
        assert r.status_code == 404 and "no registered task" in r.json()["message"]
        r = await http.get(f"{server_url}hitl/push/{reg['id']}", timeout=60)
        assert r.status_code == 405 and r.headers["Allow"] == "POST"
        # The positive control: the same forged-looking prompt with the right secret
        # (what the agent itself could send) is recorded. Both token headers work.
        for header in ("A2A-Notification-Token", "Authorization"):
            value = secret if header != "Authorization" else f"Bearer {secret}"
            r = await http.post(
                f"{server_url}hitl/push/{reg['id']}",
                headers={header: value, "Content-Type": "application/json"},
                content=_forged(reg),
                timeout=60,
            )
            assert r.status_code == 200, r.text
    listed = await _inbox(api)
    assert any(p["prompt_id"] == _PID for p in listed), listed


async def _answer_at_agent(url: str, task_id: str, prompt_id: str, payload: Any) -> None:
    async with HitlClient(url) as client:
        await client.respond(task_id, prompt_id, payload)


async def _configs(url: str, task_id: str) -> list[Any]:
    async with HitlClient(url) as client:
        return await client.list_push_configs(task_id)


@pytest.mark.kernel
@pytest.mark.slow
def test_end_to_end_the_registering_client_is_gone(tmp_path: Path) -> None:
    """A real server process, polling an hour apart and streaming nothing, so only a
    push can tell it that the agent moved on. The client that registered the task goes
    away; an answer given at the agent directly brings the next prompt, which the
    server lists."""
    alice = auth("alice")
    slow_watch = {
        "HitlServer": {
            "state_dir": str(tmp_path / "state"),
            "poll_interval": 3600,
            "max_streams": 0,
        }
    }

    with MockAgent(store=tmp_path / "agent.sqlite") as agent:

        async def start() -> str:
            async with HitlClient(agent.url) as client:
                task = await client.send({"scenario": "multi-step"})
            return str(task.id)  # type: ignore[union-attr]

        task_id = asyncio.run(start())

        def listed(url: str) -> list[dict[str, Any]]:
            r = httpx.get(url + "hitl/api/prompts", headers=alice, timeout=60)
            assert r.status_code == 200, r.text
            return [p for p in r.json()["prompts"] if p["task_id"] == task_id]

        with jupyter_server(tmp_path, ready_headers=alice, extra_config=slow_watch) as url:
            with GatewayClient(GatewayInfo(url, "alice-token", "test")) as gateway:
                reg = gateway.register(agent.url, task_id)
            (first,) = reg["prompts"]  # seen when registering
            # The registering client is gone. Push is set up for the task...
            until(
                lambda: [
                    c
                    for c in asyncio.run(_configs(agent.url, task_id))
                    if c.url == f"{url}hitl/push/{reg['id']}"
                ]
            )
            # ... so an answer given at the agent brings step 2 to the server's inbox.
            asyncio.run(_answer_at_agent(agent.url, task_id, first["prompt_id"], {"name": "r1"}))
            (second,) = until(
                lambda: [p for p in listed(url) if p["prompt"].startswith("Step 2 of 3")]
            )
            assert [p["prompt_id"] for p in listed(url)] == [second["prompt_id"]]


async def test_a_restarted_gateway_keeps_the_secret_and_tells_the_agent_its_new_address(
    agent: MockAgent, tmp_path: Path
) -> None:
    """The gateway's state file outlives the process: after a restart the same secret
    is accepted, and the agent is given the (new) receiver URL with the same secret."""
    path = tmp_path / "gw.sqlite"

    def gateway_at(base: str) -> Gateway:
        gw = Gateway(SQLiteStore(path), AgentPool([], 5.0), GatewaySettings())
        gw.push_url = lambda reg_id: f"{base}hitl/push/{reg_id}"
        return gw

    task_id = await _working_task(agent.url, delay=30.0)
    first = gateway_at("http://127.0.0.1:9/old/")
    _, reg = await first.register(Caller("alice", "Alice"), agent.url, task_id)

    async def configs_at(base: str) -> list[Any]:
        return [c for c in await _configs(agent.url, task_id) if c.url.startswith(base)]

    (old,) = await until_async(lambda: configs_at("http://127.0.0.1:9/old/"))
    await first.close()
    again = gateway_at("http://127.0.0.1:9/new/")
    await again.start()
    try:
        (new,) = await until_async(lambda: configs_at("http://127.0.0.1:9/new/"))
        assert new.id == old.id and new.token == old.token  # replaced, same secret
        assert len(await _configs(agent.url, task_id)) == 1
        body = json.dumps(_status_update(task_id, _PID, "Still there?")).encode()
        headers = {"Content-Type": "application/a2a+json"}
        with pytest.raises(Refused) as refused:
            await again.push.receive(
                reg["id"], {**headers, "X-A2A-Notification-Token": "not-it"}, body
            )
        assert refused.value.status == 403
        got = await again.push.receive(
            reg["id"], {**headers, "X-A2A-Notification-Token": str(old.token)}, body
        )
        assert got.kind == "status"
        listing = await again.inbox(Caller("alice", "Alice"))
        assert [p["prompt_id"] for p in listing["prompts"]] == [_PID]
    finally:
        await again.close()
