"""How the mock agent writes an A2A error on each binding (hitl_nb.mock_agent._wire_errors):
the ErrorInfo domain of the extension's rejections and of A2A's own."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from hitl_nb.errors import HITL_ERROR_DOMAIN as ERROR_DOMAIN
from hitl_nb.mock_agent import MockAgent
from hitl_nb.spec import EXTENSION_URI
from tests.helpers.mock_agent_client import Wire, envelope_of


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


def test_hitl_rejections_use_the_extensions_own_error_domain(agent: MockAgent) -> None:
    assert ERROR_DOMAIN == urlsplit(EXTENSION_URI).hostname  # consistent with the URI
    wire = Wire(agent.url)
    try:
        task = wire.start("approval")
        pid = envelope_of(task)["prompt_id"]
        _, invalid = wire.answer(task["id"], pid, {"approve": "no"})
        assert invalid["error"]["data"][0]["domain"] == ERROR_DOMAIN
        assert invalid["error"]["data"][0]["reason"] == "HITL_RESPONSE_INVALID"
        _, unknown = wire.answer(task["id"], "0d7f1e7e-0000-4000-8000-000000000000", {})
        assert unknown["error"]["data"][0]["domain"] == ERROR_DOMAIN
        _, missing = wire.rpc("GetTask", {"id": "nope"})
        assert missing["error"]["data"][0]["domain"] == "a2a-protocol.org"  # A2A's own
        rest = httpx.post(agent.url + "/message:send", json={"message": {}}, timeout=5)
        assert rest.json()["error"]["details"][0]["domain"] == "a2a-protocol.org"
    finally:
        wire.close()
