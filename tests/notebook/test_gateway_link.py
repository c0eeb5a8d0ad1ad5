"""notebook/_gateway_link.py: what a card needs of the Jupyter server's gateway."""

from __future__ import annotations

from typing import Any

import pytest

from hitl_nb.client import GatewayClient, GatewayInfo
from hitl_nb.errors import GatewayRefused
from hitl_nb.notebook import gateway_link
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
