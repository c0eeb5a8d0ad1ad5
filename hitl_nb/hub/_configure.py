"""``configure(c)``: the one line in ``jupyterhub_config.py`` that adds the hub service.

::

    from hitl_nb.hub import configure
    configure(c, port=10101, db_url=None)
    # with notifications by email (docs/notify.md):
    configure(c, notify={"smtp": {"host": "smtp.example.org", "user": "hitl",
                                  "password_env": "HITL_SMTP_PASSWORD"},
                         "from": "hitl@example.org", "addresses": "{name}@example.org"})

What it writes into the hub's config ``c`` (and nothing else):

- a hub-managed service ``hitl`` (``c.JupyterHub.services``): its URL
  ``http://127.0.0.1:<port>``, its command ``hitl-nb hub-service`` with the options
  below, ``oauth_no_confirm`` (the service is part of the hub: no extra consent page)
  and its environment (``HITL_NB_DB_URL``: secrets stay off the command line). The hub
  gives it an API token and an OAuth client (``service-hitl``);
- the scopes that let people reach it, added to the hub's ``user`` role and to the
  ``server`` role (the tokens of their servers, so their kernels'):
  ``access:services!service=hitl`` and ``read:services!service=hitl`` (to find it:
  its URL and prefix). Roles are merged, never replaced: a ``user`` or ``server`` role
  the administrator defined keeps its scopes and members; one the hub defines by
  default keeps its default scopes (``self``; ``users:activity!user``,
  ``access:servers!server``). When ``c.Spawner.server_token_scopes`` is a list, the two
  scopes are added to it as well (the hub then ignores the ``server`` role);
- ``HITL_NB_HUB_SERVICE`` in the servers' environment (``c.Spawner.environment``), the
  service's name for kernels to look up in the hub's service list.

An administrator narrows it with the settings, given as keywords (any setting of
:class:`~hitl_nb.hub.HubSettings`: which agent hosts users may register
(``allowed_agent_hosts``), the URL agents push to (``push_url``), the mock agent on or off
(``mock_agent``), ...), each written into the service's command as its flag; and through
roles: a user without the access scope
(a ``user`` role without it, e.g. for a group) cannot use the service.

Notifications (``notify``, a dict; docs/notify.md): ``smtp`` (``host``, ``port``,
``security``, ``user``, ``password_env`` or ``password_file``, ``ca_file``), ``from``,
``addresses`` (a template ``"{name}@example.org"`` or a table), ``email_key`` (where
auth state keeps an email: ``"oauth_user.email"``), ``team_webhooks`` (agent host or
``"*"`` -> URL), ``webhook_hosts`` (people's own webhooks' allow-list),
``remind_before``, ``every``, ``link_url``: each is the setting ``notify_<key>`` (``from``:
``notify_from``). The SMTP password's variable is copied from the hub's environment into
the service's (a managed service inherits nothing else), and the team webhooks' URLs
go there too (their path is a credential), never on the command line. The service gets
a role ``<name>-notify`` with ``read:users:name`` (a name the hub does not know gets no
message) and, with ``email_key``, ``admin:auth_state``.

More replicas of the service (``replicas``, with a PostgreSQL ``db_url`` they share):
each is an *external* service of the hub, ``{"name": "hitl-2", "url":
"http://10.0.0.2:10101", "api_token": ...}``, which the administrator runs elsewhere
(``hitl-nb hub-service`` with the environment :func:`replica_environment` lists). For
each, ``configure`` adds the service entry (the hub gives it an OAuth client
``service-<name>`` and routes ``/services/<name>/`` to its URL) and its scopes to the
same roles. Replicas behind one load balancer under the one name ``hitl`` need no
option: ``docs/hub.md`` shows that deployment.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hitl_nb.hub._options import COMMAND, HubSettings, command_line, environment_of

__all__ = [
    "SERVICE_NAME",
    "configure",
    "notify_settings",
    "replica_environment",
    "service_scopes",
]

#: The service's default name (``{hub}/services/hitl/``).
SERVICE_NAME = "hitl"


def service_scopes(name: str = SERVICE_NAME) -> list[str]:
    """The scopes a user (and their servers' tokens) need to find and use the service."""
    return [f"access:services!service={name}", f"read:services!service={name}"]


def _command() -> list[str]:
    # The hitl-nb of the hub's own environment: the one this config file imported.
    script = Path(sys.executable).with_name("hitl-nb")
    if script.exists():
        return [str(script)]
    found = shutil.which("hitl-nb")
    return [found] if found else [sys.executable, "-m", "hitl_nb.cli"]


def _defaults(role: str) -> list[str]:
    from jupyterhub.roles import get_default_roles

    for spec in get_default_roles():
        if spec["name"] == role:
            return list(spec["scopes"])
    return []


def _merge_role(roles: list[dict[str, Any]], role: str, scopes: Iterable[str]) -> None:
    for spec in roles:
        if spec.get("name") == role:
            have = list(spec.get("scopes") or [])
            spec["scopes"] = have + [s for s in scopes if s not in have]
            return
    # Not defined by the administrator: the hub's default role, with the scopes added
    # (a role named like a default one replaces it, so its defaults come along).
    have = _defaults(role)
    roles.append({"name": role, "scopes": have + [s for s in scopes if s not in have]})


def _current(section: Any, key: str, default: Any) -> Any:
    return section[key] if key in section else default


def _replica_entry(spec: Mapping[str, str], index: int, name: str) -> dict[str, Any]:
    unknown = sorted(set(spec) - {"name", "url", "api_token"})
    if unknown:
        raise ValueError(f"replica {index}: unknown key(s) {', '.join(unknown)}")
    url, token = spec.get("url"), spec.get("api_token")
    if not url or urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
        raise ValueError(f"replica {index} needs a url, e.g. http://10.0.0.2:10101")
    if not token or len(token) < 16:
        raise ValueError(
            f"replica {index} needs an api_token of at least 16 characters "
            "(e.g. from openssl rand -hex 32), the same one its process is given"
        )
    replica = spec.get("name") or f"{name}-{index + 2}"
    return {
        "name": replica,
        "url": url,
        "api_token": token,
        "oauth_no_confirm": True,
        "display": False,
        "info": {"description": f"a replica of the hitl service {name!r}", "replica_of": name},
    }


def replica_environment(
    name: str,
    api_token: str,
    hub_api_url: str,
    listen: str,
    db_url: str,
    *,
    public_url: str | None = None,
) -> dict[str, str]:
    """The environment of an external replica's process (``hitl-nb hub-service``):
    its ``name`` and ``api_token`` as given to :func:`configure`, the hub's API URL as
    the replica reaches it (``http://hub.internal:8081/hub/api``), the address it
    listens on (``http://0.0.0.0:10101``), the shared ``db_url``; ``public_url``: the
    hub's public URL (agents then push to ``{public_url}services/<name>/``)."""
    env = {
        "JUPYTERHUB_SERVICE_NAME": name,
        "JUPYTERHUB_API_TOKEN": api_token,
        "JUPYTERHUB_API_URL": hub_api_url,
        "JUPYTERHUB_CLIENT_ID": f"service-{name}",
        "JUPYTERHUB_SERVICE_URL": listen,
        "JUPYTERHUB_SERVICE_PREFIX": f"/services/{name}/",
        "HITL_NB_DB_URL": db_url,
    }
    if public_url:
        env["JUPYTERHUB_PUBLIC_URL"] = public_url.rstrip("/") + f"/services/{name}/"
    return env


#: ``notify``'s keys and the settings they are (the SMTP server's under ``smtp``).
NOTIFY_KEYS = {
    "from": "notify_from",
    "addresses": None,  # a template (text) or a table (a dict)
    "email_key": "notify_email_key",
    "team_webhooks": "notify_team_webhooks",
    "webhook_hosts": "notify_webhook_hosts",
    "remind_before": "notify_remind_before",
    "every": "notify_every",
    "link_url": "notify_link_url",
    "answer_links": "notify_answer_links",
}
SMTP_KEYS = ("host", "port", "security", "user", "password_env", "password_file", "ca_file")
#: ``notify``'s ``slack`` (a Slack app): each is the setting ``notify_slack_<key>``.
SLACK_KEYS = (
    "token_env",
    "token_file",
    "signing_secret_env",
    "signing_secret_file",
    "api_url",
    "users",
    "match_email",
)


def notify_settings(notify: Mapping[str, Any]) -> dict[str, Any]:
    """``configure``'s ``notify`` as settings (``notify_...``); a key it does not know
    is refused naming the ones it knows."""
    unknown = sorted(set(notify) - set(NOTIFY_KEYS) - {"smtp", "slack"})
    if unknown:
        raise TypeError(
            f"notify got no key named {', '.join(map(repr, unknown))}; its keys: "
            f"smtp, slack, {', '.join(NOTIFY_KEYS)}"
        )
    out: dict[str, Any] = {}
    smtp = dict(notify.get("smtp") or {})
    wrong = sorted(set(smtp) - set(SMTP_KEYS))
    if wrong:
        raise TypeError(f"notify's smtp got no key named {', '.join(map(repr, wrong))}")
    out.update({f"notify_smtp_{key}": value for key, value in smtp.items()})
    slack = dict(notify.get("slack") or {})
    wrong = sorted(set(slack) - set(SLACK_KEYS))
    if wrong:
        raise TypeError(
            f"notify's slack got no key named {', '.join(map(repr, wrong))}; its keys: "
            f"{', '.join(SLACK_KEYS)}"
        )
    out.update({f"notify_slack_{key}": value for key, value in slack.items()})
    for key, name in NOTIFY_KEYS.items():
        if key not in notify:
            continue
        value = notify[key]
        if key == "addresses":
            name = "notify_addresses" if isinstance(value, Mapping) else "notify_address_template"
            value = dict(value) if isinstance(value, Mapping) else value
        assert name is not None
        out[name] = value
    return out


def _notify_role(
    roles: list[dict[str, Any]], name: str, services: list[str], auth_state: bool
) -> None:
    role = f"{name}-notify"
    scopes = ["read:users:name", *(["admin:auth_state"] if auth_state else [])]
    roles[:] = [r for r in roles if r.get("name") != role]
    roles.append({"name": role, "scopes": scopes, "services": services})


def configure(
    c: Any,
    port: int = 10101,
    db_url: str | None = None,
    *,
    name: str = SERVICE_NAME,
    ip: str = "127.0.0.1",
    state_dir: str | Path | None = None,
    options: Sequence[str] = (),
    replicas: Sequence[Mapping[str, str]] = (),
    notify: Mapping[str, Any] | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """Add the hitl-nb service to JupyterHub's config ``c``; returns its service entry.

    ``port``/``ip``: where the service listens (the hub's proxy routes
    ``/services/<name>/`` there; kernels reach it there directly, so servers on other
    machines need an ``ip`` they can reach). ``db_url``: None for a SQLite file in
    ``state_dir`` (default ``hitl-state`` in the hub's working directory), or
    ``sqlite:///path`` or ``postgresql://user@host:port/database`` (several replicas, a
    team's scale; the password may be in the URL, ``PGPASSWORD`` or ``~/.pgpass``).
    ``replicas``: more replicas as external services (see the module docstring; they
    need the PostgreSQL ``db_url``). ``settings``: any setting of
    :class:`~hitl_nb.hub.HubSettings` by its name (docs/server.md's table), e.g.
    ``allowed_agent_hosts=["*.example.org"]``, ``push_url=...``, ``mock_agent=False``,
    ``poll_interval=5`` (None: the default): each is checked here, at hub start, and
    written into the service's command as its flag. ``options``: more
    ``hitl-nb hub-service`` options, verbatim. ``notify``: notifications (see the module
    docstring).
    """
    from hitl_nb.gateway import check_db_url

    known = set(HubSettings.class_traits(config=True)) - {"state_dir"}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise TypeError(
            f"configure() got no setting named {', '.join(map(repr, unknown))}; "
            f"its settings: {', '.join(sorted(known))}"
        )
    given = {key: value for key, value in settings.items() if value is not None}
    given.update(notify_settings(notify or {}))
    folder = Path(state_dir) if state_dir is not None else Path.cwd() / "hitl-state"
    chosen = HubSettings(state_dir=str(folder.resolve()), **given)
    check_db_url(db_url)  # a db_url it cannot open fails here, at hub start
    shared = bool(db_url) and urlsplit(db_url or "").scheme.startswith("postgres")
    if replicas and not shared:
        raise ValueError(
            "replicas share one database: give configure a db_url of PostgreSQL "
            "(postgresql://user@host:port/database)"
        )
    extra = [_replica_entry(spec, i, name) for i, spec in enumerate(replicas)]
    args = [*_command(), COMMAND, *command_line(chosen), *options]
    environment = {"HITL_NB_DB_URL": db_url} if db_url else {}
    environment.update(environment_of(chosen))
    secrets = [
        ("the SMTP password", chosen.notify_smtp_password_env),
        ("the Slack app's bot token", chosen.notify_slack_token_env),
        ("the Slack app's signing secret", chosen.notify_slack_signing_secret_env),
    ]
    for what, variable in secrets:
        if not variable:
            continue
        if not os.environ.get(variable):
            raise ValueError(
                f"notify: {what}'s variable {variable} is not set in the hub's "
                "environment (the service is given it from there)"
            )
        environment[variable] = os.environ[variable]
    entry: dict[str, Any] = {
        "name": name,
        "url": f"http://{ip}:{port}",
        "command": args,
        "environment": environment,
        "oauth_no_confirm": True,
        "display": True,
        "info": {"description": "Prompts of A2A agents, answered by the hub's users"},
    }
    ours = {name, *(e["name"] for e in extra)}
    services = [
        s
        for s in _current(c.JupyterHub, "services", [])
        if s.get("name") not in ours and (s.get("info") or {}).get("replica_of") != name
    ]
    c.JupyterHub.services = [*services, entry, *extra]
    scopes = service_scopes(name)
    for replica in extra:
        scopes += service_scopes(replica["name"])
    roles = [dict(r) for r in _current(c.JupyterHub, "load_roles", [])]
    _merge_role(roles, "user", scopes)
    _merge_role(roles, "server", scopes)
    if chosen.notifying:
        names = [name, *(e["name"] for e in extra)]
        _notify_role(roles, name, names, bool(chosen.notify_email_key))
    c.JupyterHub.load_roles = roles
    token_scopes = _current(c.Spawner, "server_token_scopes", None)
    if isinstance(token_scopes, list):
        c.Spawner.server_token_scopes = token_scopes + [s for s in scopes if s not in token_scopes]
    env = dict(_current(c.Spawner, "environment", {}))
    env["HITL_NB_HUB_SERVICE"] = name
    c.Spawner.environment = env
    return entry
