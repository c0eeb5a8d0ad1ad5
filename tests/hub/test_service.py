"""``hitl-nb hub-service``: what it takes from the hub's environment, and what it keeps
across restarts (the restart itself, by the hub after ``kill -9``, is in
``test_end_to_end.py``; its command line in ``test_options.py``)."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import pytest

from hitl_nb.cli import build_parser
from hitl_nb.hub._options import options_from
from hitl_nb.hub._service import HubService, access_scopes

HUB_ENV = {
    "JUPYTERHUB_SERVICE_NAME": "hitl",
    "JUPYTERHUB_SERVICE_URL": "http://127.0.0.1:10101",
    "JUPYTERHUB_SERVICE_PREFIX": "/services/hitl/",
    "JUPYTERHUB_API_TOKEN": "service-token",
    "JUPYTERHUB_API_URL": "http://127.0.0.1:8081/hub/api",
    "JUPYTERHUB_CLIENT_ID": "service-hitl",
}


def _args(*argv: str) -> object:
    return build_parser("hub-service").parse_args(["hub-service", *argv])


def test_the_access_scopes_are_the_hubs_word_and_never_none() -> None:
    assert access_scopes("hitl", {}) == {"access:services!service=hitl"}
    given = {"JUPYTERHUB_OAUTH_ACCESS_SCOPES": '["access:services", "access:services!service=x"]'}
    assert access_scopes("x", given) == {"access:services", "access:services!service=x"}
    # An empty list would let every hub user in (HubOAuth checks nothing): never empty.
    assert access_scopes("x", {"JUPYTERHUB_OAUTH_ACCESS_SCOPES": "[]"}) == {
        "access:services!service=x"
    }


def test_without_the_hubs_environment_it_says_who_starts_it(tmp_path: Path) -> None:
    options = options_from(_args("--state-dir", str(tmp_path)), {})
    with pytest.raises(SystemExit) as stopped:
        HubService(options, {})
    assert "started by JupyterHub" in str(stopped.value) and "configure(c)" in str(stopped.value)


def test_the_cookie_secret_is_kept_private_across_restarts(tmp_path: Path) -> None:
    options = options_from(_args("--state-dir", str(tmp_path), "--no-mock-agent"), {})
    first = HubService(options, HUB_ENV)
    again = HubService(options, HUB_ENV)
    secret = first.app.settings["cookie_secret"]
    assert secret == again.app.settings["cookie_secret"] and len(secret) == 32
    assert stat.S_IMODE((tmp_path / "cookie_secret").stat().st_mode) == 0o600
    given = HubService(options, {**HUB_ENV, "HITL_NB_COOKIE_SECRET": "ab" * 32})
    assert given.app.settings["cookie_secret"] == bytes.fromhex("ab" * 32)
    for service in (first, again, given):
        asyncio.run(service.gateway.close())


def test_agents_push_to_the_public_url_when_the_hub_has_one(tmp_path: Path) -> None:
    options = options_from(_args("--state-dir", str(tmp_path), "--no-mock-agent"), {})
    own = HubService(options, HUB_ENV)
    assert own.public_url == "http://127.0.0.1:10101/services/hitl/"
    public = HubService(
        options, {**HUB_ENV, "JUPYTERHUB_PUBLIC_URL": "https://hub.example.org/services/hitl/"}
    )
    assert public.gateway.push_url is not None
    assert public.gateway.push_url("r1") == "https://hub.example.org/services/hitl/push/r1"
    for service in (own, public):
        asyncio.run(service.gateway.close())
