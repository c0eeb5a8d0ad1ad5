"""A relay of the prompts panel (hitl_nb/server/_relay.py) following another process's
gateway over HTTP: a scripted server that speaks the feed, and one that does not
(unreadable events, a refusal, an event too large); and what a page is given since
the number it has."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hitl_nb.client import GatewayInfo
from hitl_nb.gateway import FeedChange
from hitl_nb.server._relay import MAX_LOG, Relay, RemoteSource
from tests.helpers.tiny_server import Conn, Request, TinyServer
from tests.helpers.until import until_async

Script = Callable[[Request, Conn], None]


def _item(n: int) -> dict[str, Any]:
    return {"key": f"r/p{n}", "registration": "r", "prompt_id": f"p{n}", "prompt": f"Q{n}?"}


def _event(name: str, body: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(body)}\n\n".encode()


def _feed(*frames: bytes) -> Script:
    def handler(request: Request, conn: Conn) -> None:
        conn.head(200, "text/event-stream")
        for frame in frames:
            conn.send(frame)
        conn.stopped.wait(30)  # the stream stays open, as a feed does

    return handler


@pytest.fixture
def served() -> Iterator[Callable[[Script], str]]:
    servers: list[TinyServer] = []

    def serve(script: Script) -> str:
        server = TinyServer(script).start()
        servers.append(server)
        return server.url + "/"

    yield serve
    for server in servers:
        server.stop()


def _follow(url: str, there: Callable[[Relay], bool]) -> tuple[Relay, list[dict[str, Any]]]:
    told: list[dict[str, Any]] = []

    async def main() -> Relay:
        relay = Relay(RemoteSource(GatewayInfo(url, "t", "test", url + "api/")), "r", told.append)

        async def arrived() -> bool:
            return there(relay)

        relay.start()
        try:
            await until_async(
                arrived,
                timeout=30,
                what="the relay's list",
                detail=lambda: f"{relay.status}, {relay.items}",
            )
            return relay
        finally:
            await relay.stop()

    return asyncio.run(main()), told


def test_a_snapshot_then_changes_are_kept(served: Callable[[Script], str]) -> None:
    url = served(
        _feed(
            _event("reset", {"total": 3}),
            _event("upsert", {"items": [_item(1), _item(2)]}),
            _event("upsert", {"items": [_item(3), {"key": "no registration"}]}),
            _event("synced", {"total": 3}),
            _event("a-later-version", {"whatever": True}),  # ignored
            _event("remove", {"keys": ["r/p2"]}),
            _event("synced", {"total": 2}),
        )
    )
    relay, told = _follow(url, lambda r: r.total == 2)
    assert sorted(relay.items) == ["r/p1", "r/p3"]  # the malformed item was dropped
    assert relay.status["state"] == "ok"
    assert [t["seq"] for t in told] == [1, 2]


def test_an_unreadable_feed_is_said_once(served: Callable[[Script], str]) -> None:
    url = served(_feed(b"event: upsert\ndata: {not json\n\n"))
    relay, told = _follow(url, lambda r: r.status["state"] == "unavailable")
    assert "unreadable feed event" in relay.status["message"]
    assert len(told) == 1


def test_a_refusal_says_the_gateways_words(served: Callable[[Script], str]) -> None:
    def refuse(request: Request, conn: Conn) -> None:
        conn.answer({"error": 403, "message": "the hub did not vouch for this request"}, 403)

    relay, _ = _follow(served(refuse), lambda r: r.status["state"] == "unavailable")
    assert "HTTP 403: the hub did not vouch for this request" in relay.status["message"]


def test_an_event_too_large_is_refused_not_kept(served: Callable[[Script], str]) -> None:
    huge = _event("upsert", {"items": [_item(1) | {"prompt": "x" * (5 * 1024 * 1024)}]})
    relay, _ = _follow(served(_feed(huge)), lambda r: r.status["state"] == "unavailable")
    assert relay.items == {}


def _relay_with(changes: list[FeedChange]) -> Relay:
    relay = Relay(RemoteSource(GatewayInfo("http://x.invalid/", None, "t")), "r", lambda _: None)
    for change in changes:
        relay._apply(change)
    return relay


def test_a_page_gets_what_changed_since_its_number_or_the_whole_list() -> None:
    relay = _relay_with(
        [
            FeedChange(True, [_item(1), _item(2)], [], 2),
            FeedChange(False, [_item(3)], ["r/p1"], 2),
        ]
    )
    since = relay.since(relay.epoch, 1)
    assert not since["full"] and since["remove"] == ["r/p1"]
    assert [i["key"] for i in since["upsert"]] == ["r/p3"]
    assert relay.since("another run", 1)["full"]
    assert relay.since(relay.epoch, 99)["full"]  # a number this run never gave
    assert relay.since(relay.epoch, None)["full"]
    current = relay.since(relay.epoch, relay.seq)
    assert not current["full"] and current["upsert"] == [] and current["remove"] == []


def test_a_page_far_behind_gets_the_whole_list() -> None:
    relay = _relay_with([FeedChange(True, [], [], 0)])
    first = relay.seq
    for n in range(MAX_LOG + 10):
        relay._apply(FeedChange(False, [_item(n)], [], n + 1))
    assert relay.since(relay.epoch, first)["full"]
    recent = relay.since(relay.epoch, relay.seq - 1)
    assert not recent["full"] and len(recent["upsert"]) == 1
