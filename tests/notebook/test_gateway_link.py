"""notebook/_gateway_link.py: what a card needs of the Jupyter server's gateway."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

import pytest

from hitl_nb.client import GatewayClient, GatewayInfo
from hitl_nb.errors import GatewayRefused, GatewayUnavailable
from hitl_nb.notebook import gateway_link
from tests.helpers.ports import free_port
from tests.helpers.tiny_server import serve


def test_a_link_whose_server_refuses_to_say_who_we_are_closes_its_connections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    closed: list[GatewayClient] = []
    close = GatewayClient.close

    def counting_close(self: GatewayClient) -> None:
        closed.append(self)
        close(self)

    monkeypatch.setattr(GatewayClient, "close", counting_close)

    def refuse(req: Any, conn: Any) -> None:
        conn.answer({"message": "who are you?"}, status=403)

    with serve(refuse) as server:
        with pytest.raises(GatewayRefused, match="who are you"):
            gateway_link(GatewayInfo(server.url + "/", "wrong", "test"))
    assert len(closed) == 1


def test_a_link_names_the_user_the_server_vouches_for() -> None:
    def me(req: Any, conn: Any) -> None:
        conn.answer({"name": "alice", "display_name": "Alice A."})

    with serve(me) as server:
        link = gateway_link(GatewayInfo(server.url + "/", "t", "test"))
        assert link is not None
        try:
            assert (link.name, link.display) == ("alice", "Alice A.")
        finally:
            link.close()


def test_a_hub_that_did_not_answer_is_looked_for_again_and_never_bypassed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a hub set up with the service (HITL_NB_HUB_SERVICE), a hub that does not answer
    when the kernel looks for its gateway leaves a link that fails each answer, saying
    so, until the service is found: the cards never answer the agent directly."""
    from hitl_nb.notebook import _gateway_link

    down = f"http://127.0.0.1:{free_port()}/hub/api"
    for name, value in {
        "JUPYTERHUB_API_URL": down,
        "JUPYTERHUB_API_TOKEN": "kernel-token",
        "JUPYTERHUB_USER": "bob",
        "HITL_NB_HUB_SERVICE": "hitl",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("HITL_NB_GATEWAY", raising=False)
    monkeypatch.delenv("HITL_NB_GATEWAY_TOKEN", raising=False)
    monkeypatch.setattr(_gateway_link, "_found", {})
    link = gateway_link(None)
    assert link is not None and link.identified and link.name == "bob"
    assert "not found yet" in repr(link)
    with pytest.raises(GatewayUnavailable, match="did not answer"):
        asyncio.run(link.answer("r1", "p1", {"approve": True}))

    answered: list[str] = []

    def hub(req: Any, conn: Any) -> None:
        path = urlsplit(req.path).path
        if path == "/hub/api/services/hitl":
            conn.answer({"name": "hitl", "url": server.url, "prefix": "/services/hitl/"})
        elif path == "/services/hitl/api/me":
            conn.answer({"name": "bob", "display_name": "bob", "identified": True})
        elif path.endswith("/answer"):
            answered.append(path)
            conn.answer({"status": "forwarded", "message": "sent"})
        else:
            conn.answer({"message": "no such page"}, status=404)

    with serve(hub) as server:
        monkeypatch.setenv("JUPYTERHUB_API_URL", server.url + "/hub/api")
        reply = asyncio.run(link.answer("r1", "p1", {"approve": True}))
        assert reply.status == "forwarded"
        assert answered == ["/services/hitl/api/tasks/r1/prompts/p1/answer"]
        assert link.url == server.url + "/services/hitl/"
    link.close()


def test_without_the_hub_service_in_the_environment_an_unanswering_hub_leaves_cards_direct(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hitl_nb.notebook import _gateway_link

    monkeypatch.setenv("JUPYTERHUB_API_URL", f"http://127.0.0.1:{free_port()}/hub/api")
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "kernel-token")
    monkeypatch.setenv("JUPYTERHUB_USER", "bob")
    for name in ("HITL_NB_HUB_SERVICE", "HITL_NB_GATEWAY", "HITL_NB_GATEWAY_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(_gateway_link, "_found", {})
    assert gateway_link(None) is None
