"""A real JupyterHub for the hub service's tests, and a service in this process beside it.

- ``hub`` (one per session): JupyterHub with the hitl service as users configure it
  (:mod:`tests.helpers.hub`), users alice, bob, carol and the hub admin dora;
- ``service`` (one per test): a :class:`~hitl_nb.hub._service.HubService` on this test's
  event loop, on a free port, asking the same hub who is calling. It is the service's
  code and the hub's real answers, with the gateway at hand (``gateway``) so a test can
  change its settings, as the server extension's tests do;
- ``api``: ``await api("GET", "hitl/api/tasks", user="bob", ...)`` -> (status, JSON), with
  the same signature as the server extension's (paths written ``hitl/api/...`` are the
  service's ``api/...``), so the gateway's tests run against the service unchanged;
- ``agent``: a mock agent of the test's own.

Async tests run on pytest-jupyter's event loop (its core plugin only: no Jupyter server).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pytest_jupyter.jupyter_core import *  # noqa: F403

from hitl_nb.gateway import Gateway
from hitl_nb.mock_agent import MockAgent
from tests.helpers.hub import ADMIN_TOKEN, HUB_ADMIN, USERS, Hub, running_hub
from tests.helpers.ports import free_port
from tests.helpers.postgres import pg_cluster, pg_url

__all__ = ["pg_cluster", "pg_url"]

Api = Callable[..., Awaitable[tuple[int, Any]]]


@pytest.fixture(scope="session")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """The session's JupyterHub (the hitl service running, nobody's server yet)."""
    with running_hub(tmp_path_factory.mktemp("hub")) as running:
        for name in (*USERS, HUB_ADMIN):
            running.user_token(name)
        yield running


@pytest.fixture
def service(hub: Hub, tmp_path: Path, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[Any]:
    """The hub service's code, in this process, on a free port (see the module doc)."""
    from hitl_nb.hub import HubSettings
    from hitl_nb.hub._service import HubService, ServiceOptions

    port = free_port()
    environ = {
        "JUPYTERHUB_SERVICE_NAME": "hitl",
        "JUPYTERHUB_SERVICE_URL": f"http://127.0.0.1:{port}",
        "JUPYTERHUB_SERVICE_PREFIX": "/services/hitl/",
        # Any token of the hub may ask who a token belongs to; the admin service's will do.
        "JUPYTERHUB_API_TOKEN": ADMIN_TOKEN,
        "JUPYTERHUB_API_URL": hub.api,
        "JUPYTERHUB_CLIENT_ID": "service-hitl",
    }
    settings = HubSettings(state_dir=str(tmp_path / "service"), poll_interval=2.0)
    options = ServiceOptions(settings)
    running = HubService(options, environ)
    jp_asyncio_loop.run_until_complete(running.start())
    yield running
    jp_asyncio_loop.run_until_complete(running.stop())


@pytest.fixture
def server_url(service: Any) -> str:
    """``http://127.0.0.1:<port>/services/``: with a Jupyter server's paths appended
    (``hitl/push/<id>``) it is the service's own (``/services/hitl/push/<id>``), so the
    server extension's push tests run against the service unchanged."""
    base: str = service.base_url
    return base[: -len("hitl/")]


@pytest.fixture
def gateway(service: Any) -> Gateway:
    """The in-process service's gateway."""
    gw: Gateway = service.gateway
    return gw


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[MockAgent]:
    """A mock agent on 127.0.0.1 in its own thread."""
    with MockAgent(store=tmp_path / "agent.sqlite") as running:
        yield running


def service_path(path: str) -> str:
    """``hitl/api/x`` (a Jupyter server's path) as the service's ``api/x``."""
    return path[len("hitl/") :] if path.startswith("hitl/api") else path


@pytest.fixture
def api(service: Any, hub: Hub) -> Api:
    """``await api("GET", "hitl/api/tasks", user="bob", body=...)`` -> (status, json)."""

    async def call(
        method: str,
        path: str,
        *,
        user: str | None = "alice",
        body: Any = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
        params: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        hdrs = dict(headers or {})
        token = hub.user_token(user) if user else "nobody"
        hdrs.setdefault("Authorization", f"token {token}")
        content: bytes | None = raw
        if raw is None and body is not None:
            content = json.dumps(body).encode()
        if content is not None:
            hdrs.setdefault("Content-Type", "application/json")
        # Generous: 50 racing requests queue on a loaded machine.
        async with httpx.AsyncClient(timeout=120) as client:
            r = await client.request(
                method,
                service.base_url + service_path(path),
                headers=hdrs,
                content=content if content is not None else (b"" if method == "POST" else None),
                params=params,
            )
        text = r.text
        try:
            return r.status_code, (json.loads(text) if text else None)
        except json.JSONDecodeError:
            return r.status_code, text

    return call


@pytest.fixture(autouse=True)
def _no_hub_env_leaks() -> Iterator[None]:
    # Discovery reads these; a test process is nobody's server.
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("JUPYTERHUB_")}
    yield
    os.environ.update(saved)
