"""A Slack app on a real JupyterHub: the hub service configured as an administrator
would (``configure(c, notify={"slack": ...})``), a fake Slack Web API on 127.0.0.1
(tests/helpers/slack.py), the mock agent. Slack's requests are signed as Slack signs
them and reach the service through the hub's proxy, at the request URL docs/notify.md
gives (``{hub}/services/hitl/slack/interactions``), without anyone's hub login.

The module has its own hub: a Slack app turns on notifications and personal messages,
which the session's hub (tests/hub/conftest.py) and test_notify.py's (bob's email)
must not get.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hitl_nb.client import GatewayClient, GatewayInfo
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notify._slack_app import action_id, action_value
from tests.helpers.hub import Hub, running_hub
from tests.helpers.slack import SECRET, TOKEN, FakeSlack, click_body, fake_slack, sign
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.until import until

pytestmark = [pytest.mark.slow, pytest.mark.kernel]

TOKEN_ENV = "HITL_TEST_SLACK_BOT_TOKEN"


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    with fake_slack(emails={"UDORA": "dora@example.org"}) as running:
        yield running


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory, slack: FakeSlack) -> Iterator[Hub]:
    root = tmp_path_factory.mktemp("slack-hub")
    secret = root / "slack-signing-secret"
    secret.write_text(SECRET + "\n")
    notify = {
        "team_webhooks": {"*": {"kind": "slack-app", "channel": "C0TEAM"}},
        "slack": {
            "token_env": TOKEN_ENV,
            "signing_secret_file": str(secret),
            "api_url": slack.api_url,
            "users": {"UBOB": "bob", "UCAROL": "carol"},
            "match_email": True,  # dora (a hub user), by her email (users.info)
        },
        "addresses": "{name}@example.org",
        "link_url": "{hub_url}",
        "every": 0,
    }
    # configure() reads the token's variable from the hub's environment
    os.environ[TOKEN_ENV] = TOKEN
    try:
        with running_hub(
            root,
            {TOKEN_ENV: TOKEN},
            # a killed service's clicks are adopted by its successor after this
            service_options={"notify": notify, "lease_seconds": 1.5},
        ) as running:
            yield running
    finally:
        del os.environ[TOKEN_ENV]


def _register(hub: Hub, agent_url: str, task_id: str) -> dict[str, Any]:
    info = GatewayInfo(hub.service, hub.user_token("alice"), "alice", hub.service + "api/")
    with GatewayClient(info) as gw:
        return dict(gw.register(agent_url, task_id))


def _interactions(hub: Hub) -> str:
    """The request URL of the Slack app's manifest: through the hub's proxy."""
    return hub.public_service + "slack/interactions"


def _click(hub: Hub, body: bytes, headers: dict[str, str] | None = None) -> httpx.Response:
    # no hub login: Slack's signature is the credential
    return httpx.post(_interactions(hub), content=body, headers=headers or sign(body), timeout=30)


def _message(slack: FakeSlack, reg_id: str, channel: str = "C0TEAM") -> dict[str, Any]:
    """The message the app posted to ``channel`` about registration ``reg_id``, with
    the ``ts`` Slack gave it."""

    def found() -> dict[str, Any] | None:
        for message, ts in list(slack.posts):
            if message["channel"] == channel and reg_id in json.dumps(message["blocks"]):
                return {**message, "ts": ts}
        return None

    message: dict[str, Any] = until(found, timeout=60, what=f"the Slack message in {channel}")
    return message


def _buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    (actions,) = [b for b in message["blocks"] if b["type"] == "actions"]
    return list(actions["elements"])


def _update(slack: FakeSlack, message: dict[str, Any], words: str) -> dict[str, Any]:
    """The ``chat.update`` of ``message`` that says ``words``."""

    def found() -> dict[str, Any] | None:
        for update in slack.called("chat.update"):
            if update["ts"] == message["ts"] and words in update["text"]:
                return update
        return None

    update: dict[str, Any] = until(found, timeout=60, what=f"a chat.update saying {words!r}")
    return update


def _audit(hub: Hub) -> str:
    alice = {"Authorization": f"token {hub.user_token('alice')}"}
    r = httpx.get(hub.service + "api/audit", headers=alice, timeout=30)
    assert r.status_code == 200, r.text
    return r.text


def test_a_click_through_the_hub_answers_once_and_bad_ones_forward_nothing(
    hub: Hub, slack: FakeSlack, tmp_path: Path
) -> None:
    with MockAgent(store=tmp_path / "agent.sqlite") as agent:
        task = asyncio.run(start_task(agent.url, "approval"))
        reg = _register(hub, agent.url, task.id)
        (prompt,) = reg["prompts"]
        message = _message(slack, reg["id"])
        yes, _no = _buttons(message)
        body = click_body(yes, "UBOB", slack.response_url())
        headers = sign(body)
        # refused before anything is read: a wrong secret, a stale timestamp
        assert _click(hub, body, sign(body, secret="not-the-secret")).status_code == 401
        assert _click(hub, body, sign(body, at=time.time() - 301)).status_code == 401
        assert _click(hub, body.replace(b"UBOB", b"UCAROL"), headers).status_code == 401
        assert asyncio.run(answers_at_agent(agent.url, task.id)) == []
        # bob's click, through the proxy: acknowledged, then forwarded once
        assert _click(hub, body, headers).status_code == 200
        answers = until(
            lambda: asyncio.run(answers_at_agent(agent.url, task.id)), what="bob's answer"
        )
        assert answers == [{"prompt_id": prompt["prompt_id"], "payload": {"approve": True}}]
        update = _update(slack, message, "Answered by bob")
        assert update["channel"] == "C0TEAM"
        assert not [b for b in update["blocks"] if b["type"] == "actions"]  # the buttons went
        # the same signed request again (a replay): acknowledged, nothing more
        assert _click(hub, body, headers).status_code == 200
        audit = _audit(hub)
        assert "bob (Slack UBOB)" in audit
        # the token and the secret are on none of the service's command line (the hub's
        # service list, its log) or its log, nor in the audit trail
        with hub.admin() as admin:
            services = admin.get("services").text
        for where, text in {"services": services, "log": hub.log(), "audit": audit}.items():
            assert TOKEN not in text and SECRET not in text, where

        # specific:carol: bob's click (a forged button: carol's message is hers) is refused
        theirs = asyncio.run(start_task(agent.url, "specific", responder="carol"))
        reg = _register(hub, agent.url, theirs.id)
        (prompt,) = reg["prompts"]
        _message(slack, reg["id"], channel="UCAROL")  # her personal message
        ids = (reg["id"], prompt["prompt_id"], 0)
        forged = {"action_id": action_id(*ids), "value": action_value(*ids)}
        said = len(slack.responses)
        assert _click(hub, click_body(forged, "UBOB", slack.response_url())).status_code == 200
        told = until(lambda: slack.responses[said:], timeout=60, what="bob's ephemeral answer")[0]
        assert told["response_type"] == "ephemeral"
        assert "You cannot answer this" in told["text"] and "carol" in told["text"]
        time.sleep(1)  # the service's next round, which must not forward it either
        assert asyncio.run(answers_at_agent(agent.url, theirs.id)) == []
        assert len(asyncio.run(answers_at_agent(agent.url, task.id))) == 1


def test_bob_and_carol_make_a_consensus_on_the_hub(
    hub: Hub, slack: FakeSlack, tmp_path: Path
) -> None:
    with MockAgent(store=tmp_path / "agent.sqlite") as agent:
        task = asyncio.run(start_task(agent.url, "consensus", n=2))
        reg = _register(hub, agent.url, task.id)
        message = _message(slack, reg["id"])
        yes = _buttons(message)[0]
        assert _click(hub, click_body(yes, "UBOB", slack.response_url())).status_code == 200
        _update(slack, message, "1 of 2 agree so far")
        assert asyncio.run(answers_at_agent(agent.url, task.id)) == []
        assert _click(hub, click_body(yes, "UCAROL", slack.response_url())).status_code == 200
        update = _update(slack, message, "Answered by bob, carol")
        assert not [b for b in update["blocks"] if b["type"] == "actions"]
        answers = until(
            lambda: asyncio.run(answers_at_agent(agent.url, task.id)), what="the answer"
        )
        assert len(answers) == 1


@pytest.mark.timeout(300)
def test_a_click_acknowledged_then_the_service_killed_9_is_answered_once_by_its_successor(
    hub: Hub, slack: FakeSlack, tmp_path: Path
) -> None:
    with MockAgent(store=tmp_path / "agent.sqlite") as agent:
        task = asyncio.run(start_task(agent.url, "approval"))
        reg = _register(hub, agent.url, task.id)
        message = _message(slack, reg["id"])
        yes = _buttons(message)[0]
        # dora is found by her email: users.info is held, so the service is caught after
        # the acknowledgement and before the answer
        slack.users_info_gate.clear()
        try:
            body = click_body(yes, "UDORA", slack.response_url())
            headers = sign(body)
            asked = len(slack.called("users.info"))
            assert _click(hub, body, headers).status_code == 200
            until(
                lambda: len(slack.called("users.info")) > asked,
                timeout=30,
                what="who dora is, asked",
            )
            before = hub.service_pid()
            os.kill(before, signal.SIGKILL)
        finally:
            slack.users_info_gate.set()
        assert asyncio.run(answers_at_agent(agent.url, task.id)) == []
        until(lambda: hub.service_pid() not in (0, before), timeout=120, what="a new service")
        answers = until(
            lambda: asyncio.run(answers_at_agent(agent.url, task.id)),
            timeout=120,
            what="the answer at the agent, from the restarted service",
        )
        assert answers[0]["payload"] == {"approve": True}
        _update(slack, message, "Answered by dora")
        # the replay of the same request, after the restart, is taken once only
        assert _click(hub, body, headers).status_code == 200
        time.sleep(3)  # rounds of the restarted service, which must not answer again
        assert len(asyncio.run(answers_at_agent(agent.url, task.id))) == 1
