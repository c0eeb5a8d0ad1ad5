"""The answer page's client (src/page, built by ``jlpm build:page``) in Chromium.

A tiny tornado server of the test's serves the page's shell (``hitl_nb.gateway._page``,
with its strict CSP), its static files, and a real :class:`~hitl_nb.gateway.Gateway`'s
REST API and feed, for the person a cookie names (none: 401). The gateway reads a mock
agent. On a desk (1280 x 800) and a phone (375 x 667), light and dark: the list kept live
by the feed, one prompt's form answered (the agent gets exactly that answer), a
consensus counted then reached, a refusal with no form, hostile text as text, 1,000
open prompts, errors (logged out, the database away). axe-core finds no serious or
critical violation; nothing scrolls sideways; every tap target is at least 44 px.
Screenshots go to ``HITL_NB_SCREENSHOTS`` when set (else the test's folder).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import uuid
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import pytest
import tornado.web

from hitl_nb.gateway import (
    AgentPool,
    ApiRequest,
    Caller,
    FeedStream,
    Gateway,
    GatewayAPI,
    GatewaySettings,
)
from hitl_nb.gateway._page import PAGE_HEADERS, STATIC_DIR, PageConfig, StaticFiles, shell
from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.gateway._store import Registration
from hitl_nb.mock_agent import MockAgent, Scenario, Step
from hitl_nb.mock_agent._scenarios import APPROVAL_SCHEMA
from tests.helpers import lab
from tests.helpers.answer_page import AXE, DESK, LAYOUT, PHONE
from tests.helpers.tasks import answers_at_agent, start_task

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")

HOSTILE = (
    "<script>window.__hitl_pwned = 1</script><img src=x onerror='window.__hitl_pwned=2'>"
    "**Approve** the <b>deploy</b>? \u202eRTL\u202c zero\u200bwidth "
    "\u0645\u0631\u062d\u0628\u0627 "
) + "lorem ipsum " * 850
SCENARIOS = [
    Scenario(
        "page-hostile",
        "A question no page may draw as markup.",
        steps=[Step(HOSTILE, APPROVAL_SCHEMA, deadline_seconds=3000)],
    ),
    Scenario(
        "page-bob",
        "Only bob may answer.",
        steps=[Step("bob: approve the release notes?", APPROVAL_SCHEMA, ["specific:bob"], 600)],
    ),
    Scenario(
        "page-carol",
        "Only carol may answer.",
        steps=[Step("carol: approve the budget?", APPROVAL_SCHEMA, ["specific:carol"])],
    ),
    Scenario(
        "page-two",
        "Two people must agree.",
        steps=[Step("Ship build 42 to production?", APPROVAL_SCHEMA, ["consensus:2"], 900)],
    ),
]


class Host:
    """The test's server: the page and a real gateway for the person a cookie names."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.loop = asyncio.new_event_loop()
        self.fault: int | None = None
        self.base = ""
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(30), "the test's server did not start"

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        """Run ``coro`` on the server's loop (the gateway's), from the test's thread."""
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout)

    def stop(self) -> None:
        self.run(self.gateway.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(30)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._start())
        self._ready.set()
        self.loop.run_forever()

    async def _start(self) -> None:
        settings = GatewaySettings(watch=False, show_all=False)
        self.gateway = Gateway(
            SQLiteStore(self.folder / "gateway.sqlite"), AgentPool([], 10.0), settings
        )
        await self.gateway.start()
        api = GatewayAPI(self.gateway)
        host = self
        routes: list[Any] = [
            (r"/answer/?", ShellPage, {"host": host, "prompt": False}),
            (r"/answer/prompt/([^/]+)/([^/]+)", ShellPage, {"host": host, "prompt": True}),
            (r"/answer/static/(.*)", StaticFiles, {"path": str(STATIC_DIR)}),
            # axe-core from this site: the page's CSP lets no script in from elsewhere.
            (r"/axe/(axe\.min\.js)", tornado.web.StaticFileHandler, {"path": str(AXE.parent)}),
            (r"/api/feed", Feed, {"host": host}),
        ]
        routes += [
            (pattern, Route, {"host": host, "api": api, "route": name})
            for pattern, name in api.routes("/api")
        ]
        app = tornado.web.Application(routes)
        server = app.listen(0, "127.0.0.1")
        port = next(iter(server._sockets.values())).getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"


def _caller(handler: tornado.web.RequestHandler) -> Caller | None:
    who = handler.get_cookie("who")
    return Caller(who, who.title()) if who else None


class ShellPage(tornado.web.RequestHandler):
    def initialize(self, host: Host, prompt: bool) -> None:
        self.host = host
        self.prompt = prompt

    def get(self, *args: str) -> None:
        caller = _caller(self) or Caller(None, "someone")
        config = PageConfig(
            api="/api/",
            page="/answer/",
            xsrf="xsrf-of-the-test",
            me=caller,
            prompt=(args[0], args[1]) if self.prompt else None,
            lab="/lab?hitl-prompt=x" if self.prompt else None,
        )
        for name, value in PAGE_HEADERS.items():
            self.set_header(name, value)
        self.finish(shell(config))


class Route(tornado.web.RequestHandler):
    def initialize(self, host: Host, api: GatewayAPI, route: str) -> None:
        self.host = host
        self.api = api
        self.route = route

    async def _serve(self, *args: str) -> None:
        caller = _caller(self)
        self.set_header("Content-Type", "application/json")
        if caller is None:
            self.set_status(401)
            self.finish(json.dumps({"error": 401, "message": "log in"}))
            return
        if self.host.fault is not None:
            self.set_status(self.host.fault)
            message = "the gateway cannot answer now: its database cannot be reached"
            self.finish(json.dumps({"error": self.host.fault, "message": message}))
            return
        if self.request.method == "POST":
            assert self.request.headers.get("X-XSRFToken") == "xsrf-of-the-test"
        request = ApiRequest(
            method=self.request.method or "GET",
            args=args,
            query={k: self.get_query_argument(k) for k in self.request.query_arguments},
            body=self.request.body or b"",
            content_type=self.request.headers.get("Content-Type", ""),
        )
        reply = await self.api.handle(self.route, caller, request)
        self.set_status(reply.status)
        self.set_header("Content-Type", reply.media)
        self.finish(reply.text())

    async def get(self, *args: str) -> None:
        await self._serve(*args)

    async def post(self, *args: str) -> None:
        await self._serve(*args)


class Feed(tornado.web.RequestHandler):
    def initialize(self, host: Host) -> None:
        self.host = host
        self.stream = FeedStream()

    async def get(self) -> None:
        caller = _caller(self)
        if caller is None or self.host.fault is not None:
            self.set_status(401 if caller is None else self.host.fault or 503)
            self.finish(json.dumps({"error": self.get_status()}))
            return
        await self.stream.serve(self, self.host.gateway.feed, caller)

    def on_connection_close(self) -> None:
        self.stream.close()


@pytest.fixture(scope="module")
def built() -> None:
    """The page's build and axe-core: skipped without them here, a failure in CI."""
    missing = [str(p) for p in (STATIC_DIR / "answer.js", AXE) if not p.is_file()]
    if missing:
        message = f"run 'jlpm install && jlpm build:page' first: {', '.join(missing)} missing"
        if os.environ.get("CI") == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


@pytest.fixture(scope="module")
def world(
    built: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Host, MockAgent, dict[str, str]]]:
    """The server, the agent, and its tasks registered (name -> registration id)."""
    host = Host(tmp_path_factory.mktemp("answer-page"))
    host.start()
    agent = MockAgent(scenarios=SCENARIOS).start()
    regs: dict[str, str] = {}
    dora = Caller("dora", "Dora")
    for name in ("page-hostile", "page-bob", "page-carol", "page-two"):
        task = host.run(start_task(agent.url, name))
        _, reg = host.run(host.gateway.register(dora, agent.url, task.id))
        regs[name] = reg["id"]
    try:
        yield host, agent, regs
    finally:
        agent.stop()
        host.stop()


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("HITL_NB_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _open(context: Any, host: Host, who: str | None, path: str = "/answer/") -> Any:
    if who is not None:
        context.add_cookies([{"name": "who", "value": who, "url": host.base}])
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # The page's own errors (the browser's lines about replies of 4xx are not).
    page.on(
        "console",
        lambda m: (
            errors.append(m.text)
            if m.type == "error" and not m.text.startswith("Failed to load resource")
            else None
        ),
    )
    page.errors = errors
    page.goto(host.base + path)
    return page


def _axe(page: Any) -> list[str]:
    """The serious and critical violations axe-core finds, in words."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(url="/axe/axe.min.js")
    result = page.evaluate("async () => (await axe.run()).violations")
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
        for v in result
        if v["impact"] in ("serious", "critical")
    ]


def _check(page: Any, what: str) -> None:
    """No sideways scrolling, tap targets of 44 px, no serious axe violation."""
    layout = page.evaluate(LAYOUT)
    assert layout["scroll"] <= layout["width"], f"{what}: scrolls sideways: {layout}"
    assert layout["small"] == [], f"{what}: tap targets under 44 px: {layout['small']}"
    assert _axe(page) == [], what


def _key(regs: dict[str, str], name: str, host: Host) -> tuple[str, str]:
    view = host.run(host.gateway.registration(regs[name], Caller("dora", "Dora")))
    return regs[name], view["prompts"][0]["prompt_id"]


@pytest.mark.parametrize("size", [DESK, PHONE], ids=["desk", "phone"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_list_for_bob_live_from_the_feed(
    chromium: lab.Chromium,
    world: tuple[Host, MockAgent, dict[str, str]],
    tmp_path: Path,
    size: tuple[int, int],
    scheme: str,
) -> None:
    host, _, regs = world
    with chromium(*size) as context:
        page = _open(context, host, "bob")
        page.emulate_media(color_scheme=scheme)
        rows = page.locator("section[aria-label='Prompts you may answer'] li")
        rows.first.wait_for(timeout=30_000)
        # Soonest deadline first: bob's (600 s), the consensus (900 s), the hostile one.
        page.wait_for_function(
            "() => document.querySelectorAll('.hitl-page-row').length >= 3", timeout=30_000
        )
        texts = rows.all_inner_texts()
        assert texts[0].startswith("bob: approve the release notes?")
        assert "\nbob\n" in texts[0] or "bob" in texts[0].split("\n")[1]
        assert texts[1].startswith("Ship build 42 to production?")
        assert "2 people must agree" in texts[1] and "0 of 2 agree" in texts[1]
        assert "left" in texts[1]
        assert not any("carol: approve" in t for t in texts)  # not bob's to answer
        assert page.evaluate("window.__hitl_pwned") is None
        assert page.locator(".hitl-page-row img, .hitl-page-row script").count() == 0
        _check(page, f"the list ({scheme}, {size})")
        page.screenshot(path=str(_shots(tmp_path) / f"page-list-{size[0]}-{scheme}.png"))
        assert page.errors == []


def test_bob_answers_his_prompt_and_the_agent_gets_exactly_that(
    chromium: lab.Chromium, world: tuple[Host, MockAgent, dict[str, str]], tmp_path: Path
) -> None:
    host, agent, regs = world
    reg, prompt = _key(regs, "page-bob", host)
    shots = _shots(tmp_path)
    with chromium(*PHONE) as context:
        page = _open(context, host, "bob")
        page.locator("a.hitl-page-answer", has_text="Answer").first.wait_for(timeout=30_000)
        page.locator(".hitl-page-row", has_text="bob: approve").locator("a").click()
        page.wait_for_url(f"**/answer/prompt/{reg}/{prompt}")
        form = page.locator("form.hitl-page-form")
        form.wait_for(timeout=30_000)
        assert page.locator("h1").inner_text() == "A prompt for you"
        assert "bob" in page.locator(".hitl-page-details").inner_text()
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            _check(page, f"a form ({scheme})")
            page.screenshot(path=str(shots / f"page-form-375-{scheme}.png"), full_page=True)
        # Submit without choosing: the form says what is missing, nothing is sent.
        page.locator("button.hitl-page-submit").click()
        page.locator(".hitl-page-outcome", has_text="nothing was sent").wait_for()
        form.get_by_label("Yes").first.check()
        page.locator("button.hitl-page-submit").click()
        outcome = page.locator(".hitl-page-outcome")
        outcome.get_by_text("the agent accepted the answer").wait_for(timeout=30_000)
        assert page.locator("form.hitl-page-form").count() == 0
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            _check(page, f"an outcome ({scheme})")
            page.screenshot(path=str(shots / f"page-outcome-375-{scheme}.png"), full_page=True)
        # Opened again: answered, no form.
        page.reload()
        outcome.get_by_text("the agent accepted the answer").wait_for(timeout=30_000)
        assert page.locator("form.hitl-page-form").count() == 0
        assert page.errors == []
    task_id = host.run(host.gateway.registration(reg, Caller("dora", "Dora")))["task_id"]
    answers = host.run(answers_at_agent(agent.url, task_id))
    assert answers == [{"prompt_id": prompt, "payload": {"approve": True}}]


def test_alice_and_carol_reach_a_consensus_from_the_page(
    chromium: lab.Chromium, world: tuple[Host, MockAgent, dict[str, str]], tmp_path: Path
) -> None:
    host, agent, regs = world
    reg, prompt = _key(regs, "page-two", host)
    path = f"/answer/prompt/{reg}/{prompt}"
    with chromium(*DESK) as one, chromium(*PHONE) as two:
        alice = _open(one, host, "alice", path)
        alice.locator("form.hitl-page-form").wait_for(timeout=30_000)
        alice.locator("form.hitl-page-form").get_by_label("Yes").first.check()
        alice.locator("button.hitl-page-submit").click()
        outcome = alice.locator(".hitl-page-outcome")
        outcome.get_by_text("Your answer is counted: 1 of 2 agree.").wait_for(timeout=30_000)
        assert "held: the Jupyter server counted this answer from alice" in outcome.inner_text()
        carol = _open(two, host, "carol", path)
        carol.locator("form.hitl-page-form").wait_for(timeout=30_000)
        assert "1 of 2 agreeing" in carol.locator(".hitl-page-details").inner_text()
        carol.locator("form.hitl-page-form").get_by_label("Yes").first.check()
        carol.locator("button.hitl-page-submit").click()
        carol.locator(".hitl-page-outcome", has_text="accepted").wait_for(timeout=30_000)
        carol.locator(".hitl-page-outcome").get_by_text(
            "the agent accepted the answer (agreed by alice, carol)"
        ).wait_for(timeout=30_000)
        # Alice's page follows the feed to the final outcome.
        agreed = "the agent accepted the answer (2 people agreed: alice, carol)"
        outcome.get_by_text(agreed).wait_for(timeout=30_000)
        alice.screenshot(path=str(_shots(tmp_path) / "page-consensus-1280-light.png"))
        assert alice.errors == [] and carol.errors == []
    task_id = host.run(host.gateway.registration(reg, Caller("dora", "Dora")))["task_id"]
    answers = host.run(answers_at_agent(agent.url, task_id))
    assert answers == [{"prompt_id": prompt, "payload": {"approve": True}}]


def test_bob_is_told_why_not_on_carols_prompt_and_hostile_text_is_text(
    chromium: lab.Chromium, world: tuple[Host, MockAgent, dict[str, str]], tmp_path: Path
) -> None:
    host, _, regs = world
    reg, prompt = _key(regs, "page-carol", host)
    with chromium(*PHONE) as context:
        page = _open(context, host, "dora", f"/answer/prompt/{reg}/{prompt}")  # registrant
        outcome = page.locator(".hitl-page-outcome")
        outcome.wait_for(timeout=30_000)
        assert outcome.inner_text().startswith("refused: ")
        assert "carol" in outcome.inner_text()
        assert page.locator("form.hitl-page-form").count() == 0
        _check(page, "a refusal")
        reg, prompt = _key(regs, "page-hostile", host)
        page = _open(context, host, "bob", f"/answer/prompt/{reg}/{prompt}")
        page.locator("form.hitl-page-form").wait_for(timeout=30_000)
        question = page.locator("#hitl-page-question")
        assert len(question.text_content()) == 600  # cut: the form within reach
        page.locator("button", has_text="Show the whole question").click()
        assert question.text_content() == HOSTILE
        assert question.get_attribute("dir") == "auto"
        assert page.evaluate("window.__hitl_pwned") is None
        assert page.locator("main img, main b, main script").count() == 0
        _check(page, "a hostile question")
        page.screenshot(path=str(_shots(tmp_path) / "page-hostile-375-light.png"))
        # Carol's prompt is not bob's to see (S-3: the gateway's 404), said in words.
        reg, prompt = _key(regs, "page-carol", host)
        page = _open(context, host, "bob", f"/answer/prompt/{reg}/{prompt}")
        page.get_by_text("Prompt not found").wait_for(timeout=30_000)
        assert "not yours to see" in page.locator("main").inner_text()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_errors_are_said_never_a_blank_page(
    chromium: lab.Chromium,
    world: tuple[Host, MockAgent, dict[str, str]],
    tmp_path: Path,
    scheme: str,
) -> None:
    host, _, _ = world
    shots = _shots(tmp_path)
    with chromium(*PHONE) as context:
        page = _open(context, host, None)
        page.emulate_media(color_scheme=scheme)
        alert = page.locator("[role=alert]")
        alert.get_by_text("You are not logged in to the Jupyter server any more.").wait_for(
            timeout=30_000
        )
        assert alert.locator("a", has_text="Log in again").count() == 1
        _check(page, f"logged out ({scheme})")
        page.screenshot(path=str(shots / f"page-error-401-375-{scheme}.png"))
        host.fault = 503
        try:
            page = _open(context, host, "bob")
            page.emulate_media(color_scheme=scheme)
            alert = page.locator("[role=alert]")
            alert.get_by_text("its database cannot be reached").wait_for(timeout=30_000)
            assert alert.locator("button", has_text="Try again").count() == 1
            _check(page, f"database away ({scheme})")
            page.screenshot(path=str(shots / f"page-error-503-375-{scheme}.png"))
        finally:
            host.fault = None
        # Tried again once the gateway answers: the list. The page also tries again by
        # itself (its feed's backoff), and may have done so already: the button is
        # clicked in the page only if it is still there.
        page.evaluate("() => document.querySelector('.hitl-page-retry')?.click()")
        page.locator(".hitl-page-row").first.wait_for(timeout=30_000)
        assert page.locator("[role=alert]").inner_text() == ""


async def _seed(host: Host, count: int) -> str:
    """``count`` open prompts for anyone, straight into the gateway's store."""
    store = host.gateway.store
    now = time.time()
    prefix = uuid.uuid4().hex[:8]
    for n in range(count):
        reg = Registration(f"{prefix}{n:06d}", "http://agent.invalid:9/", f"t-{n}", "dora", now)
        await store.add_registration(reg)
        deadline = now + 7200 + n
        at = datetime.fromtimestamp(deadline, timezone.utc).isoformat().replace("+00:00", "Z")
        envelope: dict[str, Any] = {
            "prompt_id": f"p{n}",
            "prompt": f"Approve change {n}?",
            "response_schema": APPROVAL_SCHEMA,
            "allowed_responders": ["any"],
            "deadline": at,
        }
        await store.see_prompt(reg.id, f"p{n}", None, envelope, deadline)
    host.gateway.feed.changed(None)
    return prefix


def test_a_thousand_open_prompts_stay_responsive(
    chromium: lab.Chromium, world: tuple[Host, MockAgent, dict[str, str]], tmp_path: Path
) -> None:
    """Run last in the module: the prompts stay."""
    host, _, _ = world
    prefix = host.run(_seed(host, 1000))
    with chromium(*PHONE) as context:
        page = _open(context, host, "erin")
        summary = page.locator(".hitl-page-summary").first
        page.wait_for_function(
            "() => /^1,00\\d prompts/.test(document.querySelector('.hitl-page-summary')"
            "?.textContent ?? '')",
            timeout=60_000,
        )
        listed = int(summary.inner_text().split()[0].replace(",", ""))
        assert page.locator(".hitl-page-row").count() == 50
        # "Show 50 more" draws its rows at once (in the click's handler): timed in the page.
        took = page.evaluate(
            """() => { const t = performance.now();
              document.querySelector('.hitl-page-show-more:not([hidden])').click();
              return performance.now() - t; }"""
        )
        assert page.locator(".hitl-page-row").count() == 100
        # A change to one prompt is drawn from the feed without a reload.
        reg_id = f"{prefix}000999"
        host.run(host.gateway.store.close_prompt(reg_id, "p999", "closed by the agent"))
        host.gateway.feed.changed(reg_id)
        page.wait_for_function(
            "(n) => document.querySelector('.hitl-page-summary').textContent"
            ".startsWith(n.toLocaleString('en-US') + ' prompts')",
            arg=listed - 1,
            timeout=30_000,
        )
        frame = page.evaluate(
            "() => new Promise(r => { const t = performance.now();"
            " requestAnimationFrame(() => r(performance.now() - t)); })"
        )
        _check(page, "1,000 prompts")
        page.screenshot(path=str(_shots(tmp_path) / "page-list-1000-375-light.png"))
        print(f"1,000 prompts: 50 more rows in {took:.0f} ms, the next frame in {frame:.0f} ms")
