"""The answer page on a real JupyterHub, in Chromium: bob, logged in to the hub with his
server stopped, opens his email's link to a ``specific:bob`` prompt; the page (served by
the hitl service) draws the prompt's form, he answers, the page says the outcome in the
card's words; the agent gets exactly one answer and bob's server was never started. On
a desk (1280 x 800) and a phone (375 x 667): nothing scrolls sideways, tap targets are
44 px, axe-core finds no serious or critical violation on the form and the outcome.
Then alice and carol reach a ``consensus:2`` from the page, and bob is told why he may
not answer carol's prompt (no form). Screenshots light and dark go to
``HITL_NB_SCREENSHOTS`` when set (else the test's folder).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.client import GatewayClient, GatewayInfo
from hitl_nb.gateway._page import STATIC_DIR
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notify._links import AnswerLinks
from tests.helpers import lab
from tests.helpers.answer_page import AXE, DESK, PHONE, check_layout, serious_violations
from tests.helpers.hub import Hub
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.until import until

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.kernel]

ACCEPTED = "the agent accepted the answer"
#: The hub's log line of every server that started (JupyterHub's own words).
STARTED = re.compile(r"User bob took [0-9.]+ seconds to start")


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


@pytest.fixture(scope="module")
def built() -> None:
    """The page's build and axe-core: skipped without them here, a failure in CI."""
    missing = [str(p) for p in (STATIC_DIR / "answer.js", AXE) if not p.is_file()]
    if missing:
        message = f"run 'jlpm install && jlpm build:page' first: {', '.join(missing)} missing"
        if os.environ.get("CI") == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def _run(coro: Any) -> Any:
    """A coroutine run on a thread of its own (Playwright holds this one's loop)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _register(hub: Hub, agent: MockAgent, scenario: str, **options: Any) -> tuple[str, str, str]:
    """A task of alice's registered with the hub's service: (task, registration, prompt)."""
    task = _run(start_task(agent.url, scenario, **options))
    alice = GatewayInfo(hub.service, hub.user_token("alice"), "alice", hub.service + "api/")
    with GatewayClient(alice) as gw:
        reg = gw.register(agent.url, task.id)
    (prompt,) = reg["prompts"]
    return str(task.id), str(reg["id"]), str(prompt["prompt_id"])


def _link(hub: Hub, reg: str, prompt: str) -> str:
    """The link bob's email carries (built by the code the messages use)."""
    return AnswerLinks(hub.url, hub=True, page=hub.url + "services/hitl/answer/").prompt(
        reg, prompt
    )


def _bob(hub: Hub) -> dict[str, Any]:
    with hub.admin() as admin:
        return dict(admin.get("users/bob").json())


def _stop_bobs_server(hub: Hub) -> None:
    """Another test of the session may have started it."""
    if not (_bob(hub).get("servers") or {}):
        return
    with hub.admin() as admin:
        admin.delete("users/bob/server")
    until(lambda: not (_bob(hub).get("servers") or {}), timeout=60, what="bob's server to stop")


def _login(context: Any, hub: Hub, user: str) -> None:
    """``user`` logs in on the hub's login page (to the hub's home: no server started)."""
    page = context.new_page()
    page.goto(f"{hub.url}hub/login?next=/hub/home")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", "any")
    page.click("input[type=submit], button[type=submit]")
    page.wait_for_url("**/hub/home", timeout=60_000)
    page.close()


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("HITL_NB_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _open(context: Any, link: str) -> Any:
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    page.goto(link)
    return page


def _axe(context: Any, link: str, ready: str, what: str) -> None:
    """axe-core on the page at ``link`` once ``ready`` (a selector) shows, in a second
    context with the same login.

    The page's CSP (``default-src 'self'``, no inline script) refuses any script the
    test adds, as it should; this context alone is opened with ``bypass_csp=True`` so
    that axe can run. It draws the same page from the same replies."""
    with_axe = context.browser.new_context(
        viewport=context.pages[0].viewport_size if context.pages else None,
        storage_state=context.storage_state(),
        bypass_csp=True,
    )
    try:
        page = with_axe.new_page()
        page.goto(link)
        page.locator(ready).wait_for(timeout=60_000)
        page.wait_for_load_state("networkidle")
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            assert serious_violations(page) == [], f"{what} ({scheme})"
    finally:
        with_axe.close()


@pytest.mark.parametrize("size", [DESK, PHONE], ids=["desk", "phone"])
def test_bob_answers_from_his_emails_link_with_his_server_stopped(
    chromium: lab.Chromium,
    hub: Hub,
    agent: MockAgent,
    built: None,
    tmp_path: Path,
    size: tuple[int, int],
) -> None:
    _stop_bobs_server(hub)
    spawns = len(STARTED.findall(hub.log()))
    task, reg, pid = _register(hub, agent, "specific", responder="bob")
    link = _link(hub, reg, pid)
    assert link.endswith(f"/services/hitl/answer/prompt/{reg}/{pid}")
    shots = _shots(tmp_path)
    name = "desk" if size == DESK else "phone"
    with chromium(*size) as context:
        _login(context, hub, "bob")
        page = _open(context, link)
        form = page.locator("form.hitl-page-form")
        form.wait_for(timeout=60_000)
        assert page.locator("h1").inner_text() == "A prompt for you"
        assert "bob: approve the change?" in page.locator("main").inner_text()
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            page.screenshot(path=str(shots / f"hub-page-form-{name}-{scheme}.png"), full_page=True)
            check_layout(page, f"the form ({name}, {scheme})")
        page.emulate_media(color_scheme="light")
        _axe(context, link, "form.hitl-page-form", f"the form ({name})")
        form.get_by_label("Yes").first.check()
        page.locator("button.hitl-page-submit").click()
        outcome = page.locator(".hitl-page-outcome")
        outcome.get_by_text(ACCEPTED).wait_for(timeout=60_000)
        assert page.locator("form.hitl-page-form").count() == 0
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            page.screenshot(
                path=str(shots / f"hub-page-outcome-{name}-{scheme}.png"), full_page=True
            )
            check_layout(page, f"the outcome ({name}, {scheme})")
        _axe(context, link, f".hitl-page-outcome:has-text('{ACCEPTED}')", f"the outcome ({name})")
        assert page.errors == []
    assert _run(answers_at_agent(agent.url, task)) == [
        {"prompt_id": pid, "payload": {"approve": True}}
    ]
    bob = _bob(hub)
    assert not (bob.get("servers") or {}) and bob.get("pending") is None, bob
    assert len(STARTED.findall(hub.log())) == spawns  # no spawn happened


def test_alice_and_carol_agree_from_the_page_and_bob_is_told_why_not(
    chromium: lab.Chromium, hub: Hub, agent: MockAgent, built: None, tmp_path: Path
) -> None:
    task, reg, pid = _register(hub, agent, "consensus", n=2)
    link = _link(hub, reg, pid)
    _, carols_reg, carols_pid = _register(hub, agent, "specific", responder="carol")
    with chromium(*DESK) as one, chromium(*PHONE) as two, chromium(*PHONE) as three:
        _login(one, hub, "alice")
        alice = _open(one, link)
        alice.locator("form.hitl-page-form").get_by_label("Yes").first.check(timeout=60_000)
        alice.locator("button.hitl-page-submit").click()
        outcome = alice.locator(".hitl-page-outcome")
        outcome.get_by_text("Your answer is counted: 1 of 2 agree.").wait_for(timeout=60_000)
        _login(two, hub, "carol")
        carol = _open(two, link)
        carol.locator("form.hitl-page-form").wait_for(timeout=60_000)
        assert "1 of 2 agreeing" in carol.locator(".hitl-page-details").inner_text()
        carol.locator("form.hitl-page-form").get_by_label("Yes").first.check()
        carol.locator("button.hitl-page-submit").click()
        carol.locator(".hitl-page-outcome").get_by_text(
            f"{ACCEPTED} (agreed by alice, carol)"
        ).wait_for(timeout=60_000)
        # Alice's page follows the service's feed to the final outcome.
        outcome.get_by_text(f"{ACCEPTED} (2 people agreed: alice, carol)").wait_for(timeout=60_000)
        alice.screenshot(path=str(_shots(tmp_path) / "hub-page-consensus-desk-light.png"))
        # Carol's prompt is not bob's: he is told why, and no form is drawn.
        _login(three, hub, "bob")
        bob = _open(three, _link(hub, carols_reg, carols_pid))
        bob.get_by_text("Prompt not found").wait_for(timeout=60_000)
        assert "not yours to see" in bob.locator("main").inner_text()
        assert bob.locator("form.hitl-page-form").count() == 0
        check_layout(bob, "bob on carol's prompt")
        assert alice.errors == [] and carol.errors == [] and bob.errors == []
    assert _run(answers_at_agent(agent.url, task)) == [
        {"prompt_id": pid, "payload": {"approve": True}}
    ]
