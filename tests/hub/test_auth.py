"""Who the hub service believes: only the hub's word, for a token that may use it.

Against the service's code in this process and the real hub: no credentials (401), a
token the hub does not know, one without the service's scope, a service's token, and
identity headers or body members naming someone else (403 or 400); each refusal leaves
the gateway as it was. Browser cookies (OAuth, XSRF) are in ``test_handlers.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers.hub import ADMIN_TOKEN, Hub
from tests.helpers.tasks import answers_at_agent, start_task

pytestmark = pytest.mark.kernel

ROUTES = [
    ("GET", "api/me"),
    ("GET", "api/tasks"),
    ("POST", "api/tasks"),
    ("GET", "api/tasks/abc"),
    ("GET", "api/prompts"),
    ("GET", "api/audit"),
    ("POST", "api/tasks/abc/prompts/def/answer"),
]
FORGED = {
    "X-Forwarded-User": "bob",
    "X-Remote-User": "bob",
    "X-Jupyterhub-User": "bob",
    "X-Hitl-Responder": "bob",
}


async def _state(gateway: Any) -> tuple[int, int]:
    regs = await gateway.store.registrations()
    return len(regs), len(await gateway.store.audit(None, limit=100_000))


async def test_no_credentials_is_401_with_what_to_do(api: Any, gateway: Any) -> None:
    before = await _state(gateway)
    for method, path in ROUTES:
        status, body = await api(method, path, headers={"Authorization": ""}, body={})
        assert status == 401, (method, path, body)
        assert "sign in to the hub" in body["message"] and "token" in body["message"]
    # Identity headers alone are nobody.
    status, _ = await api("GET", "api/me", headers={"Authorization": "", **FORGED})
    assert status == 401
    assert await _state(gateway) == before


async def test_a_token_the_hub_does_not_know_is_403(api: Any, gateway: Any) -> None:
    before = await _state(gateway)
    for method, path in ROUTES:
        status, body = await api(method, path, user=None, body={})
        assert status == 403, (method, path)
        assert "did not vouch" in body["message"]
    assert await _state(gateway) == before


async def test_a_token_without_the_services_scope_is_403(
    api: Any, gateway: Any, hub: Hub, agent: MockAgent
) -> None:
    narrow = hub.token("alice", scopes=["read:users:name!user=alice"])
    task = await start_task(agent.url, "approval")
    before = await _state(gateway)
    headers = {"Authorization": f"token {narrow}"}
    status, body = await api("GET", "api/me", headers=headers)
    assert status == 403 and "access:services!service=hitl" in body["message"], body
    status, _ = await api(
        "POST", "api/tasks", headers=headers, body={"agent_url": agent.url, "task_id": task.id}
    )
    assert status == 403
    assert await _state(gateway) == before
    # The same person with a token that carries the scope is let in.
    status, me = await api("GET", "api/me", user="alice")
    assert status == 200 and me["name"] == "alice"


async def test_a_services_token_is_not_a_person(api: Any, gateway: Any) -> None:
    before = await _state(gateway)
    headers = {"Authorization": f"token {ADMIN_TOKEN}"}
    for method, path in ROUTES:
        status, body = await api(method, path, headers=headers, body={})
        assert status == 403, (method, path)
    assert "not a person" in body["message"] or "may not use" in body["message"], body
    assert await _state(gateway) == before


async def test_me_names_the_hub_user_and_whether_the_hub_made_them_admin(api: Any) -> None:
    status, me = await api("GET", "api/me", user="bob", headers=FORGED | {"X-Forwarded-User": "x"})
    assert status == 200
    assert me == {"name": "bob", "display_name": "bob", "identified": True, "admin": False}
    status, me = await api("GET", "api/me", user="dora")
    assert status == 200 and me["name"] == "dora" and me["admin"] is True


async def test_a_token_cannot_answer_as_another_user_whatever_the_request_says(
    api: Any, gateway: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "specific", responder="bob")
    status, reg = await api(
        "POST", "api/tasks", user="alice", body={"agent_url": agent.url, "task_id": task.id}
    )
    assert status == 201
    (prompt,) = reg["prompts"]
    path = f"api/tasks/{reg['id']}/prompts/{prompt['prompt_id']}/answer"
    status, body = await api(
        "POST", path, user="alice", headers=FORGED, body={"payload": {"approve": True}}
    )
    assert status == 403 and "bob" in body["message"]
    for member in ("responder", "user", "as"):
        status, body = await api(
            "POST", path, user="alice", body={"payload": {"approve": True}, member: "bob"}
        )
        assert status == 400 and member in body["message"]
    assert await answers_at_agent(agent.url, task.id) == []
    status, done = await api("POST", path, user="bob", body={"payload": {"approve": True}})
    assert status == 200 and done["responders"] == ["bob"]


async def test_other_methods_are_405(api: Any) -> None:
    status, body = await api("PUT", "api/tasks", body={})
    assert status == 405 and "GET, POST" in body["message"]
    status, body = await api("POST", "api/me", body={})
    assert status == 405 and "GET" in body["message"]
