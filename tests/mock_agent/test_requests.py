"""What both bindings decode alike (hitl_nb.mock_agent._requests): ListTasks order and
its filter by status time, counters read from the wire."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from hitl_nb.errors import InvalidParams
from hitl_nb.mock_agent import MockAgent
from hitl_nb.mock_agent._requests import parse_count
from tests.helpers.mock_agent_client import Wire, envelope_of


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent(deadline_seconds=0.3) as a:
        yield a


@pytest.fixture()
def wire(agent: MockAgent) -> Iterator[Wire]:
    w = Wire(agent.url)
    yield w
    w.close()


def test_list_is_by_status_time_newest_first_and_filters_by_it(wire: Wire) -> None:
    a = wire.start()
    b = wire.start()
    time.sleep(0.002)
    wire.answer(a["id"], envelope_of(a)["prompt_id"], {"approve": True})  # a changes last
    ids = [t["id"] for t in wire.result("ListTasks", {"pageSize": 100})["tasks"]]
    assert ids.index(a["id"]) < ids.index(b["id"])
    since = wire.get_task(b["id"])["status"]["timestamp"]
    recent = wire.result("ListTasks", {"statusTimestampAfter": since})["tasks"]
    assert a["id"] in [t["id"] for t in recent] and b["id"] not in [t["id"] for t in recent]
    _, body = wire.rpc("ListTasks", {"statusTimestampAfter": "yesterday"})
    assert body["error"]["code"] == -32602


@pytest.mark.parametrize("raw", ["", "-1", "1.5", "²", "١٢", "1" * 19, "0x10"])
def test_a_counter_is_ascii_digits_or_refused_naming_what(raw: str) -> None:
    with pytest.raises(InvalidParams, match="Last-Event-ID must be a non-negative integer"):
        parse_count(raw, "Last-Event-ID")


def test_a_counter_reads_back_with_its_spaces_stripped() -> None:
    assert parse_count(" 42 ", "pageToken") == 42 and parse_count("0", "x") == 0
