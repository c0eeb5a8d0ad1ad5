"""Notifications from the hub service, on a real JupyterHub configured as an
administrator would (``configure(c, notify={...})``), with a real SMTP server (aiosmtpd,
logging in with a password from the hub's environment) and a team webhook receiver.

alice's agent opens a ``specific:bob`` prompt: bob's email arrives with a link through
the hub's ``user-redirect``; in Chromium bob follows it, logs in, and answers in his
JupyterLab's prompts panel: the agent gets exactly one answer. The service killed -9
while the mail server is down loses no message (it goes once the server is back, from
the restarted service). The secrets (the SMTP password, the team webhook's URL) appear
in none of the hub's service list, its log, the audit trail or the messages.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from hitl_nb.client import GatewayClient, GatewayInfo
from hitl_nb.mock_agent import MockAgent
from tests.helpers import lab
from tests.helpers.hub import Hub, running_hub
from tests.helpers.panel import wait_ready
from tests.helpers.ports import free_port
from tests.helpers.smtp import AIOSMTPD_WARNINGS, Inbox, smtp_server
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.tiny_server import Conn, Request, TinyServer, serve
from tests.helpers.until import until

pytestmark = [pytest.mark.slow, pytest.mark.kernel, *AIOSMTPD_WARNINGS]

PASSWORD = "smtp-pa55word-never-shown"
TEAM_PATH = "/hooks/TEAMSECRET/xoxb-never-shown"
NO_NEWS = {"fetchNews": "false"}


class Mail:
    """The test's SMTP server: one inbox across its stops and starts, on one port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.inbox = Inbox()
        self._running: Any = None

    def start(self) -> None:
        self._running = smtp_server(port=self.port, inbox=self.inbox, users={"hitl": PASSWORD})
        self._running.__enter__()

    def stop(self) -> None:
        if self._running is not None:
            self._running.__exit__(None, None, None)
            self._running = None

    def to(self, address: str) -> list[Any]:
        return [r.message for r in self.inbox.received if address in r.rcpt_tos]


def _ok(request: Request, conn: Conn) -> None:
    conn.answer({"ok": True}, 200)


@pytest.fixture(scope="module")
def mail() -> Iterator[Mail]:
    box = Mail()
    box.start()
    yield box
    box.stop()


@pytest.fixture(scope="module")
def team() -> Iterator[TinyServer]:
    with serve(_ok) as hook:
        yield hook


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory, mail: Mail, team: TinyServer) -> Iterator[Hub]:
    notify = {
        "smtp": {
            "host": "127.0.0.1",
            "port": mail.port,
            "security": "none",
            "user": "hitl",
            "password_env": "HITL_TEST_SMTP_PASSWORD",
        },
        "from": "hitl@example.org",
        "addresses": "{name}@example.org",
        "team_webhooks": {"*": team.url + TEAM_PATH},
        "link_url": "{hub_url}",
        "every": 1,
        "answer_links": "lab",  # bob answers in his JupyterLab (test_answer_page.py: the page)
    }
    env = {"HITL_TEST_SMTP_PASSWORD": PASSWORD}
    os.environ["HITL_TEST_SMTP_PASSWORD"] = PASSWORD  # configure() reads the hub's
    try:
        with running_hub(
            tmp_path_factory.mktemp("notify-hub"), env, service_options={"notify": notify}
        ) as running:
            yield running
    finally:
        del os.environ["HITL_TEST_SMTP_PASSWORD"]


def _gateway(hub: Hub, user: str) -> GatewayClient:
    info = GatewayInfo(hub.service, hub.user_token(user), user, hub.service + "api/")
    return GatewayClient(info)


def _link(mail: Any) -> str:
    body = mail.get_body(("plain",)).get_content()
    return next(w for w in body.split() if w.startswith("http") and "hitl-prompt" in w)


@pytest.mark.browser
def test_bobs_email_links_to_his_lab_where_he_answers_once(
    chromium: lab.Chromium, hub: Hub, mail: Mail, tmp_path: Path
) -> None:
    shots = Path(os.environ.get("HITL_NB_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    news = hub.root / "home" / "bob" / ".jupyter" / "lab" / "user-settings"
    (news / "@jupyterlab" / "apputils-extension").mkdir(parents=True, exist_ok=True)
    (news / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps(NO_NEWS)
    )
    with MockAgent() as agent:
        task = asyncio.run(start_task(agent.url, "specific", responder="bob"))
        with _gateway(hub, "alice") as gw:
            reg = gw.register(agent.url, task.id)
        (prompt,) = reg["prompts"]
        (email,) = until(lambda: mail.to("bob@example.org"), timeout=60, what="bob's email")
        assert email["Subject"] == "Question for you: bob: approve the change?"
        link = _link(email)
        parts = urlsplit(link)
        assert link.startswith(hub.url + "hub/user-redirect/lab?")
        assert parse_qs(parts.query) == {
            "hitl-registration": [reg["id"]],
            "hitl-prompt": [prompt["prompt_id"]],
        }
        assert "token" not in link and "bob" not in link  # the link names nobody
        # bob, not logged in, his server not running, follows it.
        with chromium(1300, 900) as context:
            page = context.new_page()
            page.goto(link)
            page.fill("input[name=username]", "bob")
            page.fill("input[name=password]", "any")
            page.click("input[type=submit], button[type=submit]")
            page.wait_for_function("() => window.jupyterapp?.shell !== undefined", timeout=180_000)
            assert "/user/bob/lab" in page.url
            wait_ready(page, timeout=120_000)
            card = page.locator(".hitl-lab-card .hitl-card")
            card.locator(".hitl-form").wait_for(timeout=120_000)
            assert "bob: approve the change?" in card.inner_text()
            page.screenshot(path=str(shots / "notify-link-opens-lab.png"))
            mail_page = context.new_page()  # the email as bob's mail client shows it
            mail_page.set_content(email.get_body(("html",)).get_content())
            mail_page.screenshot(path=str(shots / "notify-email.png"))
            mail_page.close()
            card.locator("input[type=radio]").first.check()  # Approve: Yes
            card.locator("button", has_text="Submit").click()
            card.locator(".hitl-lab-outcome", has_text="accepted").wait_for(timeout=60_000)
        answers = asyncio.run(answers_at_agent(agent.url, task.id))
    assert answers == [{"prompt_id": prompt["prompt_id"], "payload": {"approve": True}}]
    # alice, who registered the task, is told it was answered
    (told,) = until(lambda: mail.to("alice@example.org"), timeout=60, what="alice's news")
    assert told["Subject"] == "Answered: bob: approve the change?"


def test_a_message_recorded_before_a_kill_9_goes_after_the_restart(hub: Hub, mail: Mail) -> None:
    mail.stop()  # the mail server is down: the note waits in the outbox
    try:
        with MockAgent() as agent:
            task = asyncio.run(start_task(agent.url, "specific", responder="carol"))
            with _gateway(hub, "alice") as gw:
                reg = gw.register(agent.url, task.id)
            database = hub.root / "hitl-state" / "gateway.sqlite"

            def tried() -> bool:
                import sqlite3
                from contextlib import closing

                with closing(sqlite3.connect(database)) as db:
                    rows = db.execute(
                        "SELECT attempts FROM notify_notes WHERE reg_id = ? AND kind = 'opened'",
                        (reg["id"],),
                    ).fetchall()
                return bool(rows) and rows[0][0] >= 1

            until(tried, timeout=60, what="a failed attempt, recorded")
            before = hub.service_pid()
            os.kill(before, signal.SIGKILL)
            until(lambda: hub.service_pid() not in (0, before), timeout=120, what="a new service")
            mail.start()
            (email,) = until(lambda: mail.to("carol@example.org"), timeout=120, what="the mail")
    finally:
        if mail._running is None:
            mail.start()
    assert reg["id"] in _link(email)
    assert email["Message-ID"].endswith("@example.org>")


def test_an_open_prompt_for_the_team_and_no_secret_anywhere(
    hub: Hub, mail: Mail, team: TinyServer
) -> None:
    with MockAgent() as agent:
        task = asyncio.run(start_task(agent.url, "consensus", n=2))
        with _gateway(hub, "alice") as gw:
            reg = gw.register(agent.url, task.id)
            until(lambda: team.requests, timeout=60, what="the team's message")
        alice = {"Authorization": f"token {hub.user_token('alice')}"}
        audit = httpx.get(hub.service + "api/audit", headers=alice, timeout=30).text
    (request,) = [r for r in team.requests if reg["id"] in r.body.decode()]
    assert request.path == TEAM_PATH
    assert "It needs 2 people to give the same answer." in request.json()["text"]
    with hub.admin() as admin:
        services = admin.get("services").text
    messages = [r.data.decode(errors="replace") for r in mail.inbox.received]
    seen = {
        "the hub's service list": services,
        "the hub's log (the service's own included)": hub.log(),
        "the audit trail": audit,
        "the emails": "\n".join(messages),
        "the team's message": request.body.decode(),
    }
    for where, text in seen.items():
        assert PASSWORD not in text, where
        assert "TEAMSECRET" not in text, where
    assert mail.inbox.logins and all(login == ("hitl", PASSWORD) for login in mail.inbox.logins)


def test_people_set_their_own_notifications_on_the_hub(hub: Hub) -> None:
    api = hub.service + "api/me/notify"
    bob = {"Authorization": f"token {hub.user_token('bob')}"}
    r = httpx.put(api, headers=bob, json={"enabled": False}, timeout=30)
    assert r.status_code == 200 and r.json()["enabled"] is False
    r = httpx.put(api, headers=bob, json={"webhook": "https://evil.example/x"}, timeout=30)
    assert r.status_code == 400 and "not on the" in r.json()["message"]
    r = httpx.put(api, headers=bob, json={"enabled": True}, timeout=30)
    assert httpx.get(api, headers=bob, timeout=30).json()["enabled"] is True
    r = httpx.get(api, timeout=30)
    assert r.status_code == 401
