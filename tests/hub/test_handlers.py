"""The hub service's pages and routes as a browser and an agent meet them, through the
hub's proxy: the hub's login and OAuth, the cookie and its XSRF token, push without a
login.

A browser here is an httpx client with a cookie jar, following redirects as a browser
does: it logs in on the hub's own login page (DummyAuthenticator), opens the service,
is sent through the hub's OAuth and back with the service's cookie.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from hitl_nb.client import HitlClient
from hitl_nb.mock_agent import MockAgent
from tests.helpers.hub import Hub
from tests.helpers.tasks import start_task
from tests.helpers.until import until

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


@contextmanager
def logged_in(hub: Hub, user: str) -> Iterator[httpx.Client]:
    """A browser signed in to the hub as ``user`` that has opened the service once."""
    with httpx.Client(base_url=hub.url, follow_redirects=True, timeout=60) as browser:
        page = browser.get("hub/login")
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
        assert xsrf, page.text[:2000]
        r = browser.post(
            "hub/login",
            params={"next": "/services/hitl/"},
            data={"username": user, "password": "any", "_xsrf": xsrf.group(1)},
        )
        assert r.status_code == 200 and str(r.url).endswith("/services/hitl/"), (r.url, r.text)
        yield browser


def test_a_browser_signs_in_through_the_hub_and_the_page_says_who_it_is(hub: Hub) -> None:
    with logged_in(hub, "bob") as browser:
        page = browser.get("services/hitl/")
        assert page.status_code == 200
        assert "You are signed in as <strong>bob</strong>" in page.text
        assert "service-hitl" in browser.cookies  # the service's own OAuth cookie
        me = browser.get("services/hitl/api/me")  # a read needs no XSRF token
        assert me.status_code == 200 and me.json()["name"] == "bob"
    # Without a login the page sends a person to the hub's login, never serves it.
    r = httpx.get(hub.public_service, timeout=60)
    assert r.status_code == 302 and "/hub/api/oauth2/authorize" in r.headers["Location"]


def test_a_cookie_post_without_the_xsrf_token_is_403_and_changes_nothing(
    hub: Hub, agent: MockAgent
) -> None:
    task = asyncio.run(start_task(agent.url, "approval"))
    body = {"agent_url": agent.url, "task_id": task.id}
    with logged_in(hub, "carol") as browser:
        before = browser.get("services/hitl/api/tasks").json()["tasks"]
        r = browser.post("services/hitl/api/tasks", json=body)
        assert r.status_code == 403, r.text
        r = browser.post("services/hitl/api/tasks", json=body, headers={"X-XSRFToken": "made-up"})
        assert r.status_code == 403
        assert browser.get("services/hitl/api/tasks").json()["tasks"] == before
        # The page's own token (the _xsrf cookie it set) is what a page's script sends.
        token = browser.cookies.get("_xsrf", path="/services/hitl/")
        r = browser.post("services/hitl/api/tasks", json=body, headers={"X-XSRFToken": token})
        assert r.status_code == 201, r.text
        assert r.json()["registered_by"] == "carol"


def test_the_oauth_callback_refuses_a_made_up_return(hub: Hub) -> None:
    r = httpx.get(
        hub.public_service + "oauth_callback", params={"code": "x", "state": "y"}, timeout=60
    )
    assert r.status_code in (400, 403), r.text
    r = httpx.get(hub.public_service + "oauth_callback", timeout=60)
    assert r.status_code == 400


def _push_url(hub: Hub, reg_id: str) -> str:
    return f"{hub.public_service}push/{reg_id}"


def test_agents_push_through_the_hubs_proxy_with_the_tasks_secret_and_no_login(
    hub: Hub, agent: MockAgent
) -> None:
    async def working() -> str:
        async with HitlClient(agent.url) as client:
            task = await client.send(
                {"scenario": "approval", "start_delay_seconds": 1.5}, return_immediately=True
            )
        return str(task.id)  # type: ignore[union-attr]

    task_id = asyncio.run(working())
    alice = {"Authorization": f"token {hub.user_token('alice')}"}
    r = httpx.post(
        hub.service + "api/tasks",
        headers=alice,
        timeout=60,
        json={"agent_url": agent.url, "task_id": task_id},
    )
    assert r.status_code == 201, r.text
    reg = r.json()

    async def configs() -> list[Any]:
        async with HitlClient(agent.url) as client:
            return await client.list_push_configs(task_id)

    # The service asked the agent to push to its address through the hub's proxy.
    (config,) = until(lambda: asyncio.run(configs()), what="the push configuration")
    assert config.url == _push_url(hub, reg["id"])

    def listed() -> list[dict[str, Any]]:
        got = httpx.get(hub.service + "api/prompts", headers=alice, timeout=60).json()
        return [p for p in got["prompts"] if p["task_id"] == task_id]

    until(listed, what="the prompt the agent pushed")
    update = {
        "statusUpdate": {
            "taskId": task_id,
            "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING", "timestamp": "2099-01-01T00:00:00Z"},
        }
    }
    content = json.dumps(update)
    headers = {"Content-Type": "application/a2a+json"}
    # No secret, a wrong one, a hub token instead: refused, and the prompt stays.
    for extra, status in [({}, 401), ({"X-A2A-Notification-Token": "nope"}, 403), (alice, 401)]:
        r = httpx.post(
            _push_url(hub, reg["id"]), headers={**headers, **extra}, content=content, timeout=60
        )
        assert r.status_code == status, (extra.keys(), r.text)
    assert listed()
    # With the task's secret, through the proxy, no hub login: believed (the agent
    # moved on, so the prompt closes).
    r = httpx.post(
        _push_url(hub, reg["id"]),
        content=content,
        timeout=60,
        headers={**headers, "X-A2A-Notification-Token": str(config.token)},
    )
    assert r.status_code == 200, r.text
    assert listed() == []
