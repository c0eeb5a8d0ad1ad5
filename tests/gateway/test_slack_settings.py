"""A Slack app's settings are checked when the gateway's notifier is made: a missing
or misplaced bot token or signing secret stops the start, naming the setting (never a
secret's value)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.errors import NotifyRefused
from hitl_nb.gateway import GatewaySettings, GatewayStore, Notifier, open_store

TEAM = {"*": {"kind": "slack-app", "channel": "C0TEAM"}}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GatewayStore]:
    """A store for the notifier, closed after (Python 3.13 warns of an unclosed one)."""
    made = open_store(None, tmp_path)
    yield made
    asyncio.run(made.close())


def _notifier(store: GatewayStore, **given: Any) -> Notifier:
    settings = GatewaySettings(notify_team_webhooks=TEAM, **given)
    return Notifier(settings, store, lambda: "http://h/", hub=False)


@pytest.mark.parametrize(
    ("given", "named"),
    [
        pytest.param({}, "notify_slack_token_env", id="no-token"),
        pytest.param(
            {"notify_slack_token_env": "HITL_TEST_NO_SUCH"}, "notify_slack_token_env", id="unset"
        ),
        pytest.param(
            {"notify_slack_token_env": "HITL_TEST_TOKEN", "notify_slack_token_file": "/x"},
            "notify_slack_token_env and notify_slack_token_file",
            id="two-places",
        ),
        pytest.param(
            {"notify_slack_token_env": "HITL_TEST_TOKEN"},
            "notify_slack_signing_secret_env",
            id="no-secret",
        ),
        pytest.param(
            {
                "notify_slack_token_env": "HITL_TEST_TOKEN",
                "notify_slack_signing_secret_file": "/nonexistent/secret",
            },
            "notify_slack_signing_secret_file",
            id="secret-file-missing",
        ),
        pytest.param(
            {
                "notify_slack_token_env": "HITL_TEST_TOKEN",
                "notify_slack_signing_secret_env": "HITL_TEST_SECRET",
                "notify_slack_api_url": "ftp://slack",
            },
            "notify_slack_api_url",
            id="api-url",
        ),
        pytest.param(
            {
                "notify_slack_token_env": "HITL_TEST_TOKEN",
                "notify_slack_signing_secret_env": "HITL_TEST_SECRET",
                "notify_slack_users": {"U1": 3},
            },
            "notify_slack_users",
            id="users",
        ),
    ],
)
def test_bad_settings_are_refused_naming_the_setting(
    store: GatewayStore, monkeypatch: Any, given: dict[str, Any], named: str
) -> None:
    monkeypatch.setenv("HITL_TEST_TOKEN", "xoxb-secret-value")
    monkeypatch.setenv("HITL_TEST_SECRET", "signing-secret-value")
    with pytest.raises(NotifyRefused) as refused:
        _notifier(store, **given)
    assert named in str(refused.value)
    assert "secret-value" not in str(refused.value)


def test_good_settings_make_a_slack_app(store: GatewayStore, monkeypatch: Any) -> None:
    monkeypatch.setenv("HITL_TEST_TOKEN", "xoxb-secret-value")
    monkeypatch.setenv("HITL_TEST_SECRET", "signing-secret-value")
    made = _notifier(
        store,
        notify_slack_token_env="HITL_TEST_TOKEN",
        notify_slack_signing_secret_env="HITL_TEST_SECRET",
        notify_slack_users={"UBOB": "bob"},
    )
    assert made.slack is not None and made.slack.people.table == {"UBOB": "bob"}
    assert "secret-value" not in repr(made.slack)
    plain = GatewaySettings(notify_team_webhooks={"*": "https://hooks.example.org/x"})
    assert Notifier(plain, store, lambda: "http://h/", hub=False).slack is None
