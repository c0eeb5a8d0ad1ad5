"""``c.HitlServer``: the gateway's settings (declared once, for both hosts) and the
server's own, read from the server's config by the extension's gateway."""

from __future__ import annotations

from typing import Any

import pytest

from hitl_nb.gateway import GatewaySettings
from hitl_nb.server import HitlServer

CHOSEN = {
    "allowed_agent_hosts": ["agents.example.org"],
    "max_registrations": 7,
    "accept_after_deadline": True,
    "poll_interval": 2.5,
    "max_streams": 3,
    "push": False,
    "max_push_bytes": 4096,
    "agent_timeout": 12.0,
    "lease_seconds": 30.0,
}


@pytest.fixture
def jp_server_config(jp_server_config: dict[str, Any]) -> dict[str, Any]:
    jp_server_config["HitlServer"].update(CHOSEN)
    return jp_server_config


@pytest.mark.kernel
def test_the_servers_config_reaches_its_gateway(gateway: Any) -> None:
    settings = gateway.settings
    assert isinstance(settings, HitlServer)
    assert {name: getattr(settings, name) for name in CHOSEN} == CHOSEN
    assert settings.show_all is True and settings.where == "this server"
    assert gateway.push_url is None  # push off: no receiver
    assert gateway.pool.allowed_hosts == ["agents.example.org"]
    assert gateway.pool.limits.timeout == 12.0


def test_every_gateway_setting_is_a_setting_of_the_server() -> None:
    assert set(GatewaySettings.class_traits(config=True)) <= set(
        HitlServer.class_traits(config=True)
    )
