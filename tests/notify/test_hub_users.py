"""What the hub says about its users: a real JupyterHub with auth state kept (encrypted),
asked with a service token holding ``read:users:name`` and ``admin:auth_state``; and
what a hub that answers badly gets."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from hitl_nb.errors import DeliveryFailed, NotifyRefused
from hitl_nb.notify import AddressBook, HubDirectory
from tests.helpers.hub import PROXY_SOURCE, jupyterhub_process
from tests.helpers.js import npm_workdir
from tests.helpers.ports import free_port
from tests.helpers.tiny_server import Conn, Request, serve
from tests.helpers.until import until

ADMIN = "notify-test-admin-token-0123456789"
NOTIFY = "notify-test-service-token-0123456789"
NAMES_ONLY = "notify-test-names-token-0123456789"
NOBODY = "notify-test-no-scope-token-0123456789"
ACCESS_TOKEN = "gho_the-identity-providers-token"

_CONFIG = """
c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {proxy_port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = [{chp!r}]
c.JupyterHub.db_url = "sqlite:///{root}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{root}/jupyterhub_cookie_secret"
c.JupyterHub.pid_file = "{root}/jupyterhub.pid"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.Authenticator.enable_auth_state = True
c.JupyterHub.services = [
    {{"name": "admin", "api_token": {admin!r}}},
    {{"name": "hitl", "api_token": {notify!r}}},
    {{"name": "names", "api_token": {names!r}}},
    {{"name": "nobody", "api_token": {nobody!r}}},
]
c.JupyterHub.load_roles = [
    {{"name": "test-admin", "scopes": ["admin:users"], "services": ["admin"]}},
    {{"name": "hitl-notify", "scopes": ["read:users:name", "admin:auth_state"],
      "services": ["hitl"]}},
    {{"name": "names", "scopes": ["read:users:name"], "services": ["names"]}},
]
"""


@dataclass
class AuthHub:
    api: str
    root: Path


@pytest.fixture(scope="module")
def auth_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthHub]:
    """A hub that keeps auth state; alice's holds an email (and an access token), bob's a
    malformed one, carol has none."""
    root = tmp_path_factory.mktemp("auth-hub")
    chp = npm_workdir(PROXY_SOURCE, "the hub directory tests")
    chp = chp / "node_modules" / ".bin" / "configurable-http-proxy"
    ports = {n: free_port() for n in ("proxy_port", "hub_port", "proxy_api_port")}
    config = _CONFIG.format(
        root=root,
        chp=str(chp),
        admin=ADMIN,
        notify=NOTIFY,
        names=NAMES_ONLY,
        nobody=NOBODY,
        **ports,
    )
    env = {"JUPYTERHUB_CRYPT_KEY": os.urandom(32).hex()}
    api = f"http://127.0.0.1:{ports['hub_port']}/hub/api/"
    admin = {"Authorization": f"token {ADMIN}"}
    with jupyterhub_process(root, config, env) as proc:

        def up() -> bool:
            assert proc.poll() is None, (root / "hub.log").read_text()[-4000:]
            try:
                return httpx.get(api, headers=admin, timeout=5).status_code == 200
            except httpx.TransportError:
                return False

        until(up, timeout=120, what="the hub's API")
        states: dict[str, Any] = {
            "alice": {"oauth_user": {"email": "alice@example.org"}, "access_token": ACCESS_TOKEN},
            "bob": {"oauth_user": {"email": "bob@example.org\r\nBcc: all@example.org"}},
            "carol": None,
        }
        with httpx.Client(base_url=api, headers=admin, timeout=30) as hub:
            for name, state in states.items():
                assert hub.post(f"users/{name}").status_code in (201, 409)
                if state is not None:
                    r = hub.patch(f"users/{name}", json={"auth_state": state})
                    assert r.status_code == 200, r.text
        yield AuthHub(api, root)


def ask(directory: HubDirectory, *names: str) -> list[Any]:
    async def go() -> list[Any]:
        try:
            return [await directory.user(name) for name in names]
        finally:
            await directory.aclose()

    return asyncio.run(go())


@pytest.mark.kernel
@pytest.mark.slow
def test_the_email_in_auth_state_with_the_scopes_the_doc_names(auth_hub: AuthHub):
    directory = HubDirectory(auth_hub.api, NOTIFY, email_key="oauth_user.email")
    alice, bob, carol, nobody = ask(directory, "alice", "bob", "carol", "nobody")
    assert alice.email == "alice@example.org"
    assert bob is not None and bob.email is None  # not a plain address: none
    assert carol is not None and carol.email is None
    assert nobody is None
    assert ACCESS_TOKEN not in repr(directory._cache)  # only the address is kept


@pytest.mark.kernel
@pytest.mark.slow
def test_without_admin_auth_state_the_hub_only_says_who_exists(auth_hub: AuthHub):
    directory = HubDirectory(auth_hub.api, NAMES_ONLY, email_key="oauth_user.email")
    alice, nobody = ask(directory, "alice", "nobody")
    assert alice is not None and alice.email is None and nobody is None
    with pytest.raises(DeliveryFailed, match="read:users:name"):
        ask(HubDirectory(auth_hub.api, NOBODY), "alice")


@pytest.mark.kernel
@pytest.mark.slow
def test_an_address_book_on_the_hub(auth_hub: AuthHub):
    book = AddressBook(
        table={"dora": "dora@elsewhere.example"},
        template="{name}@team.example.org",
        directory=HubDirectory(auth_hub.api, NOTIFY, email_key="oauth_user.email"),
    )

    async def go() -> list[str | None]:
        try:
            return [await book.address(n) for n in ("alice", "carol", "dora", "mallory")]
        finally:
            assert book.directory is not None
            await book.directory.aclose()

    # the table first, then auth state, then the template; a name the hub does not
    # know gets nothing, whatever the template would make of it
    assert asyncio.run(go()) == [
        "alice@example.org",
        "carol@team.example.org",
        "dora@elsewhere.example",
        None,
    ]


def test_answers_are_kept_for_a_while():
    calls: list[str] = []

    def hub(request: Request, conn: Conn) -> None:
        calls.append(request.path)
        conn.answer({"name": "alice", "auth_state": {"email": "alice@example.org"}})

    now = [0.0]
    with serve(hub) as server:
        directory = HubDirectory(
            server.url + "/hub/api", "t", email_key="email", ttl=60, clock=lambda: now[0]
        )

        async def go() -> None:
            assert (await directory.user("alice")).email == "alice@example.org"  # type: ignore[union-attr]
            now[0] = 59.0
            await directory.user("alice")
            assert calls == ["/hub/api/users/alice"]
            now[0] = 61.0
            await directory.user("alice")
            assert len(calls) == 2
            await directory.user("a/b c")
            assert calls[-1] == "/hub/api/users/a%2Fb%20c"
            await directory.aclose()

        asyncio.run(go())


@pytest.mark.parametrize(
    ("status", "body", "match"),
    [
        (500, b"{}", "answered 500"),
        (200, b"<html>", "not JSON"),
        (302, b"", "answered 302"),
    ],
)
def test_a_hub_that_answers_badly_makes_the_message_wait(status, body, match):
    def hub(request: Request, conn: Conn) -> None:
        conn.answer(body, status, content_type="text/html", Location="http://evil.invalid/")

    with serve(hub) as server:
        with pytest.raises(DeliveryFailed, match=match) as caught:
            ask(HubDirectory(server.url + "/hub/api/", "t"), "alice")
    assert not caught.value.permanent


def test_settings():
    with pytest.raises(NotifyRefused):
        HubDirectory("hub/api", "t")
    with pytest.raises(NotifyRefused):
        HubDirectory("http://hub/api/", "t", email_key="a..b")
    assert "t0ken" not in repr(HubDirectory("http://hub/api", "t0ken", email_key="x.email"))
