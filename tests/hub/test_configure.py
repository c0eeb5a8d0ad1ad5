"""``configure(c)``: what the one line writes into a hub's config, and what it keeps.

The config object is traitlets' own (what ``jupyterhub_config.py`` gets as ``c``);
that the hub accepts the result is shown by the real hub of this folder's other tests,
which is configured by the same line.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from traitlets import TraitError
from traitlets.config import Config

from hitl_nb.hub import SERVICE_NAME, configure, service_scopes

SCOPES = ["access:services!service=hitl", "read:services!service=hitl"]


def _roles(c: Config) -> dict[str, dict]:
    return {r["name"]: r for r in c.JupyterHub.load_roles}


def test_a_fresh_config_gets_the_service_and_the_default_roles_with_the_scopes(
    tmp_path: Path,
) -> None:
    c = Config()
    entry = configure(c, port=10101, state_dir=tmp_path / "state")
    (service,) = c.JupyterHub.services
    assert service == entry
    assert service["name"] == SERVICE_NAME == "hitl"
    assert service["url"] == "http://127.0.0.1:10101"
    assert service["oauth_no_confirm"] is True
    command = service["command"]
    assert command[1:4] == ["hub-service", "--state-dir", str((tmp_path / "state").resolve())]
    assert Path(command[0]).name == "hitl-nb" or command[:3] == [
        sys.executable,
        "-m",
        "hitl_nb.cli",
    ]
    assert service["environment"] == {}
    roles = _roles(c)
    assert roles["user"]["scopes"] == ["self", *SCOPES]  # the hub's default kept
    assert roles["server"]["scopes"] == ["users:activity!user", "access:servers!server", *SCOPES]
    assert c.Spawner.environment == {"HITL_NB_HUB_SERVICE": "hitl"}
    assert service_scopes() == SCOPES


def test_the_admins_roles_services_and_environment_are_kept(tmp_path: Path) -> None:
    c = Config()
    c.JupyterHub.services = [{"name": "idle-culler", "command": ["cull"]}]
    c.JupyterHub.load_roles = [
        {"name": "user", "scopes": ["self", "read:groups"], "groups": ["staff"]},
        {"name": "culler", "scopes": ["admin:servers"], "services": ["idle-culler"]},
    ]
    c.Spawner.environment = {"LANG": "C.UTF-8"}
    configure(c, port=9000, state_dir=tmp_path)
    assert [s["name"] for s in c.JupyterHub.services] == ["idle-culler", "hitl"]
    roles = _roles(c)
    assert roles["user"] == {
        "name": "user",
        "scopes": ["self", "read:groups", *SCOPES],
        "groups": ["staff"],
    }
    assert roles["culler"] == {
        "name": "culler",
        "scopes": ["admin:servers"],
        "services": ["idle-culler"],
    }
    assert roles["server"]["scopes"][-2:] == SCOPES
    assert c.Spawner.environment == {"LANG": "C.UTF-8", "HITL_NB_HUB_SERVICE": "hitl"}


def test_configuring_twice_keeps_one_service_and_no_duplicate_scopes(tmp_path: Path) -> None:
    c = Config()
    configure(c, state_dir=tmp_path)
    configure(c, port=10102, state_dir=tmp_path)
    (service,) = c.JupyterHub.services
    assert service["url"].endswith(":10102")
    assert _roles(c)["user"]["scopes"] == ["self", *SCOPES]


def test_server_token_scopes_set_by_the_admin_get_the_scopes_too(tmp_path: Path) -> None:
    c = Config()
    c.Spawner.server_token_scopes = ["users:activity!user"]
    configure(c, state_dir=tmp_path)
    assert c.Spawner.server_token_scopes == ["users:activity!user", *SCOPES]


def test_the_options_land_on_the_command_line_and_secrets_in_the_environment(
    tmp_path: Path,
) -> None:
    c = Config()
    db = f"sqlite:///{tmp_path}/gw.sqlite"
    configure(
        c,
        db_url=db,
        name="prompts",
        ip="10.0.0.5",
        state_dir=tmp_path,
        allowed_agent_hosts=["agents.example.org", "*.corp.example"],
        push_url="https://hub.example.org/services/prompts/",
        mock_agent=False,
    )
    (service,) = c.JupyterHub.services
    command = service["command"]
    assert service["url"] == "http://10.0.0.5:10101" and service["name"] == "prompts"
    assert command.count("--allowed-agent-host") == 2 and "*.corp.example" in command
    assert "--no-mock-agent" in command
    assert command[command.index("--push-url") + 1] == "https://hub.example.org/services/prompts/"
    assert service["environment"] == {"HITL_NB_DB_URL": db}
    assert db not in " ".join(command)  # the hub shows a service's command to its readers
    assert _roles(c)["user"]["scopes"][-2:] == service_scopes("prompts")
    assert c.Spawner.environment["HITL_NB_HUB_SERVICE"] == "prompts"


@pytest.mark.parametrize(
    "db_url",
    [
        "postgresql://u:secret@db/",
        "mysql://u:secret@x",
        "sqlite://",
        "sqlite:///:memory:",
        "gw.sqlite",
    ],
)
def test_a_db_url_it_cannot_open_fails_when_the_hub_reads_its_config(
    db_url: str, tmp_path: Path
) -> None:
    with pytest.raises(ValueError) as refused:
        configure(Config(), db_url=db_url, state_dir=tmp_path)
    assert "secret" not in str(refused.value)  # a password is never echoed


def test_a_postgresql_url_stays_off_the_command_line(tmp_path: Path) -> None:
    c = Config()
    db = "postgresql://hitl:secret@db.example:5432/hitl"
    configure(c, db_url=db, state_dir=tmp_path)
    (service,) = c.JupyterHub.services
    assert service["environment"] == {"HITL_NB_DB_URL": db}
    assert "secret" not in " ".join(service["command"])


TOKEN = "0123456789abcdef0123"


def test_replicas_become_external_services_with_their_scopes(tmp_path: Path) -> None:
    c = Config()
    db = "postgresql://hitl@db.example/hitl"
    configure(
        c,
        db_url=db,
        state_dir=tmp_path,
        replicas=[
            {"url": "http://10.0.0.2:10101", "api_token": TOKEN},
            {"name": "hitl-east", "url": "https://east.example:443", "api_token": TOKEN * 2},
        ],
    )
    managed, second, east = c.JupyterHub.services
    assert managed["name"] == "hitl" and "command" in managed
    assert second == {
        "name": "hitl-2",
        "url": "http://10.0.0.2:10101",
        "api_token": TOKEN,
        "oauth_no_confirm": True,
        "display": False,
        "info": {"description": "a replica of the hitl service 'hitl'", "replica_of": "hitl"},
    }
    assert "command" not in second and east["name"] == "hitl-east"
    user = _roles(c)["user"]["scopes"]
    for name in ("hitl", "hitl-2", "hitl-east"):
        assert set(service_scopes(name)) <= set(user)
    assert c.Spawner.environment["HITL_NB_HUB_SERVICE"] == "hitl"  # kernels find the first
    configure(
        c, db_url=db, state_dir=tmp_path, replicas=[{"url": "http://h:1", "api_token": TOKEN}]
    )
    assert [s["name"] for s in c.JupyterHub.services] == ["hitl", "hitl-2"]  # no duplicates


@pytest.mark.parametrize(
    ("db_url", "replica", "words"),
    [
        (None, {"url": "http://h:1", "api_token": TOKEN}, "share one database"),
        ("sqlite:///x.sqlite", {"url": "http://h:1", "api_token": TOKEN}, "share one database"),
        ("postgresql://h/db", {"api_token": TOKEN}, "needs a url"),
        ("postgresql://h/db", {"url": "javascript:alert(1)", "api_token": TOKEN}, "needs a url"),
        ("postgresql://h/db", {"url": "http://h:1"}, "api_token"),
        ("postgresql://h/db", {"url": "http://h:1", "api_token": "short"}, "api_token"),
        ("postgresql://h/db", {"url": "http://h:1", "api_token": TOKEN, "cmd": "x"}, "unknown"),
    ],
)
def test_replicas_it_cannot_run_are_refused_when_the_hub_reads_its_config(
    db_url: str | None, replica: dict[str, str], words: str, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=words) as refused:
        configure(Config(), db_url=db_url, state_dir=tmp_path, replicas=[replica])
    assert TOKEN not in str(refused.value)


def test_a_replicas_environment_names_it_and_its_database() -> None:
    from hitl_nb.hub import replica_environment

    env = replica_environment(
        "hitl-2",
        TOKEN,
        "http://hub:8081/hub/api",
        "http://0.0.0.0:10101",
        "postgresql://hitl@db/hitl",
        public_url="https://hub.example.org/",
    )
    assert env["JUPYTERHUB_CLIENT_ID"] == "service-hitl-2"
    assert env["JUPYTERHUB_SERVICE_PREFIX"] == "/services/hitl-2/"
    assert env["JUPYTERHUB_PUBLIC_URL"] == "https://hub.example.org/services/hitl-2/"
    assert env["HITL_NB_DB_URL"] == "postgresql://hitl@db/hitl"


def test_every_setting_is_a_keyword_written_as_its_flag(tmp_path: Path) -> None:
    c = Config()
    configure(c, state_dir=tmp_path, max_registrations=500, lease_seconds=30, watch=False)
    command = c.JupyterHub.services[0]["command"]
    assert command[command.index("--max-registrations") + 1] == "500"
    assert command[command.index("--lease-seconds") + 1] == "30.0"
    assert "--no-watch" in command
    configure(c, state_dir=tmp_path, push_url=None, poll_interval=None)  # None: the default
    assert c.JupyterHub.services[0]["command"][4:] == []


@pytest.mark.parametrize(
    ("settings", "error", "words"),
    [
        pytest.param({"pol_interval": 3}, TypeError, "no setting named 'pol_interval'", id="typo"),
        pytest.param({"db_url": "x"}, TypeError, "multiple values", id="db-url-twice"),
        pytest.param({"cookie_secret": "ab"}, TypeError, "no setting named", id="a-secret"),
        pytest.param({"lease_seconds": 0}, TraitError, "give seconds", id="bad-lease"),
        pytest.param({"max_streams": "many"}, TraitError, "max_streams", id="bad-number"),
    ],
)
def test_a_setting_it_cannot_use_fails_when_the_hub_reads_its_config(
    settings: dict[str, Any], error: type[Exception], words: str, tmp_path: Path
) -> None:
    c = Config()
    with pytest.raises(error, match=words):
        configure(c, 10101, None, state_dir=tmp_path, **settings)
    assert "services" not in c.JupyterHub  # nothing written


NOTIFY = {
    "smtp": {"host": "smtp.example.org", "user": "hitl", "password_env": "HITL_TEST_PW"},
    "from": "hitl@example.org",
    "addresses": "{name}@example.org",
    "email_key": "oauth_user.email",
    "team_webhooks": {"*": "https://hooks.slack.com/services/T0/B0/teamsecret"},
    "webhook_hosts": ["hooks.slack.com"],
}


def test_notify_puts_settings_on_the_command_line_and_credentials_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HITL_TEST_PW", "pw-never-on-a-command-line")
    c = Config()
    entry = configure(c, state_dir=tmp_path, notify=NOTIFY)
    command = " ".join(entry["command"])
    for flag in (
        "--notify-smtp-host smtp.example.org",
        "--notify-smtp-user hitl",
        "--notify-smtp-password-env HITL_TEST_PW",
        "--notify-from hitl@example.org",
        "--notify-address-template {name}@example.org",
        "--notify-email-key oauth_user.email",
        "--notify-webhook-host hooks.slack.com",
    ):
        assert flag in command, flag
    assert "teamsecret" not in command and "pw-never" not in command
    env = entry["environment"]
    assert env["HITL_TEST_PW"] == "pw-never-on-a-command-line"
    assert "teamsecret" in env["HITL_NB_NOTIFY_TEAM_WEBHOOKS"]
    role = _roles(c)["hitl-notify"]
    assert role == {
        "name": "hitl-notify",
        "scopes": ["read:users:name", "admin:auth_state"],
        "services": ["hitl"],
    }


def test_a_slack_apps_token_and_secret_go_in_the_environment_never_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HITL_TEST_SLACK_TOKEN", "xoxb-never-on-a-command-line")
    monkeypatch.setenv("HITL_TEST_SLACK_SECRET", "signing-never-on-a-command-line")
    slack = {
        "token_env": "HITL_TEST_SLACK_TOKEN",
        "signing_secret_env": "HITL_TEST_SLACK_SECRET",
        "users": {"U0BOB": "bob"},
    }
    team = {"*": {"kind": "slack-app", "channel": "C0TEAM"}}
    entry = configure(Config(), state_dir=tmp_path, notify={"slack": slack, "team_webhooks": team})
    command = " ".join(entry["command"])
    assert "--notify-slack-token-env HITL_TEST_SLACK_TOKEN" in command
    assert "never-on-a-command-line" not in command
    env = entry["environment"]
    assert env["HITL_TEST_SLACK_TOKEN"] == "xoxb-never-on-a-command-line"
    assert env["HITL_TEST_SLACK_SECRET"] == "signing-never-on-a-command-line"
    with pytest.raises(TypeError, match="tokn_env"):
        configure(Config(), state_dir=tmp_path, notify={"slack": {"tokn_env": "X"}})


@pytest.mark.parametrize(
    ("notify", "error", "words"),
    [
        pytest.param({"smtp_host": "x"}, TypeError, "smtp_host", id="unknown-key"),
        pytest.param({"smtp": {"hots": "x"}}, TypeError, "hots", id="unknown-smtp-key"),
        pytest.param(
            {"smtp": {"host": "x", "password_env": "HITL_NOT_SET_ANYWHERE"}},
            ValueError,
            "HITL_NOT_SET_ANYWHERE",
            id="password-not-in-the-environment",
        ),
        pytest.param(
            {"smtp": {"host": "x", "security": "plain"}}, TraitError, "security", id="security"
        ),
        pytest.param({"every": -1}, TraitError, "notify_every", id="negative-rate"),
    ],
)
def test_notify_settings_it_cannot_use_fail_when_the_hub_reads_its_config(
    tmp_path: Path, notify: dict[str, Any], error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        configure(Config(), state_dir=tmp_path, notify=notify)
