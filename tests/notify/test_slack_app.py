"""The Slack app kind without a network: the tests' signer against slack_sdk's own
verifier, the check of signatures, the blocks a message becomes (the agent's words
neutralised, buttons that never carry a value), one-choice schemas, and the Web API's
failures as the outbox's retries."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from slack_sdk.signature import SignatureVerifier

from hitl_nb._choices import one_choice
from hitl_nb.errors import DeliveryFailed, NotifyRefused
from hitl_nb.notify import PromptFacts, Secret, default_registry
from hitl_nb.notify._links import AnswerLinks
from hitl_nb.notify._messages import compose
from hitl_nb.notify._notes import Batch, Note, team
from hitl_nb.notify._slack_api import SlackApi, check_slack_signature
from hitl_nb.notify._slack_app import (
    SlackAppTarget,
    action_id,
    action_value,
    read_slack_action,
    slack_blocks,
)
from tests.helpers.slack import SECRET, TOKEN, click_body, fake_slack, sign

APPROVAL = {
    "type": "object",
    "required": ["approve"],
    "properties": {"approve": {"type": "boolean"}, "comment": {"type": "string"}},
}


def test_the_tests_signer_is_slacks_own() -> None:
    body = click_body({"action_id": "x", "value": "y"}, "UBOB", "https://hooks.slack.com/x")
    headers = sign(body)
    verifier = SignatureVerifier(SECRET)
    assert verifier.is_valid_request(body, headers)
    assert check_slack_signature(SECRET, headers, body) is None
    assert not SignatureVerifier("other").is_valid_request(body, headers)
    old = sign(body, at=time.time() - 301)
    assert not verifier.is_valid_request(body, old)  # slack_sdk refuses it too
    assert "five minutes" in (check_slack_signature(SECRET, old, body) or "")
    assert check_slack_signature(SECRET, {**headers, "X-Slack-Signature": "v0=00"}, body)
    assert check_slack_signature(SECRET, headers, body + b"x")
    assert check_slack_signature(SECRET, {**headers, "X-Slack-Signature": "v0=é"}, body)
    assert check_slack_signature(SECRET, {}, body)


@pytest.mark.parametrize(
    ("schema", "labels"),
    [
        pytest.param(APPROVAL, ["approve: Yes", "approve: No"], id="approval"),
        pytest.param(
            {"type": "object", "required": ["env"], "properties": {"env": {"enum": ["eu", "us"]}}},
            ["env: eu", "env: us"],
            id="enum",
        ),
        pytest.param({**APPROVAL, "required": ["approve", "comment"]}, [], id="two-required"),
        pytest.param({"type": "object", "properties": {"a": {"type": "boolean"}}}, [], id="none"),
        pytest.param(
            {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}},
            [],
            id="integer",
        ),
        pytest.param(
            {"type": "object", "required": ["e"], "properties": {"e": {"enum": list(range(11))}}},
            [],
            id="too-many",
        ),
        pytest.param(None, [], id="no-schema"),
    ],
)
def test_one_choice_schemas(schema: Any, labels: list[str]) -> None:
    found = one_choice(schema)
    assert [c.label for c in found] == labels
    if labels == ["approve: Yes", "approve: No"]:
        assert [c.payload for c in found] == [{"approve": True}, {"approve": False}]


def _message(question: str, schema: Any = APPROVAL, needed: int = 1) -> Any:
    facts = PromptFacts(
        "reg-1",
        "p-1",
        "http://agent.example/a2a",
        question,
        registered_by="alice",
        deadline=time.time() + 3600,
        needed=needed,
        choices=tuple(c.label for c in one_choice(schema)),
    )
    note = Note("k" * 64, team("*"), "opened", facts, 1.0, 1.0)
    batch = Batch(team("*"), "t", (note,), 1)
    return compose(batch, AnswerLinks("https://hub.example.org/", hub=True), time.time())


def test_a_one_choice_message_has_a_button_per_choice_and_no_value_in_them() -> None:
    message = _message("Deploy <!channel> to https://evil.example? <https://evil|click> @here")
    blocks = slack_blocks(message)
    text = json.dumps(blocks)
    assert "<!channel>" not in text and "<https://evil|click>" not in text
    assert "https://evil" not in text and "@here" not in text  # made dead (zero-width)
    (actions,) = [b for b in blocks if b["type"] == "actions"]
    yes, no = actions["elements"]
    assert read_slack_action(yes) == ("reg-1", "p-1", 0)
    assert read_slack_action(no) == ("reg-1", "p-1", 1)
    assert "true" not in yes["value"] and "false" not in no["value"]
    assert yes["action_id"] != no["action_id"]
    sections = [b for b in blocks if b["type"] == "section"]
    assert all(b["text"]["type"] == "mrkdwn" for b in sections)
    assert any("Anyone on the team" in json.dumps(b) for b in blocks if b["type"] == "context")


def test_any_other_prompt_links_to_the_answer_page() -> None:
    schema = {"type": "object", "properties": {"why": {"type": "string"}}}
    (button,) = next(b for b in slack_blocks(_message("Why?", schema)) if b["type"] == "actions")[
        "elements"
    ]
    assert button["text"]["text"] == "Answer" and "hitl-prompt=p-1" in button["url"]


@pytest.mark.parametrize(
    "action",
    [
        pytest.param({"action_id": "other", "value": action_value("r", "p", 0)}, id="not-ours"),
        pytest.param({"action_id": action_id("r", "p", 0), "value": "{"}, id="bad-value"),
        pytest.param(
            {"action_id": action_id("r", "p", 0), "value": action_value("r", "q", 0)},
            id="another-prompt",
        ),
        pytest.param(
            {"action_id": action_id("r", "p", 0), "value": action_value("r", "p", 1)},
            id="another-choice",
        ),
        pytest.param({"action_id": action_id("r", "p", 0)}, id="no-value"),
    ],
)
def test_a_tampered_action_is_refused(action: dict[str, Any]) -> None:
    with pytest.raises(NotifyRefused):
        read_slack_action(action)


def test_a_slack_app_channel_is_given_by_its_id() -> None:
    kinds = default_registry()
    target = kinds.team_target({"kind": "slack-app", "channel": "C0TEAM"})
    assert target == SlackAppTarget("C0TEAM")
    assert kinds.of(target).transport == "slack-app"
    for wrong in ({"kind": "slack-app"}, {"kind": "slack-app", "channel": "#general x"}):
        with pytest.raises(NotifyRefused):
            kinds.team_target(wrong)


def test_the_web_api_s_failures_are_the_outbox_s_retries(monkeypatch: Any) -> None:
    monkeypatch.setenv("SLACK_TEST_TOKEN", TOKEN)

    async def go() -> None:
        with fake_slack() as slack:
            api = SlackApi(Secret(env="SLACK_TEST_TOKEN"), slack.api_url)
            slack.limit_next, slack.retry_after = 1, 7
            with pytest.raises(DeliveryFailed) as limited:
                await api.call("chat.postMessage", {"channel": "C0TEAM", "text": "hi"})
            assert not limited.value.permanent and limited.value.retry_after == 7
            assert slack.called("chat.postMessage") == []  # nothing posted
            posted = await api.call("chat.postMessage", {"channel": "C0TEAM", "text": "hi"})
            assert posted["ts"] and len(slack.called("chat.postMessage")) == 1
            with pytest.raises(DeliveryFailed) as unknown:
                await api.call("no.such", {})
            assert unknown.value.permanent
            with pytest.raises(DeliveryFailed):  # a response_url elsewhere is not Slack's
                await api.respond("https://evil.example/x", {"text": "x"})
            await api.aclose()
            bad = SlackApi(Secret(env="SLACK_NO_SUCH_TOKEN"), slack.api_url)
            with pytest.raises(DeliveryFailed, match="SLACK_NO_SUCH_TOKEN"):
                await bad.call("chat.postMessage", {})
            await bad.aclose()

    asyncio.run(go())
