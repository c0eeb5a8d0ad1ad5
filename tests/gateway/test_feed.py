"""The gateway's feed (hitl_nb/gateway/_feed.py): what each follower's list holds, what
wakes it, how bursts coalesce, an unreachable store said once, and the feed over HTTP
as server-sent events."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.a2a import SSEParser
from hitl_nb.gateway import (
    AgentPool,
    Caller,
    FeedChange,
    Gateway,
    GatewaySettings,
    PromptItem,
    PromptState,
    StoreUnavailable,
)
from hitl_nb.gateway._feed import FeedFull, FeedScope, PromptFeed, serve_feed, sse_frames
from hitl_nb.gateway._sqlite import SQLiteStore
from hitl_nb.gateway._store import Registration
from hitl_nb.gateway._views import PROMPT_CUT
from hitl_nb.mock_agent import MockAgent
from tests.helpers.tasks import start_task

ALICE, BOB, CAROL = Caller("alice", "Alice"), Caller("bob", "Bob"), Caller("carol", "Carol")
ANONYMOUS = Caller(None, "the server's user")
SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def _envelope(prompt_id: str, responders: list[str], text: str | None = None) -> dict[str, Any]:
    return {
        "prompt_id": prompt_id,
        "prompt": text if text is not None else f"Prompt {prompt_id}?",
        "response_schema": SCHEMA,
        "allowed_responders": responders,
    }


def _gateway(tmp_path: Path, *, show_all: bool) -> Gateway:
    settings = GatewaySettings(show_all=show_all, watch=False, push=False)
    return Gateway(SQLiteStore(tmp_path / "gw.sqlite"), AgentPool([], 10.0), settings)


async def _seed(gw: Gateway, prompts: list[tuple[str, list[str]]], reg_id: str = "r1") -> None:
    await gw.store.open()
    await gw.store.add_registration(
        Registration(reg_id, "http://agent.invalid", f"t-{reg_id}", "alice", time.time(), "alice")
    )
    for pid, who in prompts:
        await gw.store.see_prompt(reg_id, pid, None, _envelope(pid, who), None)


def _item(reg_id: str, prompt_id: str, state: PromptState = PromptState.OPEN) -> PromptItem:
    """A feed item as a listing gives it (for the feeds made of a listing of the tests')."""
    return PromptItem(
        registration=reg_id,
        agent_url="http://agent.invalid",
        task_id=f"t-{reg_id}",
        prompt_id=prompt_id,
        prompt="Approve?",
        prompt_length=8,
        deadline=None,
        deadline_at=None,
        first_seen=0.0,
        allowed_responders=("any",),
        specific=(),
        needed=1,
        state=state,
        may_answer=True,
        why_not=None,
        answers=0,
        agreeing=0,
        disagreement=False,
        answered=False,
        registered_by="alice",
    )


async def _next(changes: AsyncIterator[FeedChange], timeout: float = 30.0) -> FeedChange:
    return await asyncio.wait_for(changes.__anext__(), timeout)


PROMPTS = [("p-any", ["any"]), ("p-carol", ["specific:carol"]), ("p-two", ["consensus:2"])]


def test_a_named_caller_follows_the_prompts_they_may_answer(tmp_path: Path) -> None:
    async def main() -> None:
        gw = _gateway(tmp_path, show_all=False)  # a hub: each sees their own
        await _seed(gw, PROMPTS)
        bob = gw.feed.follow(BOB)
        carol = gw.feed.follow(CAROL)
        try:
            first = await _next(bob)
            assert first.reset and first.total == 2
            assert [i["prompt_id"] for i in first.items] == ["p-any", "p-two"]
            mine = await _next(carol)
            assert {i["prompt_id"] for i in mine.items} == {"p-any", "p-carol", "p-two"}
            item = first.items[1]
            assert "response_schema" not in item  # a list never carries the schema
            assert item["needed"] == 2 and item["may_answer"] and not item["answered"]
            assert item["key"] == "r1/p-two" and item["registration"] == "r1"
        finally:
            await bob.aclose()
            await carol.aclose()
            await gw.close()

    asyncio.run(main())


def test_the_one_user_of_a_token_server_hears_of_every_prompt(tmp_path: Path) -> None:
    async def main() -> None:
        gw = _gateway(tmp_path, show_all=True)
        await _seed(gw, PROMPTS)
        feed = gw.feed.follow(ANONYMOUS)
        try:
            first = await _next(feed)
            by_id = {i["prompt_id"]: i for i in first.items}
            assert set(by_id) == {"p-any", "p-carol", "p-two"}
            assert by_id["p-any"]["may_answer"]
            # Named people and consensus: listed, with why this server cannot take them.
            assert not by_id["p-carol"]["may_answer"]
            assert "cannot tell its users apart" in by_id["p-carol"]["why_not"]
        finally:
            await feed.aclose()
            await gw.close()

    asyncio.run(main())


def test_a_long_question_is_cut_and_says_how_long_it_is(tmp_path: Path) -> None:
    async def main() -> None:
        gw = _gateway(tmp_path, show_all=True)
        await _seed(gw, [])
        text = "é" * 10_000
        await gw.store.see_prompt("r1", "p-long", None, _envelope("p-long", ["any"], text), None)
        feed = gw.feed.follow(ANONYMOUS)
        try:
            (item,) = (await _next(feed)).items
            assert item["prompt"] == "é" * PROMPT_CUT
            assert item["prompt_length"] == 10_000
        finally:
            await feed.aclose()
            await gw.close()

    asyncio.run(main())


def test_new_answered_and_closed_prompts_reach_the_follower(tmp_path: Path) -> None:
    async def main() -> None:
        settings = GatewaySettings(show_all=True, watch=False, push=False)
        with MockAgent() as agent:
            gw = Gateway(SQLiteStore(tmp_path / "gw.sqlite"), AgentPool([], 10.0), settings)
            await gw.store.open()
            feed = gw.feed.follow(ALICE)
            try:
                assert (await _next(feed)).items == []
                task = await start_task(agent.url, "approval")
                _, view = await gw.register(ALICE, agent.url, task.id)
                change = await _next(feed)
                (item,) = change.items
                assert item["prompt_id"] == view["prompts"][0]["prompt_id"]
                assert item["state"] == "open" and change.total == 1
                reply = await gw.answer(view["id"], item["prompt_id"], ALICE, {"approve": True})
                assert reply.status == 200
                gone = await _next(feed)
                assert gone.removed == [item["key"]] and gone.total == 0
            finally:
                await feed.aclose()
                await gw.close()

    asyncio.run(main())


def test_a_consensus_answer_changes_the_count_of_who_follows_it(tmp_path: Path) -> None:
    two = str(uuid.uuid4())

    async def main() -> None:
        gw = _gateway(tmp_path, show_all=False)
        await _seed(gw, [(two, ["consensus:2"])])
        bob = gw.feed.follow(BOB)
        try:
            assert (await _next(bob)).items[0]["answers"] == 0
            reply = await gw.answer("r1", two, ALICE, {"ok": True})
            assert reply.status == 202
            (item,) = (await _next(bob)).items
            assert (item["answers"], item["agreeing"], item["answered"]) == (1, 1, False)
        finally:
            await bob.aclose()
            await gw.close()

    asyncio.run(main())


def test_fifty_prompts_at_once_are_one_change(tmp_path: Path) -> None:
    async def main() -> None:
        gw = _gateway(tmp_path, show_all=True)
        await _seed(gw, [])
        feed = gw.feed.follow(ANONYMOUS)
        try:
            assert (await _next(feed)).items == []
            for n in range(50):
                env = _envelope(f"p{n}", ["any"])
                await gw.store.see_prompt("r1", f"p{n}", None, env, None)
            for n in range(50):  # as the gateway hints each one it sees
                gw.feed.changed("r1", _envelope(f"p{n}", ["any"]))
            burst = await _next(feed)
            assert len(burst.items) == 50 and burst.total == 50
        finally:
            await feed.aclose()
            await gw.close()

    asyncio.run(main())


def test_a_hint_wakes_only_followers_it_may_concern() -> None:
    async def listing(scope: FeedScope, limit: int) -> tuple[list[PromptItem], int]:
        return [], 0

    async def main() -> None:
        feed = PromptFeed(listing, recheck=3600)
        bob, carol, anyone = feed.follow(BOB), feed.follow(CAROL), feed.follow(ANONYMOUS)
        for follower in (bob, carol, anyone):
            await _next(follower)
        woken = {f.caller.name: f.wake for f in feed._followers}
        for wake in woken.values():
            wake.clear()
        feed.changed("r9", _envelope("p", ["specific:carol"]))
        assert {name: w.is_set() for name, w in woken.items()} == {
            "bob": False,
            "carol": True,
            None: True,  # the server's one user hears of everything
        }
        for follower in (bob, carol, anyone):
            await follower.aclose()
        assert feed.followers == 0

    asyncio.run(main())


def test_an_unreachable_store_is_said_once_then_a_snapshot_follows() -> None:
    calls: list[str] = []

    async def listing(scope: FeedScope, limit: int) -> tuple[list[PromptItem], int]:
        calls.append("read")
        if 2 <= len(calls) <= 4:
            raise StoreUnavailable("PostgreSQL hitl at db:5432", "connection refused")
        return [_item("r", "p")], 1

    async def main() -> None:
        feed = PromptFeed(listing, recheck=0.01, retry=0.01, settle=0)
        changes = feed.follow(ALICE)
        try:
            assert (await _next(changes)).reset
            problem = await _next(changes)
            assert problem.problem is not None and "db:5432" in problem.problem
            back = await _next(changes)  # one problem, however many failed reads
            assert back.reset and back.total == 1 and len(calls) >= 5
        finally:
            await changes.aclose()

    asyncio.run(main())


def test_the_feed_takes_at_most_its_followers() -> None:
    async def listing(scope: FeedScope, limit: int) -> tuple[list[PromptItem], int]:
        return [], 0

    async def main() -> None:
        feed = PromptFeed(listing, max_followers=1)
        first = feed.follow(ALICE)
        await _next(first)
        assert feed.full
        with pytest.raises(FeedFull):
            await _next(feed.follow(BOB))
        await first.aclose()
        assert not feed.full

    asyncio.run(main())


def _events(frames: list[bytes]) -> list[tuple[str, Any]]:
    parser = SSEParser()
    events = [e for frame in frames for e in parser.feed(frame)]
    return [(e.event, json.loads(e.data)) for e in events]


def test_a_snapshot_as_server_sent_events_keeps_each_event_small() -> None:
    items = [
        {"key": f"r/p{n}", "registration": "r", "prompt_id": f"p{n}", "prompt": "界" * 1000}
        for n in range(300)
    ]
    frames = sse_frames(FeedChange(True, items, [], 300))
    assert max(len(f) for f in frames) < 1 << 20  # a reader's cap on one event
    events = _events(frames)
    assert events[0] == ("reset", {"total": 300})
    assert events[-1] == ("synced", {"total": 300})
    upserts = [i for name, body in events if name == "upsert" for i in body["items"]]
    assert upserts == items and len(events) > 3
    assert _events(sse_frames(FeedChange(False, [], ["r/p1"], 0))) == [
        ("remove", {"keys": ["r/p1"]}),
        ("synced", {"total": 0}),
    ]
    assert _events(sse_frames(FeedChange(False, problem="db down"))) == [
        ("unavailable", {"message": "db down"})
    ]


def test_serving_the_feed_pings_when_quiet_and_lets_go_of_the_follower() -> None:
    async def listing(scope: FeedScope, limit: int) -> tuple[list[PromptItem], int]:
        return [], 0

    async def main() -> None:
        feed = PromptFeed(listing, recheck=3600)
        written: list[bytes] = []
        flushed = asyncio.Event()

        async def flush() -> None:
            if any(b.startswith(b": ping") for b in written):
                flushed.set()

        serving = asyncio.ensure_future(
            serve_feed(feed.follow(ALICE), written.append, flush, ping=0.01)
        )
        await asyncio.wait_for(flushed.wait(), 30)
        assert b"event: synced" in b"".join(written)
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)
        assert feed.followers == 0

    asyncio.run(main())


# -- incremental: a hint re-reads one task's prompts -------------------------------------


class _Listing:
    """A store's listing as the feed reads it: the reads counted, by which task."""

    def __init__(self, items: list[PromptItem]) -> None:
        self.items = {i.key: i for i in items}
        self.reads: list[str | None] = []
        self.down = False

    async def __call__(self, scope: FeedScope, limit: int) -> tuple[list[PromptItem], int]:
        self.reads.append(scope.registration)
        if self.down:
            raise StoreUnavailable("PostgreSQL hitl at db:5432", "connection refused")
        want = [
            i
            for i in self.items.values()
            if scope.registration is None or i.registration == scope.registration
        ]
        return want[:limit], len(want)


def test_a_hint_reads_only_its_tasks_prompts_again() -> None:
    listing = _Listing([_item("r1", "a"), _item("r1", "b"), _item("r2", "c")])

    async def main() -> None:
        feed = PromptFeed(listing, recheck=3600, settle=0)
        changes = feed.follow(ALICE)
        try:
            first = await _next(changes)
            assert first.reset and first.total == 3 and listing.reads == [None]
            listing.items["r1/a"] = _item("r1", "a", PromptState.FORWARDED)
            del listing.items["r1/b"]
            feed.changed("r1")
            change = await _next(changes)
            assert not change.reset and change.total == 2
            assert [i["key"] for i in change.items] == ["r1/a"]
            assert change.items[0]["state"] == "forwarded"
            assert change.removed == ["r1/b"]
            assert listing.reads == [None, "r1"]  # one task's prompts, not the whole list
            # A new prompt of another task: that task read, and it is added.
            listing.items["r3/d"] = _item("r3", "d")
            feed.changed("r3", _envelope("d", ["any"]))
            added = await _next(changes)
            assert [i["key"] for i in added.items] == ["r3/d"] and added.total == 3
            assert listing.reads == [None, "r1", "r3"]
            feed.changed()  # maybe any task's: the whole list
            listing.items["r2/c"] = _item("r2", "c", PromptState.FORWARDING)
            whole = await _next(changes)
            assert [i["key"] for i in whole.items] == ["r2/c"] and listing.reads[-1] is None
        finally:
            await changes.aclose()

    asyncio.run(main())


def test_the_whole_list_is_still_read_again_at_each_recheck() -> None:
    listing = _Listing([_item("r1", "a")])

    async def main() -> None:
        feed = PromptFeed(listing, recheck=0.02, settle=0)
        changes = feed.follow(ALICE)
        try:
            await _next(changes)
            # Another replica's change, never hinted here: the recheck finds it.
            listing.items["r9/z"] = _item("r9", "z")
            change = await _next(changes)
            assert [i["key"] for i in change.items] == ["r9/z"] and change.total == 2
            assert set(listing.reads) == {None}
        finally:
            await changes.aclose()

    asyncio.run(main())


def test_a_store_down_during_a_tasks_read_is_said_once_then_a_snapshot_follows() -> None:
    listing = _Listing([_item("r1", "a"), _item("r2", "b")])

    async def main() -> None:
        feed = PromptFeed(listing, recheck=3600, retry=0.01, settle=0)
        changes = feed.follow(ALICE)
        try:
            await _next(changes)
            listing.down = True
            feed.changed("r1")
            problem = await _next(changes)
            assert problem.problem is not None and "db:5432" in problem.problem
            assert listing.reads[:2] == [None, "r1"]
            await asyncio.sleep(0.1)  # several tries meanwhile, said once
            listing.down = False
            back = await _next(changes)
            assert back.reset and back.total == 2 and listing.reads[-1] is None
        finally:
            await changes.aclose()

    asyncio.run(main())


def test_a_list_longer_than_the_limit_is_read_whole_at_each_hint() -> None:
    listing = _Listing([_item("r1", "a"), _item("r2", "b"), _item("r3", "c")])

    async def main() -> None:
        feed = PromptFeed(listing, recheck=3600, settle=0, limit=2)
        changes = feed.follow(ALICE)
        try:
            first = await _next(changes)
            assert len(first.items) == 2 and first.total == 3
            listing.items["r1/a"] = _item("r1", "a", PromptState.FORWARDED)
            feed.changed("r1")
            change = await _next(changes)
            assert change.items[0]["state"] == "forwarded"
            assert listing.reads == [None, None]  # which two show is the whole list's say
        finally:
            await changes.aclose()

    asyncio.run(main())


# -- the tasks one registered: registered=mine ------------------------------------------


def test_a_registrant_hears_what_becomes_of_a_prompt_for_someone_else(tmp_path: Path) -> None:
    async def main() -> None:
        gw = _gateway(tmp_path, show_all=False)  # a hub
        await _seed(gw, [("p-bob", ["specific:bob"]), ("p-carol", ["specific:carol"])])
        mine = gw.feed.follow(ALICE, registered=True)
        alice = gw.feed.follow(ALICE)
        bobs = gw.feed.follow(BOB, registered=True)
        try:
            first = await _next(mine)
            by_id = {i["prompt_id"]: i for i in first.items}
            assert set(by_id) == {"p-bob", "p-carol"} and first.total == 2
            assert not by_id["p-bob"]["may_answer"]  # listed to the registrant, not theirs
            assert (await _next(alice)).items == []  # her own list: what she may answer
            assert (await _next(bobs)).items == []  # bob registered nothing
            await gw.store.close_prompt("r1", "p-bob", "closed by the agent")
            gw.feed.changed("r1")
            gone = await _next(mine)
            assert gone.removed == ["r1/p-bob"] and gone.total == 1
        finally:
            for changes in (mine, alice, bobs):
                await changes.aclose()
            await gw.close()

    asyncio.run(main())


def test_who_sees_a_prompt_for_someone_else_is_unchanged(tmp_path: Path) -> None:
    """S-3: bob's feed never shows carol's prompt, unless bob registered its task."""

    async def main() -> None:
        gw = _gateway(tmp_path, show_all=False)
        await _seed(gw, [("p-carol", ["specific:carol"])])
        await gw.store.add_registration(
            Registration("r2", "http://agent.invalid", "t-r2", "Bob", time.time(), "bob")
        )
        await gw.store.see_prompt(
            "r2", "q-carol", None, _envelope("q-carol", ["specific:carol"]), None
        )
        follows = {
            "bob": gw.feed.follow(BOB),
            "bob-mine": gw.feed.follow(BOB, registered=True),
            "dave-mine": gw.feed.follow(Caller("dave", "Dave"), registered=True),
        }
        try:
            seen = {k: {i["key"] for i in (await _next(f)).items} for k, f in follows.items()}
            assert seen == {"bob": set(), "bob-mine": {"r2/q-carol"}, "dave-mine": set()}
        finally:
            for changes in follows.values():
                await changes.aclose()
            await gw.close()

    asyncio.run(main())
