"""``configure(c)``: the one line in ``jupyterhub_config.py`` that adds the hub service.

::

    from hitl_nb.hub import configure
    configure(c, port=10101, db_url=None)

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

An administrator narrows it with the keyword options: which agent hosts users may
register (``allowed_agent_hosts``), the URL agents push to (``push_url``), the mock
agent on or off (``mock_agent``); and through roles: a user without the access scope
(a ``user`` role without it, e.g. for a group) cannot use the service.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["SERVICE_NAME", "configure", "service_scopes"]

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


def configure(
    c: Any,
    port: int = 10101,
    db_url: str | None = None,
    *,
    name: str = SERVICE_NAME,
    ip: str = "127.0.0.1",
    state_dir: str | Path | None = None,
    allowed_agent_hosts: Sequence[str] = (),
    push_url: str | None = None,
    mock_agent: bool = True,
    poll_interval: float | None = None,
    options: Sequence[str] = (),
) -> dict[str, Any]:
    """Add the hitl-nb service to JupyterHub's config ``c``; returns its service entry.

    ``port``/``ip``: where the service listens (the hub's proxy routes
    ``/services/<name>/`` there; kernels reach it there directly, so servers on other
    machines need an ``ip`` they can reach). ``db_url``: None for a SQLite file in
    ``state_dir`` (default ``hitl-state`` in the hub's working directory), or
    ``sqlite:///path``. ``allowed_agent_hosts``: host names or patterns
    (``*.example.org``, ``host:port``) users may register agents of (empty: any).
    ``push_url``: the service's URL as agents reach it, e.g.
    ``https://hub.example.org/services/hitl/`` (default: the hub's ``public_url`` when
    set, else the service's own). ``mock_agent``: serve the bundled mock agent under
    ``mock-agent/``. ``options``: more ``hitl-nb hub-service`` options, verbatim.
    """
    from hitl_nb.gateway import sqlite_path

    folder = Path(state_dir) if state_dir is not None else Path.cwd() / "hitl-state"
    folder = folder.resolve()
    if db_url:
        sqlite_path(db_url, folder)  # a db_url it cannot open fails here, at hub start
    args = [*_command(), "hub-service", "--state-dir", str(folder)]
    for host in allowed_agent_hosts:
        args += ["--allowed-agent-host", host]
    if push_url:
        args += ["--push-url", push_url]
    if not mock_agent:
        args.append("--no-mock-agent")
    if poll_interval is not None:
        args += ["--poll-interval", repr(float(poll_interval))]
    args += list(options)
    environment = {"HITL_NB_DB_URL": db_url} if db_url else {}
    entry: dict[str, Any] = {
        "name": name,
        "url": f"http://{ip}:{port}",
        "command": args,
        "environment": environment,
        "oauth_no_confirm": True,
        "display": True,
        "info": {"description": "Prompts of A2A agents, answered by the hub's users"},
    }
    services = [s for s in _current(c.JupyterHub, "services", []) if s.get("name") != name]
    c.JupyterHub.services = [*services, entry]
    scopes = service_scopes(name)
    roles = [dict(r) for r in _current(c.JupyterHub, "load_roles", [])]
    _merge_role(roles, "user", scopes)
    _merge_role(roles, "server", scopes)
    c.JupyterHub.load_roles = roles
    token_scopes = _current(c.Spawner, "server_token_scopes", None)
    if isinstance(token_scopes, list):
        c.Spawner.server_token_scopes = token_scopes + [s for s in scopes if s not in token_scopes]
    env = dict(_current(c.Spawner, "environment", {}))
    env["HITL_NB_HUB_SERVICE"] = name
    c.Spawner.environment = env
    return entry
