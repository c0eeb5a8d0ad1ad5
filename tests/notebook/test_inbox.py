"""The notebook's Inbox without a Jupyter server: the kernel asks the agents itself.

Headless, against a real mock agent on 127.0.0.1; waits are bounded by timeouts, never
timed assertions. The gateway inbox is tested against a real server in
``tests/server/test_inbox_notebook.py``.
"""

from __future__ import annotations

import gc
import html
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hitl_nb.client import SyncHitlClient
from hitl_nb.errors import HitlError
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook import Inbox, InboxItem, PromptCard
from hitl_nb.notebook._inbox_sources import Listing
from hitl_nb.notebook._worker import shared_loop
from hitl_nb.spec import PromptEnvelope
from tests.helpers.until import until

PROMPT_ID = "0b1a5b7e-3c1f-4d8a-9b2e-6f0c1d2e3f4a"
SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


def _start(url: str, **options: Any) -> str:
    with SyncHitlClient(url) as client:
        task = client.send({"scenario": "approval", **options})
    return str(task.id)


def _tasks(inbox: Inbox) -> set[str]:
    return {item.task_id for item in inbox.items}


def test_the_kernel_inbox_lists_answers_and_follows_the_agents(agent: MockAgent) -> None:
    first, second = _start(agent.url), _start(agent.url)
    with Inbox(agents=[agent.url], gateway=None, poll_interval=0.2) as inbox:
        assert {first, second} <= _tasks(inbox)
        assert inbox.lives_with_kernel
        assert "lives only as long as this kernel" in inbox.title.value
        assert "only as long as the kernel" in inbox.to_text()
        row_of = {item.task_id: item for item in inbox.items}
        outcome = inbox.answer(row_of[first].prompt_id, {"approve": True})
        assert outcome.status == "accepted", outcome
        assert isinstance(inbox.cards[row_of[first].key], PromptCard)
        # The answered prompt leaves, and a new one appears, without refresh().
        until(lambda: first not in _tasks(inbox), what="the answered prompt to leave")
        third = _start(agent.url)
        until(lambda: third in _tasks(inbox), what="the new prompt to appear")
        assert second in _tasks(inbox)
        with inbox._lock:  # the list is redrawn from the shared thread
            assert len(inbox.list.children) == len(inbox.items)


def test_opening_shows_the_card_below_the_list(agent: MockAgent) -> None:
    task_id = _start(agent.url)
    with Inbox(agents=[agent.url], gateway=None) as inbox:
        with inbox._lock:  # the list is redrawn from the shared thread
            (item,) = [i for i in inbox.items if i.task_id == task_id]
            row = inbox.list.children[inbox.items.index(item)]
        row.children[1].click()  # "Open", as a person clicks it
        card = inbox.cards[item.key]
        assert inbox.detail.children[0] is card.widget
        inbox.detail.children[1].click()  # "Close"
        assert inbox.detail.children == ()


def test_a_quiet_look_sends_nothing_to_the_browser(agent: MockAgent) -> None:
    _start(agent.url)
    with Inbox(agents=[agent.url], gateway=None) as inbox:
        rows, title = inbox.list.children, inbox.title.value
        widgets = [row.children[0] for row in rows]
        inbox.refresh()
        assert inbox.list.children == rows and inbox.title.value == title
        assert [row.children[0] for row in inbox.list.children] == widgets


def test_without_a_server_or_agents_it_says_what_to_do() -> None:
    with pytest.raises(HitlError, match=r"Inbox\(agents=\[url\]\)"):
        Inbox(gateway=None)
    with pytest.raises(ValueError, match="poll_interval"):
        Inbox(agents=["http://127.0.0.1:9"], gateway=None, poll_interval=0)


def test_an_agent_that_cannot_be_reached_is_said_in_words() -> None:
    with Inbox(agents=["http://127.0.0.1:9"], gateway=None) as inbox:
        assert inbox.items == [] and len(inbox.problems) == 1
        assert "could not be asked" in inbox.problems[0]
        assert "No open prompts." in inbox.title.value


def test_what_the_agent_asks_is_text_never_markup() -> None:
    # S-1: the prompt is data. The row shows it escaped, whatever it holds.
    inbox = _offline_inbox()

    @settings(max_examples=40, deadline=None)
    @given(st.text(min_size=1, max_size=300).filter(str.strip))
    def check(text: str) -> None:
        env = PromptEnvelope.from_json(
            {"prompt_id": PROMPT_ID, "prompt": text, "response_schema": SCHEMA},
            mode="orchestrator",
        )
        inbox._apply(Listing([InboxItem(text, "http://a.invalid", "t<1>", env)], 1, []))
        html = inbox.list.children[0].children[0].value
        assert "<script" not in html.replace("<script>", "")
        assert "t&lt;1&gt;" in html
        assert html.count("<") == _tags(inbox.list.children[0].children[0].value)

    try:
        check()
        inbox._apply(Listing([], 0, []))
        assert inbox.list.children == ()
    finally:
        inbox.close()


def _tags(html: str) -> int:
    # Every "<" in the row is one of ours: the agent's text brings none.
    import re

    return len(re.findall(r"<(?:/?(?:div|span|b|code|style)\b)", html))


def _offline_inbox() -> Inbox:
    return Inbox(agents=["http://127.0.0.1:9"], gateway=None, poll_interval=3600)


def test_rerunning_the_cell_stops_the_looking_and_close_leaves_no_thread() -> None:
    from hitl_nb.notebook import _worker

    loop = shared_loop()
    before = set(threading.enumerate())
    inbox = _offline_inbox()
    _worker._by_cell.setdefault("cell-9", weakref.WeakSet()).add(inbox)
    _worker._pre_run_cell(type("Info", (), {"cell_id": "cell-9"})())
    until(lambda: inbox._looking.future.done(), what="the looking to stop")
    assert "ran again" in inbox.title.value
    inbox.close()
    inbox.close()  # idempotent
    forgotten = _offline_inbox()
    future = forgotten._looking.future
    del forgotten
    gc.collect()
    until(lambda: future.done(), what="a forgotten inbox to stop looking")
    assert set(threading.enumerate()) <= before and shared_loop() is loop  # none started


def test_a_long_inbox_is_drawn_a_page_at_a_time() -> None:
    inbox = Inbox(agents=["http://127.0.0.1:9"], gateway=None, poll_interval=3600, page_size=25)
    try:
        env = PromptEnvelope.from_json(
            {"prompt_id": PROMPT_ID, "prompt": "Go?", "response_schema": SCHEMA},
            mode="orchestrator",
        )
        items = [InboxItem(f"k{i}", "http://a.invalid", f"t{i}", env) for i in range(60)]
        inbox._apply(Listing(items, 60, []))
        assert len(inbox.list.children) == 25 and inbox.previous.disabled
        assert inbox.pages.layout.display == "flex"
        inbox.next.click()
        inbox.next.click()
        assert len(inbox.list.children) == 10 and inbox.next.disabled
        assert "prompts 51–60 of 60" in inbox.where.value
        first_rows = inbox.list.children
        inbox._apply(Listing(items[:30], 30, []))  # answered elsewhere: the page shrinks
        assert "prompts 26–30 of 30" in inbox.where.value
        assert all(row.comm is None for row in first_rows[5:])  # closed, not kept
        inbox._apply(Listing(items[:3], 3, []))
        assert inbox.pages.layout.display == "none" and len(inbox.list.children) == 3
    finally:
        inbox.close()


def test_a_server_that_is_found_but_silent_is_said_never_no_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hitl_nb.errors import GatewayUnavailable
    from hitl_nb.notebook import _inbox

    def silent(strict: bool = False) -> None:
        assert strict
        raise GatewayUnavailable("the Jupyter server running this kernel did not answer")

    monkeypatch.setattr(_inbox, "find_gateway", silent)
    with pytest.raises(GatewayUnavailable, match="did not answer"):
        Inbox()
    with Inbox(agents=["http://127.0.0.1:9"], poll_interval=3600) as inbox:
        assert inbox.lives_with_kernel  # the named agents are asked instead


def test_an_open_card_answered_elsewhere_says_so(agent: MockAgent) -> None:
    task_id = _start(agent.url)
    with Inbox(agents=[agent.url], gateway=None, poll_interval=0.2) as inbox:
        (item,) = [i for i in inbox.items if i.task_id == task_id]
        card = inbox.open(item)
        assert isinstance(card, PromptCard) and card.is_open
        with SyncHitlClient(agent.url) as other:  # someone else, not through this inbox
            other.respond(task_id, item.prompt_id, {"approve": False})
        until(lambda: card.outcome is not None, what="the card to hear of it")
        assert card.outcome is not None and card.outcome.status == "conflict"
        assert "someone else answered" in card.outcome.message and not card.is_open


def _bad_prompt(req: Any, conn: Any) -> None:
    view = {
        "registration": "r1",
        "prompt_id": "not-a-uuid",
        "prompt": "x",
        "state": "open",
        "response_schema": SCHEMA,
        "agent_url": "http://a.invalid",
        "task_id": "t",
    }
    conn.answer({"prompts": [view], "total": 1})


@pytest.mark.parametrize(
    ("handler", "words"),
    [
        (lambda r, c: c.answer(b"<html>busy</html>", content_type="text/html"), "without JSON"),
        (lambda r, c: c.answer([1, 2]), "not a JSON object"),
        (lambda r, c: c.answer({"message": "not yours"}, status=403), "HTTP 403): not yours"),
        (lambda r, c: c.cut(), "could not be reached"),
        (_bad_prompt, "is unreadable"),
    ],
)
def test_a_gateway_that_answers_nonsense_is_said_in_words(handler: Any, words: str) -> None:
    from hitl_nb.client import GatewayInfo
    from tests.helpers.tiny_server import serve

    with serve(handler) as server:
        info = GatewayInfo(server.url + "/", "t", "test")
        with Inbox(gateway=info, poll_interval=3600) as inbox:
            assert inbox.items == [] and len(inbox.problems) == 1
            assert words in inbox.problems[0]
            assert html.escape(inbox.problems[0]) in inbox.title.value  # shown, as text
