"""Notifications from a single Jupyter server's gateway, with a real SMTP server
(aiosmtpd) and a real webhook receiver on 127.0.0.1: who is told what, the link to
answer, people's own choices (``api/me/notify``, hostile input included), and no secret
anywhere it could leak."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers.smtp import SmtpServer, smtp_server
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.tiny_server import Conn, Request, TinyServer, serve
from tests.helpers.until import until_async

pytestmark = pytest.mark.kernel

YES = {"approve": True}
#: The team channel's URL: its path is a credential, shown nowhere.
TEAM_PATH = "/hooks/T0SECRET/B0SECRET/xoxsecretpath"


def _ok(request: Request, conn: Conn) -> None:
    conn.answer({"ok": True}, 200)


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    with smtp_server() as server:
        yield server


@pytest.fixture
def team() -> Iterator[TinyServer]:
    with serve(_ok) as hook:
        yield hook


@pytest.fixture
def own_hook() -> Iterator[TinyServer]:
    with serve(_ok) as hook:
        yield hook


@pytest.fixture
def jp_server_config(
    tmp_path: Path, smtp: SmtpServer, team: TinyServer, own_hook: TinyServer
) -> dict[str, Any]:
    from tests.helpers.jupyter_users import NamedTokens

    own = urlsplit(own_hook.url)
    return {
        "ServerApp": {
            "jpserver_extensions": {"hitl_nb.server": True},
            "identity_provider_class": NamedTokens,
        },
        "HitlServer": {
            "state_dir": str(tmp_path / "hitl-state"),
            "notify_smtp_host": smtp.host,
            "notify_smtp_port": smtp.port,
            "notify_smtp_security": "none",
            "notify_from": "hitl@example.org",
            "notify_address_template": "{name}@example.org",
            "notify_team_webhooks": {"*": team.url + TEAM_PATH},
            "notify_webhook_hosts": [f"http://{own.hostname}:{own.port}"],
            "notify_every": 0.0,  # every note its own message: the test reads each
            # the first test follows the link into JupyterLab (test_answer_page.py: the page)
            "notify_answer_links": "lab",
        },
    }


async def register(api: Any, agent_url: str, task_id: str, user: str = "alice") -> dict[str, Any]:
    status, reg = await api(
        "POST", "hitl/api/tasks", user=user, body={"agent_url": agent_url, "task_id": task_id}
    )
    assert status in (200, 201), reg
    return dict(reg)


def soon(check: Callable[[], Any]) -> Callable[[], Awaitable[Any]]:
    """``check`` as the coroutine ``until_async`` awaits (the server shares this loop)."""

    async def go() -> Any:
        return check()

    return go


def _mail_to(smtp: SmtpServer, address: str) -> list[Any]:
    return [r.message for r in smtp.inbox.received if address in r.rcpt_tos]


async def test_a_prompt_for_bob_emails_bob_a_link_to_answer_and_alice_hears_the_outcome(
    api: Any, agent: MockAgent, smtp: SmtpServer, server_url: str, caplog: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    task = await start_task(agent.url, "specific", responder="bob")
    reg = await register(api, agent.url, task.id)
    (prompt,) = reg["prompts"]
    await until_async(soon(lambda: _mail_to(smtp, "bob@example.org")), what="bob's email")
    (mail,) = _mail_to(smtp, "bob@example.org")
    assert mail["Subject"].startswith("Question for you: bob: approve the change?")
    assert mail["From"] == "hitl@example.org" and mail["Auto-Submitted"] == "auto-generated"
    body = mail.get_body(("plain",)).get_content()
    link = next(w for w in body.split() if w.startswith("http"))
    parts = urlsplit(link)
    # the server's own address (its connection URL), its base URL, then lab
    assert parts.port == urlsplit(server_url).port and parts.hostname in ("localhost", "127.0.0.1")
    assert parts.path == urlsplit(server_url).path + "lab"
    assert parse_qs(parts.query) == {
        "hitl-registration": [reg["id"]],
        "hitl-prompt": [prompt["prompt_id"]],
    }
    assert "token" not in link.lower() and "Alice's agent" in body
    # bob answers; the agent gets exactly one answer; alice (the registrant) is told
    path = f"hitl/api/tasks/{reg['id']}/prompts/{prompt['prompt_id']}/answer"
    status, _ = await api("POST", path, user="bob", body={"payload": YES})
    assert status == 200
    assert len(await answers_at_agent(agent.url, task.id)) == 1
    await until_async(soon(lambda: _mail_to(smtp, "alice@example.org")), what="alice's outcome")
    (told,) = _mail_to(smtp, "alice@example.org")
    assert told["Subject"].startswith("Answered: ")
    assert "answered by bob" in told.get_body(("plain",)).get_content()
    assert len(_mail_to(smtp, "bob@example.org")) == 1  # no reminder once he answered


async def test_a_prompt_for_anyone_goes_to_the_team_channel_whose_url_is_shown_nowhere(
    api: Any, agent: MockAgent, team: TinyServer, gateway: Any, caplog: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    task = await start_task(agent.url, "consensus", n=2)
    reg = await register(api, agent.url, task.id)
    await until_async(soon(lambda: team.requests), what="the team's message")
    (request,) = team.requests
    assert request.path == TEAM_PATH and request.header("idempotency-key")
    text = request.json()["text"]
    assert "Question for the team" not in text  # the subject is email's; chat gets the body
    assert "It needs 2 people to give the same answer." in text
    assert reg["id"] in text  # the link, ours, is live
    _, audit = await api("GET", "hitl/api/audit", user="alice")
    everything = caplog.text + repr(audit) + repr(gateway.settings)
    assert "T0SECRET" not in caplog.text and "T0SECRET" not in repr(audit)
    assert "xoxsecretpath" not in everything.replace(repr(gateway.settings), "")


async def test_bob_may_turn_messages_off_and_it_is_audited_not_sent(
    api: Any, agent: MockAgent, smtp: SmtpServer
) -> None:
    status, mine = await api("GET", "hitl/api/me/notify", user="bob")
    assert status == 200 and mine["enabled"] is True and mine["webhook"] is None
    assert mine["available"] is True and mine["email"] is True
    status, mine = await api("PUT", "hitl/api/me/notify", user="bob", body={"enabled": False})
    assert status == 200 and mine["enabled"] is False
    task = await start_task(agent.url, "specific", responder="bob")
    reg = await register(api, agent.url, task.id)

    async def audited() -> list[Any]:
        _, trail = await api("GET", "hitl/api/audit", user="alice")
        return [e for e in trail["entries"] if e["action"] == "undelivered"]

    entries = await until_async(audited, what="the audit entry")
    assert entries[0]["registration"] == reg["id"]
    assert entries[0]["display_name"] == "user:bob"
    assert entries[0]["reason"] == "bob turned their notifications off"
    assert _mail_to(smtp, "bob@example.org") == []


async def test_bobs_own_webhook_takes_the_place_of_email(
    api: Any, agent: MockAgent, smtp: SmtpServer, own_hook: TinyServer
) -> None:
    url = own_hook.url + "/bob"
    status, mine = await api("PUT", "hitl/api/me/notify", user="bob", body={"webhook": url})
    assert status == 200 and mine["webhook"] == url and mine["enabled"] is True
    task = await start_task(agent.url, "specific", responder="bob")
    await register(api, agent.url, task.id)
    await until_async(soon(lambda: own_hook.requests), what="bob's webhook")
    assert own_hook.requests[0].path == "/bob"
    assert "bob: approve the change?" in own_hook.requests[0].json()["text"]
    assert _mail_to(smtp, "bob@example.org") == []


async def test_bobs_own_teams_workflow_gets_a_card(
    api: Any, agent: MockAgent, smtp: SmtpServer, own_hook: TinyServer
) -> None:
    url = "teams:" + own_hook.url + "/workflows/bob?sig=BOBSIG"
    status, mine = await api("PUT", "hitl/api/me/notify", user="bob", body={"webhook": url})
    assert status == 200 and mine["webhook"] == url
    task = await start_task(agent.url, "specific", responder="bob")
    reg = await register(api, agent.url, task.id)
    await until_async(soon(lambda: own_hook.requests), what="bob's Teams workflow")
    (request,) = own_hook.requests
    assert request.path == "/workflows/bob?sig=BOBSIG"
    content = request.json()["attachments"][0]["content"]
    assert content["type"] == "AdaptiveCard"
    (button,) = content["actions"]
    assert button["title"] == "Answer" and reg["id"] in button["url"]
    assert "bob: approve the change?" in json.dumps(content)
    assert _mail_to(smtp, "bob@example.org") == []


@pytest.mark.parametrize(
    ("body", "words"),
    [
        pytest.param({"webhook": "https://evil.example/hook"}, "not on the", id="host-not-allowed"),
        pytest.param(
            {"webhook": "http://bob:pw@127.0.0.1:1/x"}, "no user name", id="credentials-in-url"
        ),
        pytest.param({"webhook": "http://2130706433/x"}, "not on the", id="ip-spelled-as-number"),
        pytest.param({"webhook": "javascript:alert(1)"}, "http(s)", id="not-http"),
        pytest.param({"webhook": "http://127.0.0.1:1/\r\nX: y"}, "control", id="header-split"),
        pytest.param({"webhook": ["http://127.0.0.1/"]}, "must be a URL", id="not-a-string"),
        pytest.param({"enabled": "yes"}, "true or false", id="enabled-not-bool"),
        pytest.param({"responder": "alice"}, "unknown member", id="unknown-member"),
        pytest.param({"webhook": "x" * 5000}, "at most", id="too-long"),
        pytest.param(
            {"webhook": "signed:http://127.0.0.1:1/x"}, "not given by a URL", id="signed-kind"
        ),
        pytest.param({"webhook": "teams:https://evil.example/w"}, "not on the", id="teams-host"),
    ],
)
async def test_hostile_preferences_are_refused_and_change_nothing(
    api: Any, body: Any, words: str
) -> None:
    status, refused = await api("PUT", "hitl/api/me/notify", user="bob", body=body)
    assert status == 400 and words in refused["message"], refused
    status, mine = await api("GET", "hitl/api/me/notify", user="bob")
    assert (mine["enabled"], mine["webhook"]) == (True, None)


async def test_preferences_need_a_named_user_and_json(api: Any) -> None:
    status, _ = await api("PUT", "hitl/api/me/notify", user=None, body={"enabled": False})
    assert status == 403
    status, refused = await api("PUT", "hitl/api/me/notify", user="bob", raw=b"[1]")
    assert status == 400 and "JSON object" in refused["message"]
    status, refused = await api(
        "PUT", "hitl/api/me/notify", user="bob", raw=b"{}", headers={"Content-Type": "text/xml"}
    )
    assert status == 415
    status, _ = await api("POST", "hitl/api/me/notify", user="bob", body={})
    assert status == 405


async def test_a_prompt_nobody_answered_in_time_is_told_to_its_registrant(
    api: Any, agent: MockAgent, smtp: SmtpServer
) -> None:
    task = await start_task(agent.url, "deadline", deadline_seconds=2)
    await register(api, agent.url, task.id)
    await until_async(soon(lambda: _mail_to(smtp, "alice@example.org")), what="the news")
    (told,) = _mail_to(smtp, "alice@example.org")
    assert told["Subject"].startswith("Expired: ")
    assert "Nobody answered your agent's question before its deadline" in (
        told.get_body(("plain",)).get_content()
    )
