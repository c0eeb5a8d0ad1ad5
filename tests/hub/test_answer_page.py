"""The answer page on a real JupyterHub: served by the hitl service behind the hub's
login, with nobody's server started; one-click confirm pages answer once, as the person
the hub says is logged in, and refuse what S-3 refuses.

A browser is an httpx client with a cookie jar that follows redirects (as in
``test_handlers.py``); the Chromium test clicks Confirm on a desk and on a phone.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from hitl_nb.client import GatewayClient, GatewayInfo
from hitl_nb.mock_agent import MockAgent
from tests.helpers import lab
from tests.helpers.hub import Hub
from tests.helpers.tasks import answers_at_agent, start_task

pytestmark = pytest.mark.kernel

CONFIG = re.compile(r'<script id="hitl-page-config" type="application/json">(.*?)</script>')
HIDDEN = re.compile(r'name="_xsrf" value="([^"]+)"')


def _words(text: str) -> str:
    return html.unescape(" ".join(re.sub(r"<[^>]+>", " ", text).split()))


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


@contextmanager
def browser_at(hub: Hub, user: str, path: str) -> Iterator[tuple[httpx.Client, httpx.Response]]:
    """A browser that opens ``path`` logged out, signs in on the hub's login page it is
    sent to, and is brought back: the client and the page it ends on."""
    with httpx.Client(base_url=hub.url, follow_redirects=True, timeout=60) as browser:
        login = browser.get(path)
        assert "/hub/login" in str(login.url), login.url
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', login.text)
        assert xsrf, login.text[:2000]
        page = browser.post(
            str(login.url),
            data={"username": user, "password": "any", "_xsrf": xsrf.group(1)},
        )
        yield browser, page


def _register(hub: Hub, agent: MockAgent, scenario: str, **options: Any) -> tuple[Any, str, str]:
    task = asyncio.run(start_task(agent.url, scenario, **options))
    alice = GatewayInfo(hub.service, hub.user_token("alice"), "alice", hub.service + "api/")
    with GatewayClient(alice) as gw:
        reg = gw.register(agent.url, task.id)
    (prompt,) = reg["prompts"]
    return task, reg["id"], prompt["prompt_id"]


def _server_of(hub: Hub, user: str) -> Any:
    with hub.admin() as admin:
        model = admin.get(f"users/{user}").json()
    return (model.get("servers") or {}).get("")


def _confirm(browser: httpx.Client, path: str, choice: str = "0") -> httpx.Response:
    shown = browser.get(path, params={"choice": choice})
    assert shown.status_code == 200, _words(shown.text)
    (field,) = HIDDEN.findall(shown.text)
    return browser.post(path, params={"choice": choice}, data={"_xsrf": html.unescape(field)})


def test_bob_opens_his_link_logged_out_and_gets_the_page_with_his_server_never_started(
    hub: Hub, agent: MockAgent
) -> None:
    assert _server_of(hub, "bob") is None
    _, reg, pid = _register(hub, agent, "specific", responder="bob")
    path = f"/services/hitl/answer/prompt/{reg}/{pid}"
    with browser_at(hub, "bob", path) as (_, page):
        assert page.status_code == 200, page.text[:2000]
        assert urlsplit(str(page.url)).path == path  # back to the page he asked for
        assert page.headers["Cache-Control"] == "no-store"
        assert "default-src 'self'" in page.headers["Content-Security-Policy"]
        config = json.loads(CONFIG.search(page.text).group(1))  # type: ignore[union-attr]
        assert config["me"]["name"] == "bob"
        assert config["prompt"] == {"registration": reg, "prompt_id": pid}
        assert config["api"] == "/services/hitl/api/" and config["page"] == "/services/hitl/answer/"
        lab_link = urlsplit(config["lab"])
        assert lab_link.path == "/hub/user-redirect/lab"
        assert parse_qs(lab_link.query) == {"hitl-registration": [reg], "hitl-prompt": [pid]}
    assert _server_of(hub, "bob") is None  # the page never started his server


def test_a_confirm_post_answers_specific_bob_once_and_a_get_answered_nothing(
    hub: Hub, agent: MockAgent
) -> None:
    task, reg, pid = _register(hub, agent, "specific", responder="bob")
    path = f"/services/hitl/answer/confirm/{reg}/{pid}"
    with browser_at(hub, "bob", path + "?choice=0") as (browser, page):
        assert page.status_code == 200
        words = _words(page.text)
        assert "You are answering as bob" in words and "Confirm: Approve: Yes" in words
        browser.get(path, params={"choice": "0"})
        assert asyncio.run(answers_at_agent(agent.url, task.id)) == []  # GETs answer nothing
        # without the form's token: refused, nothing forwarded
        bare = browser.post(path, params={"choice": "0"})
        assert bare.status_code == 403 and "security token" in _words(bare.text)
        wrong = browser.post(path, params={"choice": "0"}, data={"_xsrf": "made-up"})
        assert wrong.status_code == 403
        assert asyncio.run(answers_at_agent(agent.url, task.id)) == []
        done = _confirm(browser, path)
        assert done.status_code == 200 and "Answer accepted" in _words(done.text)
        again = browser.post(
            path, params={"choice": "1"}, data={"_xsrf": HIDDEN.findall(page.text)[0]}
        )
        assert again.status_code == 409 and "Already answered" in _words(again.text)
    assert asyncio.run(answers_at_agent(agent.url, task.id)) == [
        {"prompt_id": pid, "payload": {"approve": True}}
    ]
    assert _server_of(hub, "bob") is None


def test_bob_is_refused_on_carols_prompt_and_nothing_is_forwarded(
    hub: Hub, agent: MockAgent
) -> None:
    task, reg, pid = _register(hub, agent, "specific", responder="carol")
    path = f"/services/hitl/answer/confirm/{reg}/{pid}"
    with browser_at(hub, "bob", "/services/hitl/answer/") as (browser, page):
        assert page.status_code == 200
        token = json.loads(CONFIG.search(page.text).group(1))["xsrf"]  # type: ignore[union-attr]
        shown = browser.get(path, params={"choice": "0"})
        assert shown.status_code == 404 and "<form" not in shown.text  # not his to see
        posted = browser.post(path, params={"choice": "0"}, data={"_xsrf": token})
        assert posted.status_code == 403, _words(posted.text)
        assert "not yours to answer" in _words(posted.text)
    assert asyncio.run(answers_at_agent(agent.url, task.id)) == []


def test_alice_and_carol_reach_a_consensus_of_two_by_two_confirms(
    hub: Hub, agent: MockAgent
) -> None:
    task, reg, pid = _register(hub, agent, "consensus", n=2)
    path = f"/services/hitl/answer/confirm/{reg}/{pid}"
    with browser_at(hub, "alice", path + "?choice=0") as (browser, _):
        first = _confirm(browser, path)
        assert first.status_code == 202 and "1 of 2 agreeing" in _words(first.text)
    assert asyncio.run(answers_at_agent(agent.url, task.id)) == []
    with browser_at(hub, "carol", path + "?choice=0") as (browser, _):
        second = _confirm(browser, path)
        assert second.status_code == 200 and "agreed by alice, carol" in _words(second.text)
    assert asyncio.run(answers_at_agent(agent.url, task.id)) == [
        {"prompt_id": pid, "payload": {"approve": True}}
    ]


@pytest.mark.slow
@pytest.mark.browser
def test_bob_confirms_in_chromium_on_a_desk_and_on_a_phone(
    chromium: lab.Chromium, hub: Hub, agent: MockAgent, tmp_path: Path
) -> None:
    shots = Path(os.environ.get("HITL_NB_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    for name, (width, height) in {"desk": (1280, 800), "phone": (375, 667)}.items():
        task, reg, pid = _register(hub, agent, "specific", responder="bob")
        link = f"{hub.url}services/hitl/answer/confirm/{reg}/{pid}?choice=0"
        with chromium(width, height) as context:
            page = context.new_page()
            page.goto(link)
            page.fill("input[name=username]", "bob")
            page.fill("input[name=password]", "any")
            page.click("input[type=submit], button[type=submit]")
            button = page.locator("button.hitl-page-confirm")
            button.wait_for(timeout=60_000)
            assert "You are answering as bob" in page.inner_text("body")
            assert asyncio.run(answers_at_agent(agent.url, task.id)) == []
            wide = page.evaluate("() => document.documentElement.scrollWidth")
            assert wide <= width, f"{name}: the page scrolls sideways ({wide} px)"
            page.screenshot(path=str(shots / f"answer-confirm-{name}.png"), full_page=True)
            button.click()
            page.get_by_text("Answer accepted").wait_for(timeout=60_000)
            page.screenshot(path=str(shots / f"answer-confirmed-{name}.png"), full_page=True)
        assert asyncio.run(answers_at_agent(agent.url, task.id)) == [
            {"prompt_id": pid, "payload": {"approve": True}}
        ]
    assert _server_of(hub, "bob") is None
