"""The answer page on a Jupyter server: the shell behind the login, its static files, and
one-click confirm pages (a GET answers nothing; a POST answers once, with its XSRF token;
every bad input a page of its own and nothing forwarded).

A browser here is a jp_fetch with the test login cookie (``tests.helpers.jupyter_users``):
cookie-authenticated, so the server's XSRF rules apply as to a person's browser.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from typing import Any
from urllib.parse import urlencode

import pytest
from tornado.httpclient import HTTPClientError

from hitl_nb.mock_agent import MockAgent
from tests.helpers.jupyter_users import LOGIN_COOKIE, auth
from tests.helpers.tasks import answers_at_agent, start_task

pytestmark = pytest.mark.kernel

CONFIG = re.compile(r'<script id="hitl-page-config" type="application/json">(.*?)</script>')
HIDDEN = re.compile(r'name="_xsrf" value="([^"]+)"')


class Page:
    """One response: status, headers, text."""

    def __init__(self, code: int, headers: Any, text: str) -> None:
        self.code = code
        self.headers = headers
        self.text = text

    @property
    def words(self) -> str:
        """The page's text without markup, entities read."""
        return html.unescape(" ".join(re.sub(r"<[^>]+>", " ", self.text).split()))


@pytest.fixture
def fetch(gateway: Any, jp_fetch: Any) -> Any:
    async def go(
        path: str,
        *,
        user: str | None = None,
        cookie: str | None = None,
        token: str | None = None,
        method: str = "GET",
        body: str | None = None,
        params: dict[str, str] | None = None,
    ) -> Page:
        headers = {"Authorization": auth(token)["Authorization"] if token else ""}
        jar = [f"{LOGIN_COOKIE}={user}-token"] if user else []
        if cookie:
            jar.append(cookie)
        if jar:
            headers["Cookie"] = "; ".join(jar)
        kwargs: dict[str, Any] = {"method": method, "headers": headers, "follow_redirects": False}
        if params:
            kwargs["params"] = params
        if method == "POST":
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            kwargs["body"] = body or ""
        try:
            resp = await jp_fetch(*path.split("/"), **kwargs)
        except HTTPClientError as exc:
            assert exc.response is not None
            resp = exc.response
        return Page(resp.code, resp.headers, resp.body.decode() if resp.body else "")

    return go


async def register(api: Any, agent_url: str, task_id: str) -> tuple[str, str]:
    status, reg = await api(
        "POST", "hitl/api/tasks", user="alice", body={"agent_url": agent_url, "task_id": task_id}
    )
    assert status in (200, 201), reg
    (prompt,) = reg["prompts"]
    return reg["id"], prompt["prompt_id"]


def _xsrf_cookie(page: Page) -> str:
    for value in page.headers.get_list("Set-Cookie"):
        if value.startswith("_xsrf="):
            return value.split(";", 1)[0]
    raise AssertionError(f"no _xsrf cookie in {page.headers!r}")


async def confirm_page(fetch: Any, user: str, reg: str, pid: str, choice: str = "0") -> Page:
    page = await fetch(f"hitl/answer/confirm/{reg}/{pid}", user=user, params={"choice": choice})
    return page


async def post_confirm(fetch: Any, user: str, reg: str, pid: str, choice: str = "0") -> Page:
    """As a browser does: open the confirm page, then press Confirm."""
    shown = await confirm_page(fetch, user, reg, pid, choice)
    assert shown.code == 200, shown.words
    (field,) = HIDDEN.findall(shown.text)
    return await fetch(
        f"hitl/answer/confirm/{reg}/{pid}",
        user=user,
        cookie=_xsrf_cookie(shown),
        method="POST",
        body=urlencode({"_xsrf": html.unescape(field)}),
        params={"choice": choice},
    )


# -- the shell --------------------------------------------------------------------------


async def test_the_shell_comes_behind_the_login_with_its_config_and_a_strict_policy(
    fetch: Any,
) -> None:
    page = await fetch("hitl/answer/", user="bob")
    assert page.code == 200
    assert page.headers["Cache-Control"] == "no-store"
    csp = page.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "unsafe-inline" not in csp
    config = json.loads(CONFIG.search(page.text).group(1))  # type: ignore[union-attr]
    assert config["me"] == {"name": "bob", "display": "Bob"}
    assert config["api"].endswith("hitl/api/") and config["page"].endswith("hitl/answer/")
    assert config["prompt"] is None and config["xsrf"]
    assert config["lab"].endswith("lab?hitl-inbox=1")
    assert 'id="hitl-answer"' in page.text and "<noscript>" in page.text
    assert "static/answer.js?v=" in page.text and "static/answer.css?v=" in page.text

    one = await fetch("hitl/answer/prompt/reg-1/p.1", user="bob")
    config = json.loads(CONFIG.search(one.text).group(1))  # type: ignore[union-attr]
    assert config["prompt"] == {"registration": "reg-1", "prompt_id": "p.1"}
    assert config["lab"].endswith("lab?hitl-registration=reg-1&hitl-prompt=p.1")


async def test_without_a_login_the_shell_sends_to_the_login_and_shows_nothing(
    fetch: Any,
) -> None:
    page = await fetch("hitl/answer/")
    assert page.code == 302 and "/login" in page.headers["Location"]
    assert "hitl-page-config" not in page.text


@pytest.mark.parametrize(
    "path",
    [
        "hitl/answer/prompt/%3Cscript%3E/x",
        "hitl/answer/prompt/a/b/c",
        "hitl/answer/prompt/" + "a" * 300 + "/x",
        "hitl/answer/confirm/a%2Fb/x",
    ],
    ids=["markup", "too-many-parts", "too-long", "slash"],
)
async def test_a_hostile_path_is_not_found(fetch: Any, path: str) -> None:
    page = await fetch(path, user="bob")
    assert page.code == 404
    assert "<script>" not in page.text


async def test_a_static_file_that_was_not_built_is_a_404_that_says_why(fetch: Any) -> None:
    page = await fetch("hitl/answer/static/no-such-file.js")
    assert page.code == 404 and "not built" in page.text and "jlpm build:page" in page.text
    page = await fetch("hitl/answer/static/..%2F_page.py")
    assert page.code == 404 and "_page" not in page.text.split("'")[0]


# -- one-click confirm pages ------------------------------------------------------------


async def test_a_get_of_a_choice_link_shows_the_choice_and_answers_nothing(
    fetch: Any, api: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "specific", responder="bob")
    reg, pid = await register(api, agent.url, task.id)
    for _ in range(3):  # a mail scanner, a link preview, bob
        page = await confirm_page(fetch, "bob", reg, pid, "1")
        assert page.code == 200
    assert "You are answering as Bob" in page.words
    assert "bob: approve the change?" in page.words
    assert "Your answer: Approve: No" in page.words
    assert "Confirm: Approve: No" in page.words
    assert page.headers["Cache-Control"] == "no-store"
    assert "<script" not in page.text  # no script needed
    assert HIDDEN.search(page.text)
    assert await answers_at_agent(agent.url, task.id) == []
    _, listed = await api("GET", f"hitl/api/tasks/{reg}", user="bob")
    assert listed["prompts"][0]["state"] == "open"


async def test_a_post_without_or_with_a_wrong_xsrf_token_is_403_and_forwards_nothing(
    fetch: Any, api: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "specific", responder="bob")
    reg, pid = await register(api, agent.url, task.id)
    shown = await confirm_page(fetch, "bob", reg, pid)
    cookie = _xsrf_cookie(shown)
    field = urlencode({"_xsrf": html.unescape(HIDDEN.findall(shown.text)[0])})
    path = f"hitl/answer/confirm/{reg}/{pid}"
    tries = [
        {"cookie": None, "body": ""},  # nothing
        {"cookie": cookie, "body": ""},  # the cookie, no field
        {"cookie": cookie, "body": "_xsrf=2|made|up|token"},  # a made-up field
        {"cookie": None, "body": field},  # the field, without its cookie
    ]
    for attempt in tries:
        page = await fetch(
            path,
            user="bob",
            method="POST",
            params={"choice": "0"},
            **attempt,  # type: ignore[arg-type]
        )
        assert page.code == 403, (attempt, page.words)
        assert "security token was missing or did not match" in page.words
        assert "Nothing was sent" in page.words
    # a token-authenticated POST (no browser) needs the form's token all the same
    page = await fetch(path, token="bob", method="POST", params={"choice": "0"})
    assert page.code == 403
    assert await answers_at_agent(agent.url, task.id) == []


async def test_a_confirmed_choice_answers_exactly_once_and_then_says_answered(
    fetch: Any, api: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "specific", responder="bob")
    reg, pid = await register(api, agent.url, task.id)
    page = await post_confirm(fetch, "bob", reg, pid, "0")
    assert page.code == 200, page.words
    assert "Answer accepted" in page.words and "The agent accepted the answer" in page.words
    assert "as Bob" in page.words
    assert await answers_at_agent(agent.url, task.id) == [
        {"prompt_id": pid, "payload": {"approve": True}}
    ]
    # the same link again: answered already, with no button; a second POST: 409
    again = await confirm_page(fetch, "bob", reg, pid, "0")
    assert again.code == 409 and "Already answered" in again.words and "<form" not in again.text
    shown = await fetch("hitl/answer/", user="bob")
    xsrf = _xsrf_cookie(shown)
    token = xsrf.split("=", 1)[1]
    second = await fetch(
        f"hitl/answer/confirm/{reg}/{pid}",
        user="bob",
        cookie=xsrf,
        method="POST",
        body=urlencode({"_xsrf": token}),
        params={"choice": "1"},
    )
    assert second.code == 409 and "Already answered" in second.words
    assert len(await answers_at_agent(agent.url, task.id)) == 1


@pytest.mark.parametrize("choice", ["", "abc", "-1", "1e3", "2", "99", "1" * 40])
async def test_a_choice_that_is_not_one_of_the_prompts_is_400_and_forwards_nothing(
    fetch: Any, api: Any, agent: MockAgent, choice: str
) -> None:
    task = await start_task(agent.url, "specific", responder="bob")
    reg, pid = await register(api, agent.url, task.id)
    page = await confirm_page(fetch, "bob", reg, pid, choice)
    assert page.code == 400 and "This link is not right" in page.words
    assert "<form" not in page.text
    listing = await fetch("hitl/answer/", user="bob")
    xsrf = _xsrf_cookie(listing)
    posted = await fetch(
        f"hitl/answer/confirm/{reg}/{pid}",
        user="bob",
        cookie=xsrf,
        method="POST",
        body=urlencode({"_xsrf": xsrf.split("=", 1)[1]}),
        params={"choice": choice},
    )
    assert posted.code == 400, posted.words
    assert await answers_at_agent(agent.url, task.id) == []


async def test_unknown_prompts_and_tasks_are_404(fetch: Any, api: Any, agent: MockAgent) -> None:
    task = await start_task(agent.url, "specific", responder="bob")
    reg, pid = await register(api, agent.url, task.id)
    for path in (f"confirm/{reg}/no-such-prompt", f"confirm/no-such-task/{pid}"):
        page = await fetch(f"hitl/answer/{path}", user="bob", params={"choice": "0"})
        assert page.code == 404 and "No such prompt" in page.words
    assert await answers_at_agent(agent.url, task.id) == []


async def test_someone_elses_prompt_is_refused_on_the_page_and_by_the_gateway(
    fetch: Any, api: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "specific", responder="bob")
    reg, pid = await register(api, agent.url, task.id)
    page = await confirm_page(fetch, "carol", reg, pid)
    assert page.code == 403 and "not yours to answer" in page.words and "<form" not in page.text
    listing = await fetch("hitl/answer/", user="carol")
    xsrf = _xsrf_cookie(listing)
    posted = await fetch(
        f"hitl/answer/confirm/{reg}/{pid}",
        user="carol",
        cookie=xsrf,
        method="POST",
        body=urlencode({"_xsrf": xsrf.split("=", 1)[1]}),
        params={"choice": "0"},
    )
    assert posted.code == 403 and "not yours to answer" in posted.words
    assert "Nothing was sent" in posted.words
    assert await answers_at_agent(agent.url, task.id) == []


async def test_two_confirms_reach_a_consensus_of_two_and_the_agent_gets_one_answer(
    fetch: Any, api: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "consensus", n=2)
    reg, pid = await register(api, agent.url, task.id)
    first = await post_confirm(fetch, "alice", reg, pid, "0")
    assert first.code == 202 and "Answer counted" in first.words
    assert "1 of 2 agreeing; 1 more needed" in first.words
    assert await answers_at_agent(agent.url, task.id) == []
    shown = await confirm_page(fetch, "carol", reg, pid, "0")
    assert "1 of 2 agreeing" in shown.words
    second = await post_confirm(fetch, "carol", reg, pid, "0")
    assert second.code == 200 and "agreed by alice, carol" in second.words
    assert len(await answers_at_agent(agent.url, task.id)) == 1


async def test_a_prompt_past_its_deadline_says_so_and_forwards_nothing(
    fetch: Any, api: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "deadline", deadline_seconds=1)
    reg, pid = await register(api, agent.url, task.id)
    listing = await fetch("hitl/answer/", user="bob")
    await asyncio.sleep(1.5)
    page = await confirm_page(fetch, "bob", reg, pid, "0")
    assert page.code == 410 and "deadline has passed" in page.words
    xsrf = _xsrf_cookie(listing)
    posted = await fetch(
        f"hitl/answer/confirm/{reg}/{pid}",
        user="bob",
        cookie=xsrf,
        method="POST",
        body=urlencode({"_xsrf": xsrf.split("=", 1)[1]}),
        params={"choice": "0"},
    )
    assert posted.code == 410 and "deadline" in posted.words
    assert await answers_at_agent(agent.url, task.id) == []


async def test_a_prompt_with_more_to_fill_in_has_no_one_click_answer(
    fetch: Any, api: Any, agent: MockAgent
) -> None:
    task = await start_task(agent.url, "form-tour")
    reg, pid = await register(api, agent.url, task.id)
    page = await confirm_page(fetch, "bob", reg, pid, "0")
    assert page.code == 400 and "not answered with one click" in page.words
