"""The mock agent's card caching (A2A 1.0 §8.6) and the ErrorInfo domain of its rejections."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from urllib.parse import urlsplit

import httpx
import pytest

from hitl_nb.errors import HITL_ERROR_DOMAIN as ERROR_DOMAIN
from hitl_nb.mock_agent import MockAgent, Scenario, Step
from hitl_nb.mock_agent._card import CardStamps, not_modified
from hitl_nb.spec import EXTENSION_URI
from tests.helpers.mock_agent_client import Wire, envelope_of


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


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


def test_card_stamps_are_bounded_and_the_rule_is_rfc_9110() -> None:
    stamps = CardStamps()
    for i in range(500):  # hostile Host headers
        stamps.stamp(f"http://h{i}", b"{}")
    assert len(stamps._seen) == 64
    etag, modified = stamps.stamp("http://x", b"{}")
    later = format_datetime(modified + timedelta(seconds=5), usegmt=True)
    earlier = format_datetime(modified - timedelta(seconds=5), usegmt=True)
    assert not_modified(None, later, etag, modified)
    assert not not_modified(None, earlier, etag, modified)
    assert not not_modified('"nope"', later, etag, modified)  # If-None-Match decides
    assert not_modified("*", None, etag, modified)
    assert not not_modified(None, None, etag, datetime.now(timezone.utc))


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
