"""The mock agent's card (hitl_nb.mock_agent._card): what it says, and its caching
(A2A 1.0 §8.6)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from hitl_nb.mock_agent import BUILTIN_SCENARIOS, MockAgent, Scenario, Step
from tests.helpers.mock_agent_client import URI, Wire


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


@pytest.fixture()
def builtin() -> Iterator[MockAgent]:
    """An agent with the built-in scenarios only (the module's agent gets one more)."""
    with MockAgent() as running:
        yield running


@pytest.fixture()
def wire(builtin: MockAgent) -> Iterator[Wire]:
    w = Wire(builtin.url)
    yield w
    w.close()


def test_the_card_is_cacheable_and_answers_conditional_gets(agent: MockAgent) -> None:
    first = httpx.get(agent.card_url, timeout=5)
    assert first.status_code == 200
    assert first.headers["cache-control"] == "max-age=300"
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    again = httpx.get(agent.card_url, headers={"If-None-Match": etag}, timeout=5)
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    weak = httpx.get(agent.card_url, headers={"If-None-Match": f'"other", W/{etag}'}, timeout=5)
    assert weak.status_code == 304
    since = httpx.get(agent.card_url, headers={"If-Modified-Since": modified}, timeout=5)
    assert since.status_code == 304
    stale = httpx.get(agent.card_url, headers={"If-None-Match": '"stale"'}, timeout=5)
    assert stale.status_code == 200 and stale.json() == first.json()
    garbage = httpx.get(agent.card_url, headers={"If-Modified-Since": "yesterday"}, timeout=5)
    assert garbage.status_code == 200  # an unreadable date is ignored


def test_a_new_scenario_changes_the_etag(agent: MockAgent) -> None:
    before = httpx.get(agent.card_url, timeout=5).headers["etag"]
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    agent.register_scenario(Scenario("card-etag", "one more", steps=[Step("X?", schema)]))
    after = httpx.get(agent.card_url, headers={"If-None-Match": before}, timeout=5)
    assert after.status_code == 200 and after.headers["etag"] != before
    assert "card-etag" in [s["id"] for s in after.json()["skills"]]


def test_card(wire: Wire, builtin: MockAgent) -> None:
    agent = builtin
    card = wire.http.get(agent.card_url).json()
    assert card["supportedInterfaces"] == [
        {"url": agent.url + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": agent.url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ]
    caps = card["capabilities"]
    assert caps["streaming"] is True and caps["pushNotifications"] is True
    assert caps["extensions"] == [
        {
            "uri": URI,
            "description": "Structured HITL prompt envelope on INPUT_REQUIRED state.",
            "required": False,
            "params": {},
        }
    ]
    assert [s["id"] for s in card["skills"]] == [s.name for s in BUILTIN_SCENARIOS]
    assert all('"scenario"' in s["description"] for s in card["skills"])
