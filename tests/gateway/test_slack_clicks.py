"""A Slack app's clicks kept in the store (hitl_nb/gateway/_slack_store.py), on every
store: a request is taken once, its click kept in the same transaction; a stopped
replica's pending clicks are adopted by a live one, once; a click done is not taken
again."""

from __future__ import annotations

import asyncio
import time

from hitl_nb.gateway._slack_store import SlackClick
from tests.gateway.conftest import Opener


def _click(signature: str, at: float) -> SlackClick:
    return SlackClick(
        signature, at, "UBOB", "bob", "r1", "p1", {"n": 3, "ok": True}, "https://x.invalid/r"
    )


def test_a_click_is_kept_once_and_a_dead_replicas_clicks_are_adopted(opener: Opener) -> None:
    async def work() -> None:
        store = opener()
        await store.open()
        try:
            now = time.time()
            await store.hold_leases("dead", 0.5)  # a heartbeat that will stop
            await store.hold_leases("alive", 60.0)
            assert await store.slack.accept(_click("v0=a", now), "dead", 600)
            assert not await store.slack.accept(_click("v0=a", now), "alive", 600)  # a replay
            assert await store.slack.accept(_click("v0=b", now + 1), "alive", 600)
            assert await store.slack.adopt_clicks("other") == []  # nobody's died yet
            (mine,) = await store.slack.adopt_clicks("alive")
            assert mine.signature == "v0=b"
            await asyncio.sleep(0.6)  # "dead" stopped
            await store.hold_leases("alive", 60.0)
            adopted = await store.slack.adopt_clicks("alive")
            assert [c.signature for c in adopted] == ["v0=a", "v0=b"]
            assert adopted[0] == _click("v0=a", now)  # the payload's types as given
            assert await store.slack.adopt_clicks("other") == []  # "alive" is alive
            await store.slack.click_done("v0=a")
            assert [c.signature for c in await store.slack.pending_clicks()] == ["v0=b"]
            # past the window, the request's signature and the done click are forgotten
            assert await store.slack.accept(_click("v0=a", now + 700), "alive", 600)
        finally:
            await store.close()

    asyncio.run(work())
