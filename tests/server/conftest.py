"""A Jupyter server with the hitl-nb extension, and three named users (pytest-jupyter).

The fixtures and hooks of ``pytest_jupyter.jupyter_server`` are imported here, so they
apply to this directory only (its autouse fixtures create a ServerApp per test).

Users (alice, bob, carol) come from :mod:`tests.helpers.jupyter_users`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

try:
    from pytest_jupyter.jupyter_server import *  # noqa: F403
except ImportError:  # pragma: no cover - the test extra brings it
    collect_ignore_glob = ["test_*.py"]
else:
    from tornado.httpclient import HTTPClientError, HTTPResponse

    from tests.helpers.jupyter_users import NamedTokens, auth

    @pytest.fixture
    def jp_server_config(tmp_path: Any) -> dict[str, Any]:
        return {
            "ServerApp": {
                "jpserver_extensions": {"hitl_nb.server": True},
                "identity_provider_class": NamedTokens,
            },
            "HitlServer": {"state_dir": str(tmp_path / "hitl-state")},
        }

    @pytest.fixture
    def jp_auth_header() -> dict[str, str]:
        return auth("alice")

    @pytest.fixture
    def gateway(jp_serverapp: Any, jp_asyncio_loop: Any) -> Any:
        """The server's gateway; closed (connections, store) after the test, with the
        prompts panel's relays that follow it."""
        from hitl_nb.server import GATEWAY_SETTING, LAB_SETTING

        gw = jp_serverapp.web_app.settings[GATEWAY_SETTING]
        yield gw
        # The prompts panel's relays follow the gateway: they stop first.
        jp_asyncio_loop.run_until_complete(jp_serverapp.web_app.settings[LAB_SETTING].close())
        jp_asyncio_loop.run_until_complete(gw.close())

    @pytest.fixture
    def server_url(gateway: Any, http_server: Any, http_server_port: Any, jp_base_url: str) -> str:
        """The server's base URL as a client outside the process would use it."""
        _sock, port = http_server_port
        return f"http://127.0.0.1:{port}{jp_base_url}"

    Fetch = Callable[..., Awaitable[HTTPResponse]]

    @pytest.fixture
    def api(gateway: Any, jp_fetch: Fetch) -> Callable[..., Awaitable[tuple[int, Any]]]:
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
            hdrs["Authorization"] = auth(user)["Authorization"] if user else "token nobody"
            if raw is not None or body is not None:
                hdrs.setdefault("Content-Type", "application/json")
            # Generous: 50 racing requests queue in the test client on a loaded machine.
            kwargs: dict[str, Any] = {
                "method": method,
                "headers": hdrs,
                "request_timeout": 120,
                "connect_timeout": 120,
            }
            if params:
                kwargs["params"] = params
            if raw is not None:
                kwargs["body"] = raw
            elif body is not None:
                kwargs["body"] = json.dumps(body)
            elif method in ("POST", "PUT"):
                kwargs["body"] = b""
            try:
                resp = await jp_fetch(*path.split("/"), **kwargs)
            except HTTPClientError as exc:
                assert exc.response is not None
                resp = exc.response
            text = resp.body.decode() if resp.body else ""
            return resp.code, (json.loads(text) if text else None)

        return call


if "collect_ignore_glob" not in globals():
    from collections.abc import Iterator

    from hitl_nb.mock_agent import MockAgent

    # Some tests still import these from here; they live in tests/helpers/tasks.py.
    from tests.helpers.tasks import answers_at_agent, start_task  # noqa: F401

    @pytest.fixture
    def agent(tmp_path: Any) -> Iterator[MockAgent]:
        """A mock agent on 127.0.0.1 in its own thread (it outlives server restarts)."""
        with MockAgent(store=tmp_path / "agent.sqlite") as running:
            yield running
