"""A Slack app on a single Jupyter server's gateway: messages with buttons posted to a
fake Slack Web API on 127.0.0.1, clicks and modal submissions signed as Slack signs
them, the mock agent answering. Who may answer is the gateway's S-3; each click
forwards at most once; the message says what became of the prompt."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hitl_nb.mock_agent import MockAgent, Scenario, Step
from hitl_nb.notify._slack_app import action_id, action_value
from tests.helpers.slack import (
    SECRET,
    TOKEN,
    FakeSlack,
    click_body,
    fake_slack,
    sign,
    submit_body,
)
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.until import until_async

pytestmark = pytest.mark.kernel

MOUNT = "hitl/slack/interactions"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with fake_slack(emails={"UDAVE": "dave@example.org"}) as running:
        yield running


@pytest.fixture
def jp_server_config(tmp_path: Path, slack: FakeSlack, monkeypatch: Any) -> dict[str, Any]:
    from tests.helpers.jupyter_users import NamedTokens

    monkeypatch.setenv("TEST_SLACK_TOKEN", TOKEN)
    secret = tmp_path / "signing-secret"
    secret.write_text(SECRET + "\n")
    return {
        "ServerApp": {
            "jpserver_extensions": {"hitl_nb.server": True},
            "identity_provider_class": NamedTokens,
        },
        "HitlServer": {
            "state_dir": str(tmp_path / "hitl-state"),
            "notify_team_webhooks": {"*": {"kind": "slack-app", "channel": "C0TEAM"}},
            "notify_slack_token_env": "TEST_SLACK_TOKEN",
            "notify_slack_signing_secret_file": str(secret),
            "notify_slack_api_url": slack.api_url,
            "notify_slack_users": {"UBOB": "bob", "UCAROL": "carol"},
            "notify_slack_match_email": True,
            "notify_address_template": "{name}@example.org",
            "notify_every": 0.0,
        },
    }


async def register(api: Any, agent_url: str, task_id: str) -> dict[str, Any]:
    status, reg = await api(
        "POST", "hitl/api/tasks", user="alice", body={"agent_url": agent_url, "task_id": task_id}
    )
    assert status in (200, 201), reg
    return dict(reg)


async def posted(slack: FakeSlack, count: int = 1) -> list[dict[str, Any]]:
    async def enough() -> list[dict[str, Any]] | None:
        got = slack.called("chat.postMessage")
        return got if len(got) >= count else None

    return await until_async(enough, what="the Slack message")


def buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    (actions,) = [b for b in message["blocks"] if b["type"] == "actions"]
    return list(actions["elements"])


async def click(
    server_url: str, body: bytes, headers: dict[str, str] | None = None
) -> httpx.Response:
    async with httpx.AsyncClient() as client:
        return await client.post(server_url + MOUNT, content=body, headers=headers or sign(body))


async def updates_saying(slack: FakeSlack, words: str) -> dict[str, Any]:
    async def found() -> dict[str, Any] | None:
        for update in slack.called("chat.update"):
            if words in update["text"]:
                return update
        return None

    return await until_async(found, what=f"a chat.update saying {words!r}")


async def test_bobs_button_forwards_one_answer_and_the_message_shows_the_outcome(
    api: Any, agent: MockAgent, slack: FakeSlack, server_url: str
) -> None:
    task = await start_task(agent.url, "approval")
    reg = await register(api, agent.url, task.id)
    (prompt,) = reg["prompts"]
    (message,) = await posted(slack)
    assert message["channel"] == "C0TEAM" and "Approve the deployment" in message["text"]
    yes, no = buttons(message)
    assert [yes["text"]["text"], no["text"]["text"]] == ["Approve: Yes", "Approve: No"]
    assert "true" not in yes["value"].lower() and reg["id"] in yes["value"]
    body = click_body(yes, "UBOB", slack.response_url())
    headers = sign(body)
    answered = await click(server_url, body, headers)
    assert answered.status_code == 200
    assert await until_async(lambda: answers_at_agent(agent.url, task.id), what="the answer")
    update = await updates_saying(slack, "Answered by bob")
    assert update["ts"] == "1700000000.000001" and update["channel"] == "C0TEAM"
    assert not [b for b in update["blocks"] if b["type"] == "actions"]  # the buttons went
    # the same request again (a replay): acknowledged, nothing more
    again = await click(server_url, body, headers)
    assert again.status_code == 200
    answers = await answers_at_agent(agent.url, task.id)
    assert len(answers) == 1 and prompt["prompt_id"] in json.dumps(answers)
    _, audit = await api("GET", "hitl/api/audit", user="alice")
    entries = [e for e in audit["entries"] if e.get("action") == "forwarded"]
    assert entries and "bob (Slack UBOB)" in json.dumps(entries)


async def test_bob_and_carol_make_a_consensus_and_the_message_counts_them(
    api: Any, agent: MockAgent, slack: FakeSlack, server_url: str
) -> None:
    task = await start_task(agent.url, "consensus", n=2)
    await register(api, agent.url, task.id)
    (message,) = await posted(slack)
    yes = buttons(message)[0]
    first = await click(server_url, click_body(yes, "UBOB", slack.response_url()))
    assert first.status_code == 200
    await updates_saying(slack, "1 of 2 agree so far")
    assert await answers_at_agent(agent.url, task.id) == []
    second = await click(server_url, click_body(yes, "UCAROL", slack.response_url()))
    assert second.status_code == 200
    update = await updates_saying(slack, "Answered by bob, carol")
    assert not [b for b in update["blocks"] if b["type"] == "actions"]
    assert len(await answers_at_agent(agent.url, task.id)) == 1


async def _ephemeral(slack: FakeSlack, words: str) -> dict[str, Any]:
    async def found() -> dict[str, Any] | None:
        said = [r for r in slack.responses if words in r.get("text", "")]
        return said[0] if said else None

    return await until_async(found, what=f"an ephemeral message saying {words!r}")


async def test_bob_is_refused_on_a_prompt_for_carol_and_an_unmapped_user_on_any(
    api: Any, agent: MockAgent, slack: FakeSlack, server_url: str
) -> None:
    task = await start_task(agent.url, "specific", responder="carol")
    reg = await register(api, agent.url, task.id)
    (prompt,) = reg["prompts"]
    ids = (reg["id"], prompt["prompt_id"], 0)
    forged = {"action_id": action_id(*ids), "value": action_value(*ids)}
    refused = await click(server_url, click_body(forged, "UBOB", slack.response_url()))
    assert refused.status_code == 200  # acknowledged; the answer is refused after
    told = await _ephemeral(slack, "You cannot answer this")
    assert told["response_type"] == "ephemeral" and "carol" in told["text"]
    stranger = await click(server_url, click_body(forged, "UEVE", slack.response_url()))
    assert stranger.status_code == 200
    await _ephemeral(slack, "not linked to a user here")
    # dave is found by his email (users.info), and is not carol either
    await click(server_url, click_body(forged, "UDAVE", slack.response_url()))

    async def dave_refused() -> bool:
        _, audit = await api("GET", "hitl/api/audit", user="alice")
        return "dave (Slack UDAVE)" in json.dumps(audit)

    await until_async(dave_refused, what="dave refused as dave, in the audit trail")
    assert {"user": "UDAVE"} in slack.called("users.info")
    assert await answers_at_agent(agent.url, task.id) == []


async def test_bad_requests_are_refused_and_forward_nothing(
    api: Any, agent: MockAgent, slack: FakeSlack, server_url: str
) -> None:
    task = await start_task(agent.url, "approval")
    await register(api, agent.url, task.id)
    (message,) = await posted(slack)
    yes = buttons(message)[0]
    body = click_body(yes, "UBOB", slack.response_url())
    wrong = sign(body, secret="not-the-secret")
    assert (await click(server_url, body, wrong)).status_code == 401
    stale = sign(body, at=time.time() - 301)
    assert (await click(server_url, body, stale)).status_code == 401
    tampered = body.replace(b"UBOB", b"UCAROL")
    assert (await click(server_url, tampered, sign(body))).status_code == 401
    huge = b"payload=" + b"x" * (1024 * 1024)
    assert (await click(server_url, huge)).status_code == 413
    assert (await click(server_url, b"payload=%7Bnot+json")).status_code == 400
    unknown = {**yes, "action_id": "hitl-choice:9:0000000000000000"}
    assert (await click(server_url, click_body(unknown, "UBOB", "x"))).status_code == 400
    ids = ("no-such-registration", "no-such-prompt", 0)
    ghost = {"action_id": action_id(*ids), "value": action_value(*ids)}
    assert (await click(server_url, click_body(ghost, "UBOB", "x"))).status_code == 404
    # the service keeps serving: a good click after all that is taken, once
    assert (await click(server_url, body)).status_code == 200
    await updates_saying(slack, "Answered by bob")
    assert len(await answers_at_agent(agent.url, task.id)) == 1


async def test_a_rate_limited_post_is_retried_and_posted_once(
    api: Any, agent: MockAgent, slack: FakeSlack, server_url: str
) -> None:
    slack.limit_next = 1
    task = await start_task(agent.url, "approval")
    await register(api, agent.url, task.id)
    await posted(slack)
    assert slack.limit_next == 0  # the first try was answered 429
    assert len(slack.called("chat.postMessage")) == 1


FLAT_FORM = {
    "type": "object",
    "additionalProperties": False,
    "required": ["title", "replicas", "env"],
    "properties": {
        "title": {"type": "string", "maxLength": 40},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 9},
        "env": {"enum": ["eu", "us"]},
        "ship": {"type": "boolean"},
        "note": {"type": "string"},
    },
}


async def test_a_flat_form_is_answered_in_a_modal_and_its_errors_shown_on_its_fields(
    api: Any, slack: FakeSlack, server_url: str
) -> None:
    form = Scenario("flat", "A flat form.", steps=[Step("Roll out build 41?", FLAT_FORM)])
    with MockAgent(scenarios=[form]) as agent:
        task = await start_task(agent.url, "flat")
        await register(api, agent.url, task.id)
        (message,) = await posted(slack)
        (answer,) = buttons(message)
        assert answer["text"]["text"] == "Answer" and "url" not in answer
        opened = await click(server_url, click_body(answer, "UBOB", slack.response_url()))
        assert opened.status_code == 200
        (call,) = slack.called("views.open")
        assert call["trigger_id"] == "123.456.abc"
        view = call["view"]
        kinds = [b["element"]["type"] for b in view["blocks"] if b["type"] == "input"]
        assert kinds == [
            "plain_text_input",
            "number_input",
            "static_select",
            "radio_buttons",
            "plain_text_input",
        ]

        def values(replicas: str) -> dict[str, Any]:
            return {
                "f0": {"value": {"type": "plain_text_input", "value": "Build 41"}},
                "f1": {"value": {"type": "number_input", "value": replicas}},
                "f2": {"value": {"type": "static_select", "selected_option": {"value": "1"}}},
                "f3": {"value": {"type": "radio_buttons", "selected_option": None}},
                "f4": {"value": {"type": "plain_text_input", "value": None}},
            }

        # the gateway's 422 (maximum 9) on the field it is about
        bad = await click(server_url, submit_body(view, "UBOB", values("12")))
        assert bad.status_code == 200
        shown = bad.json()
        assert shown["response_action"] == "errors" and list(shown["errors"]) == ["f1"]
        # a wrong-typed field, shown on it; an extra one refused
        typed = await click(server_url, submit_body(view, "UBOB", values("2.5")))
        assert typed.json()["errors"] == {"f1": "Enter a whole number."}
        extra = {**values("3"), "f9": {"value": {"type": "plain_text_input", "value": "x"}}}
        assert (await click(server_url, submit_body(view, "UBOB", extra))).status_code == 400
        # someone not linked: told on the modal, nothing taken
        eve = await click(server_url, submit_body(view, "UEVE", values("3")))
        assert "not linked" in eve.json()["errors"]["f0"]
        assert await answers_at_agent(agent.url, task.id) == []
        good = await click(server_url, submit_body(view, "UBOB", values("3")))
        assert good.status_code == 200 and not good.content  # the modal closes
        answers = await until_async(lambda: answers_at_agent(agent.url, task.id), what="it")
        assert answers[0]["payload"] == {"title": "Build 41", "replicas": 3, "env": "us"}
        update = await updates_saying(slack, "Answered by bob")
        assert not [b for b in update["blocks"] if b["type"] == "actions"]
        assert len(await answers_at_agent(agent.url, task.id)) == 1


async def test_the_people_a_prompt_names_get_it_as_a_personal_message_with_its_buttons(
    api: Any, agent: MockAgent, slack: FakeSlack, server_url: str
) -> None:
    # carol by the users table, dave by his email (users.lookupByEmail, then back)
    for name, slack_id in (("carol", "UCAROL"), ("dave", "UDAVE")):
        task = await start_task(agent.url, "specific", responder=name)
        await register(api, agent.url, task.id)

        async def to_them(slack_id: str = slack_id) -> dict[str, Any] | None:
            sent = [m for m in slack.called("chat.postMessage") if m["channel"] == slack_id]
            return sent[0] if sent else None

        message = await until_async(to_them, what=f"{name}'s personal message")
        assert "You may answer" in json.dumps(message["blocks"])
        yes = buttons(message)[0]
        assert yes["text"]["text"].endswith(": Yes")
        taken = await click(server_url, click_body(yes, slack_id, slack.response_url()))
        assert taken.status_code == 200
        await updates_saying(slack, f"Answered by {name}")
        assert len(await answers_at_agent(agent.url, task.id)) == 1
    assert {"email": "dave@example.org"} in slack.called("users.lookupByEmail")
    assert not [m for m in slack.called("chat.postMessage") if m["channel"] == "C0TEAM"]
