"""A gateway's feed heard for the cards (hitl_nb/notebook/_feed_waker.py): a card's
follower is woken when its task's prompt changes state or leaves, a reconnection wakes
every card, and the waker stops once no card needs it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import hitl_nb.notebook._feed_waker as feed_waker
from hitl_nb.client import FeedUpdate
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook._feed_waker import FeedWaker
from tests.helpers.jupyter_process import jupyter_server
from tests.helpers.server_kernel import result_of, server_kernel
from tests.helpers.until import until, until_async


class Card:
    """A conversation as the waker sees it."""

    def __init__(self) -> None:
        self.listening = True
        self.woken = 0
        self.event = threading.Event()

    def heard(self) -> None:
        self.woken += 1
        self.event.set()


def _now(check: Any) -> Any:
    """``check`` as the coroutine function ``until_async`` calls."""

    async def ask() -> Any:
        return check()

    return ask


def _item(reg: str, pid: str, state: str = "open") -> dict[str, Any]:
    return {"key": f"{reg}/{pid}", "registration": reg, "prompt_id": pid, "state": state}


def test_a_card_is_woken_when_its_prompt_changes_state_or_leaves() -> None:
    waker = FeedWaker(object(), feed=None)  # type: ignore[arg-type]
    a, b = Card(), Card()
    waker.add("r1", a)
    waker.add("r2", b)
    waker.apply(FeedUpdate(True, [_item("r1", "p"), _item("r2", "q")], [], 2))
    assert (a.woken, b.woken) == (0, 0)  # the first snapshot: nothing happened yet
    waker.apply(FeedUpdate(False, [_item("r1", "p")], [], 2))
    assert a.woken == 0  # the same state (a count changed, say): nothing to look at
    waker.apply(FeedUpdate(False, [_item("r1", "p", "forwarded")], [], 2))
    assert (a.woken, b.woken) == (1, 0)
    waker.apply(FeedUpdate(False, [], ["r2/q"], 1))
    assert (a.woken, b.woken) == (1, 1)
    waker.apply(FeedUpdate(False, [_item("r2", "new")], [], 2))
    assert b.woken == 1  # a new open prompt: the follower finds it when it looks
    waker.apply(FeedUpdate(False, [_item("r2", "x", "closed")], [], 2))
    assert b.woken == 2  # first heard of already over
    waker.apply(FeedUpdate(False, problem="the database is down"))
    assert (a.woken, b.woken) == (1, 2)
    # A snapshot after a reconnection wakes every card, and what left is told too.
    waker.apply(FeedUpdate(True, [_item("r2", "new")], [], 1))
    assert (a.woken, b.woken) == (2, 3)


def test_the_waker_follows_the_feed_reconnects_and_stops_when_no_card_needs_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(feed_waker, "IDLE_CHECK", 0.05)
    connections: list[int] = []

    async def main() -> None:
        answered = asyncio.Event()

        async def feed() -> AsyncIterator[FeedUpdate]:
            connections.append(1)
            yield FeedUpdate(True, [_item("r1", "p")], [], 1)
            if len(connections) == 1:
                raise ConnectionError("the feed dropped")  # never dies of it: tries again
            await answered.wait()
            yield FeedUpdate(False, [_item("r1", "p", "forwarded")], [], 1)
            await asyncio.Event().wait()  # quiet, as a feed between changes

        waker = FeedWaker(object(), feed=feed)  # type: ignore[arg-type]
        card = Card()
        waker.add("r1", card)
        running = asyncio.ensure_future(waker.run())
        await until_async(_now(lambda: len(connections) >= 2), 30, "the feed read again")
        await asyncio.sleep(0.05)
        assert card.woken == 1  # the snapshot after the reconnection
        answered.set()
        await until_async(_now(lambda: card.woken >= 2), 30, "the card woken by the change")
        card.listening = False  # the card's task ended: its follower stopped
        await asyncio.wait_for(running, 30)  # the waker stops by itself
        assert waker.retired

    asyncio.run(main())


# -- a real kernel, a real server: the card settles at the gateway's word -----------------

TOKEN = "single-user-secret"
HEADERS = {"Authorization": f"token {TOKEN}"}

START = """
from hitl_nb.notebook import Conversation
chat = Conversation.start({agent!r}, "approval", poll_interval=60)
chat
"""

STATE = """
import json
card = chat.cards[-1]
print("RESULT" + json.dumps({
    "watched": chat.watched[1] if chat.watched else None,
    "prompt_id": card.prompt_id,
    "outcome": card.outcome.status if card.outcome else None,
}))
"""


@pytest.mark.kernel
@pytest.mark.slow
def test_a_card_learns_at_once_that_the_panel_answered_its_prompt(tmp_path: Path) -> None:
    """Its follower looks at the task only every 60 s: the card settles within seconds
    only when the gateway's feed wakes it."""
    with MockAgent() as agent:
        with jupyter_server(
            tmp_path, identity_provider=None, token=TOKEN, ready_headers=HEADERS
        ) as url:
            with server_kernel(url, TOKEN, tmp_path / "runtime") as notebook:
                notebook(START.format(agent=agent.url))
                state = until(
                    lambda: (s := result_of(notebook(STATE)))["watched"] and s,
                    what="the task registered with the gateway",
                )
                time.sleep(1.0)  # the waker's feed connects meanwhile
                answer = (
                    f"{url}hitl/api/tasks/{state['watched']}/prompts/{state['prompt_id']}/answer"
                )
                r = httpx.post(
                    answer, json={"payload": {"approve": True}}, headers=HEADERS, timeout=30
                )
                assert r.status_code == 200, r.text
                told = until(
                    lambda: (s := result_of(notebook(STATE)))["outcome"] and s,
                    timeout=3.0,
                    what="the card's outcome, told by the gateway's feed",
                )
                assert told["outcome"] == "accepted", told
