"""The gateway under hostile input: no user, bad bodies, agents it must not reach."""

from __future__ import annotations

from typing import Any

import pytest

from hitl_nb.mock_agent import MockAgent
from hitl_nb.server import MAX_REQUEST_BYTES
from hitl_nb.spec import EXTENSION_URI
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.tiny_server import Conn, Request, serve

pytestmark = pytest.mark.kernel


async def test_unauthenticated_requests_get_403(api: Any) -> None:
    for method, path in [
        ("GET", "hitl/api/me"),
        ("GET", "hitl/api/tasks"),
        ("POST", "hitl/api/tasks"),
        ("GET", "hitl/api/tasks/abc"),
        ("POST", "hitl/api/tasks/abc/prompts/def/answer"),
    ]:
        status, _ = await api(method, path, user=None, body={} if method == "POST" else None)
        assert status == 403, (method, path)


async def test_malformed_and_oversized_bodies_get_clear_4xx(api: Any, agent: MockAgent) -> None:
    cases: list[tuple[bytes, dict[str, str], int, str]] = [
        (b"{not json", {}, 400, "not acceptable JSON"),
        (b'{"agent_url": "x", "agent_url": "y", "task_id": "t"}', {}, 400, "duplicate"),
        (b"[1, 2]", {}, 400, "JSON object"),
        (b"[" * 100 + b"]" * 100, {}, 400, "not acceptable JSON"),
        (b'{"agent_url": "http://x"}', {}, 400, "task_id is required"),
        (b'{"agent_url": 5, "task_id": "t"}', {}, 400, "agent_url"),
        (b'{"agent_url": "http://x", "task_id": ""}', {}, 400, "task_id"),
        (b'{"agent_url": "http://x", "task_id": "t", "who": "bob"}', {}, 400, "unknown member"),
        (b"a=b", {"Content-Type": "application/x-www-form-urlencoded"}, 415, "application/json"),
        (b" " * (MAX_REQUEST_BYTES + 1), {}, 413, "limit"),
    ]
    for raw, headers, status, words in cases:
        got, body = await api("POST", "hitl/api/tasks", raw=raw, headers=headers)
        assert got == status, (raw[:40], body)
        assert words.lower() in body["message"].lower(), body


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "ftp://127.0.0.1/", "http://user:pw@127.0.0.1/", "javascript:x", "/rel"],
)
async def test_agent_urls_that_are_not_plain_http_are_refused(api: Any, url: str) -> None:
    status, body = await api("POST", "hitl/api/tasks", body={"agent_url": url, "task_id": "t"})
    assert status == 403 and "agent" in body["message"]


async def test_answers_to_unknown_things_get_404(api: Any, agent: MockAgent) -> None:
    status, body = await api("POST", "hitl/api/tasks/nope/prompts/p/answer", body={"payload": {}})
    assert status == 404 and "nope" in body["message"]
    task = await start_task(agent.url, "approval")
    status, reg = await api(
        "POST", "hitl/api/tasks", body={"agent_url": agent.url, "task_id": task.id}
    )
    status, body = await api(
        "POST", f"hitl/api/tasks/{reg['id']}/prompts/other/answer", body={"payload": {}}
    )
    assert status == 404
    status, body = await api(
        "POST", "hitl/api/tasks", body={"agent_url": agent.url, "task_id": "no-such-task"}
    )
    assert status == 404 and "no-such-task" in body["message"]
    (prompt,) = reg["prompts"]
    path = f"hitl/api/tasks/{reg['id']}/prompts/{prompt['prompt_id']}/answer"
    for payload in ([], "yes", None, 3):
        status, body = await api("POST", path, body={"payload": payload})
        assert status == 400 and "payload" in body["message"]
    assert await answers_at_agent(agent.url, task.id) == []


async def test_an_unreachable_agent_is_a_502_not_a_hang(api: Any) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    unreachable = {"agent_url": f"http://127.0.0.1:{port}", "task_id": "t"}
    status, body = await api("POST", "hitl/api/tasks", body=unreachable)
    assert status == 502 and "could not read task" in body["message"]


def _restrict(gateway: Any, hosts: list[str]) -> None:
    gateway.settings.allowed_agent_hosts = hosts
    gateway.pool.allowed_hosts = hosts


async def test_redirects_are_not_followed(api: Any) -> None:
    hits: list[str] = []

    def target(req: Request, conn: Conn) -> None:
        hits.append(req.path)
        conn.answer({})

    with serve(target) as inner:

        def redirect(req: Request, conn: Conn) -> None:
            conn.answer(b"", status=302, Location=inner.url + req.path)

        with serve(redirect) as outer:
            status, body = await api(
                "POST", "hitl/api/tasks", body={"agent_url": outer.url, "task_id": "t"}
            )
    assert status == 502 and "redirect" in body["message"].lower(), body
    assert hits == []


async def test_the_admin_allow_list_holds_for_urls_and_card_interfaces(
    api: Any, gateway: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "approval")
    _restrict(gateway, ["agents.example.org", "*.trusted.example"])
    status, body = await api(
        "POST", "hitl/api/tasks", body={"agent_url": agent.url, "task_id": task.id}
    )
    assert status == 403 and "allowed_agent_hosts" in body["message"]
    # A card on an allowed host that points its interfaces elsewhere is refused too.
    hits: list[str] = []
    card = {
        "name": "sly",
        "description": "points elsewhere",
        "version": "1",
        "supportedInterfaces": [
            {"url": agent.url + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"extensions": [{"uri": EXTENSION_URI, "required": False}]},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }

    def sly(req: Request, conn: Conn) -> None:
        hits.append(req.path)
        conn.answer(card)

    with serve(sly) as server:
        _restrict(gateway, ["127.0.0.1:" + server.url.rsplit(":", 1)[1]])
        status, body = await api(
            "POST", "hitl/api/tasks", body={"agent_url": server.url, "task_id": task.id}
        )
    assert status == 403 and "not allowed" in body["message"], body
    assert hits and all("agent-card" in h for h in hits)
    assert await answers_at_agent(agent.url, task.id) == []


async def test_a_lone_surrogate_is_a_400_at_every_route_that_reads_json(
    api: Any, agent: MockAgent
) -> None:
    """It was a 500 from an answer (``payload_bounds`` met an UnicodeEncodeError)."""
    task = await start_task(agent.url, "approval")
    status, reg = await api(
        "POST", "hitl/api/tasks", body={"agent_url": agent.url, "task_id": task.id}
    )
    (prompt,) = reg["prompts"]
    answer = f"hitl/api/tasks/{reg['id']}/prompts/{prompt['prompt_id']}/answer"
    cases = [
        ("hitl/api/tasks", rb'{"agent_url": "http://x", "task_id": "\ud800"}'),
        ("hitl/api/tasks", rb'{"agent_url": "http://x", "task_id": "t", "\uDC00": 1}'),
        (answer, rb'{"payload": {"approve": "\uD83D"}}'),
        (answer, rb'{"payload": {"approve": true, "\udfff": [1]}}'),
        (
            "hitl/lab/places",
            rb'{"agent_url": "\ud800", "task_id": "t", "kernel_id": "k", "cell_id": "c"}',
        ),
    ]
    for path, raw in cases:
        got, body = await api("POST", path, raw=raw)
        assert got == 400, (path, raw, body)
        assert "lone UTF-16 surrogate" in body["message"], body
    assert await answers_at_agent(agent.url, task.id) == []
    # A pair is one character: read, and refused only as the wrong type.
    got, body = await api("POST", answer, raw=rb'{"payload": {"approve": "\ud83d\ude00"}}')
    assert got == 422, body
    got, body = await api("POST", answer, body={"payload": {"approve": True}})
    assert got == 200, body
