"""Conversations that follow their task live, headless, against real agents on 127.0.0.1.

The same handlers a browser click runs are driven through the widget objects
(``Button.click()``, a text field's ``value``); waits are bounded by timeouts, never
by timed assertions.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from hitl_nb.a2a import TaskState
from hitl_nb.client import PromptEvent, StatusEvent, SyncHitlClient, TaskEvent
from hitl_nb.errors import HitlError, TaskNotFound, WaitTimedOut
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook import Conversation, Outcome, PromptCard
from hitl_nb.notebook._worker import BLOCKING_PREFIX, BLOCKING_WORKERS, shared_loop
from tests.helpers.proxy import cut_proxy
from tests.helpers.until import until


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


def test_start_returns_while_the_agent_thinks_and_the_card_follows(agent: MockAgent) -> None:
    content = {"scenario": "approval", "start_delay_seconds": 1.5}
    with Conversation.start(agent.url, content, settle=0) as chat:
        assert chat.task is not None and chat.task.id
        assert chat.task.status.state.name in ("SUBMITTED", "WORKING")
        assert chat.current is None and chat.following
        assert "Working" in chat.notice.value and "hitl-clock" in chat.notice.value
        until(lambda: "Preparing the first question." in chat.said.value, what="the status text")
        assert "task is WORKING" in chat.to_text()
        card = chat.next_prompt(timeout=30)
        assert isinstance(card, PromptCard) and card is chat.current
        assert chat.answer({"approve": True}).status == "accepted"
        assert chat.task.status.state.name == "COMPLETED"
        with pytest.raises(HitlError, match="no further prompt: the task is COMPLETED"):
            chat.next_prompt(timeout=5)


def test_answer_from_code_waits_for_a_slow_first_prompt(agent: MockAgent) -> None:
    content = {"scenario": "approval", "start_delay_seconds": 0.5}
    with Conversation.start(agent.url, content, settle=0) as chat:
        outcome = chat.answer({"approve": False}, timeout=30)
    assert outcome.status == "accepted" and "COMPLETED" in outcome.message


def test_next_prompt_can_be_awaited(agent: MockAgent) -> None:
    with Conversation.start(agent.url, {"scenario": "multi-step"}) as chat:
        chat.answer({"name": "r1"})

        async def later() -> PromptCard:
            return await chat.next_prompt_async(timeout=30)

        card = asyncio.run(later())
        assert card.envelope.prompt.startswith("Step 2 of 3")
        with pytest.raises(WaitTimedOut):  # nobody clicks
            asyncio.run(card.wait_async(timeout=0.05))


@pytest.mark.slow
def test_a_slow_agents_accepted_answer_is_accepted() -> None:
    with MockAgent(faults=["slow-resume=1500"]) as slow:
        with Conversation.start(slow.url, {"scenario": "approval"}) as chat:
            card = chat.current
            assert card is not None
            card.form.value = {"approve": True}
            card.form.submit_button.click()  # the handler a browser click runs
            assert card.outcome is None  # sent in the background: the kernel is free
            until(lambda: "accepted" in card.status.value, what="accepted")
            assert "✓ submitted" not in card.form.status.value
            outcome = card.wait(timeout=30)
            assert outcome.status == "accepted" and "COMPLETED" in outcome.message
            # said plainly, from the client's receipt: it landed, and slowly
            assert "the extension asks" in outcome.message, outcome
            assert "the extension asks" in card.status.value
            assert repr(outcome).count("\n") == 0 and repr(outcome).startswith("<Outcome accepted")
        with Conversation.start(slow.url, {"scenario": "approval"}) as chat:
            by_code = chat.answer({"approve": True})
            assert by_code.status == "accepted" and "COMPLETED" in by_code.message


def test_a_deadline_that_fails_the_task_closes_the_open_card(agent: MockAgent) -> None:
    # 5 s: the card must still show its countdown when the test first looks (with 1 s,
    # a loaded machine once took longer than that to start the conversation).
    content = {"scenario": "deadline", "deadline_seconds": 5, "on_deadline": "fail"}
    with Conversation.start(agent.url, content, poll_interval=30) as chat:
        card = chat.current
        assert card is not None and "hitl-deadline" in card.header.value
        assert "deadline in" in card.header.value
        outcome = card.wait(timeout=30)  # nobody clicks: the card closes by itself
        assert outcome is not None and outcome.status == "expired", outcome
        assert "deadline passed" in outcome.message and "409" not in outcome.message
        assert card.form.disabled and card.form.submit_button.disabled
        assert "deadline passed" in card.header.value
        # What card.wait() returns, the conversation's own widgets already say.
        assert "Failed" in chat.notice.value and "passed" in chat.said.value
        assert "task is FAILED" in chat.to_text()
        with pytest.raises(HitlError, match="no prompt is open: the task is FAILED"):
            chat.answer({"approve": True})


@pytest.mark.parametrize("waits", ["wait", "wait_async"])
def test_a_cards_wait_returns_once_the_conversation_has_drawn_the_update(
    agent: MockAgent, monkeypatch: pytest.MonkeyPatch, waits: str
) -> None:
    # The card settles in the middle of the conversation's update (the task ended); the
    # conversation redraws its widgets at the end of it. A slow redraw shows whether a
    # wait returns before it: it must not.
    drawing = Conversation._render

    def slow(self: Conversation) -> None:
        if self.task is not None and self.task.status.state.is_terminal:
            time.sleep(0.5)
        drawing(self)

    monkeypatch.setattr(Conversation, "_render", slow)
    # The update holds the conversation's lock and takes the card's: a wait that held
    # the card's lock while it waited for the redraw could deadlock with it.
    card_lock_held: list[bool] = []
    drawn = Conversation.drawn

    def drawn_without_the_cards_lock(self: Conversation) -> None:
        card_lock_held.extend(c._lock._is_owned() for c in self.cards)  # type: ignore[attr-defined]
        drawn(self)

    monkeypatch.setattr(Conversation, "drawn", drawn_without_the_cards_lock)
    with Conversation.start(agent.url, {"scenario": "approval"}, poll_interval=0.2) as chat:
        card = chat.current
        assert card is not None and chat.task is not None
        with SyncHitlClient(agent.url) as other:
            other.cancel(chat.task.id)
        if waits == "wait":
            outcome = card.wait(timeout=30)
        else:
            outcome = asyncio.run(card.wait_async(timeout=30))
        assert outcome.status == "closed"
        assert "Canceled" in chat.notice.value
        assert card.wait(timeout=30) is outcome  # once in, at once, and drawn
        assert card._await_outcome(30) is outcome  # what answer() waits with, likewise
        assert card_lock_held and not any(card_lock_held)


def test_a_late_answer_to_an_agent_that_keeps_the_prompt_open_is_accepted(
    agent: MockAgent,
) -> None:
    content = {"scenario": "deadline", "deadline_seconds": 1}
    with Conversation.start(agent.url, content, poll_interval=30) as chat:
        card = chat.current
        assert card is not None
        until(lambda: "deadline passed" in card.header.value, what="deadline passed")
        until(lambda: "still takes answers" in card.notes.value, what="the late note")
        assert card.is_open and not card.form.disabled
        assert chat.answer({"approve": True}).status == "accepted"


def test_a_409_after_the_deadline_is_expired_not_already_answered(agent: MockAgent) -> None:
    content = {"scenario": "deadline", "deadline_seconds": 1, "on_deadline": "fail"}
    client = SyncHitlClient(agent.url)
    try:
        # not followed: the person answers a card that still looks open
        chat = Conversation(client, client.send(content), follow=False)
        card = chat.current
        assert card is not None
        # nobody answers in time: the agent fails the task at the deadline
        until(
            lambda: client.get_task(chat.task.id).status.state is TaskState.FAILED,
            timeout=30,
            what="the deadline to fail the task",
            interval=0.1,
        )
        outcome = card.answer({"approve": True})
        assert outcome.status == "expired" and "deadline passed" in outcome.message
        assert card.form.disabled
    finally:
        client.close()


def test_a_specific_prompt_is_answered_by_click_as_the_named_person(agent: MockAgent) -> None:
    content = {"scenario": "specific", "responder": "reviewer@example.org"}
    with Conversation.start(agent.url, content, responder="intern@example.org") as chat:
        card = chat.current
        assert card is not None
        field = card.who.input
        assert "hitl-responder" in field._dom_classes and field.value == "intern@example.org"
        card.form.value = {"approve": True}
        card.form.submit_button.click()
        assert card.outcome is not None and card.outcome.status == "refused"
        assert card.who.override.layout.display is None  # the override is offered
        assert "does not check who answers" in card.who.note.value
        field.value = "reviewer@example.org"  # the person says who they are
        assert card.who.override.layout.display == "none"
        card.form.submit_button.click()
        outcome = card.wait(timeout=30)
        assert outcome is not None
        assert outcome.status == "accepted" and "overridden" not in outcome.message


def test_an_override_is_deliberate_and_said(agent: MockAgent) -> None:
    content = {"scenario": "specific", "responder": "reviewer@example.org"}
    with Conversation.start(agent.url, content, responder="intern@example.org") as chat:
        card = chat.current
        assert card is not None
        card.form.value = {"approve": True}
        card.form.submit_button.click()
        assert card.outcome is not None and card.outcome.status == "refused"
        card.who.override.value = True
        card.form.submit_button.click()
        outcome = card.wait(timeout=30)
        assert outcome is not None
        assert outcome.status == "accepted" and "overridden deliberately" in outcome.message


def test_the_responder_field_comes_from_jupyterhub(
    agent: MockAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", "reviewer@example.org")
    content = {"scenario": "specific", "responder": "reviewer@example.org"}
    with Conversation.start(agent.url, content) as chat:
        card = chat.current
        assert card is not None and card.who.input.value == "reviewer@example.org"
        assert "answering as: reviewer@example.org" in card.to_text()
        card.form.value = {"approve": True}
        card.form.submit_button.click()
        assert card.wait(timeout=30).status == "accepted"


def test_consensus_says_how_many_answers_are_still_needed(agent: MockAgent) -> None:
    with Conversation.start(agent.url, {"scenario": "consensus", "n": 3}) as chat:
        card = chat.current
        assert card is not None
        assert "0 answers collected, 0 of 3 agreeing; 3 more needed" in card.who.note.value
        assert card.answer({"approve": True}, responder="alice").status == "held"
        assert "1 answer collected, 1 of 3 agreeing; 2 more needed" in card.who.note.value
        assert card.answer({"approve": False}, responder="bob").status == "held"
        assert "2 answers collected, 1 of 3 agreeing; 2 more needed" in card.who.note.value
        assert "differ" in card.who.note.value
        assert card.answer({"approve": True}, responder="bob").status == "held"
        assert card.answer({"approve": True}, responder="carol").status == "accepted"
        # Enough, in words: never "0 more needed".
        assert "3 answers collected, 3 of 3 agreeing: enough" in card.who.note.value
        assert "more needed" not in card.who.note.value


def test_someone_else_answering_closes_the_card_without_a_click(agent: MockAgent) -> None:
    with Conversation.start(agent.url, {"scenario": "approval"}, poll_interval=0.2) as chat:
        card = chat.current
        assert card is not None and chat.task is not None
        with SyncHitlClient(agent.url) as other:
            other.respond(chat.task.id, card.prompt_id, {"approve": True})
        outcome = card.wait(timeout=30)
        assert outcome is not None
        assert outcome.status == "conflict" and "someone else answered" in outcome.message
        assert card.form.disabled


def test_a_cancel_while_the_card_is_open_disables_it(agent: MockAgent) -> None:
    with Conversation.start(agent.url, {"scenario": "approval"}, poll_interval=0.2) as chat:
        card = chat.current
        assert card is not None and chat.task is not None
        with SyncHitlClient(agent.url) as other:
            other.cancel(chat.task.id)
        outcome = card.wait(timeout=30)
        assert outcome is not None
        assert outcome.status == "closed" and "canceled" in outcome.message
        assert card.form.disabled
        assert "Canceled" in chat.notice.value
        assert (
            "submitted" not in card.form.status.value or card.form.status.layout.display == "none"
        )


def test_a_stream_cut_mid_task_reconnects_with_no_lost_or_doubled_event(
    agent: MockAgent,
) -> None:
    with cut_proxy(agent.url) as proxy:
        proxy.cut_after_events = 2  # the first stream dies after the snapshot and WORKING
        content = {"scenario": "approval", "start_delay_seconds": 1.0}
        # The card is read apart, so the stream is the first answer on its connection.
        card_json = httpx.get(proxy.url + "/.well-known/agent-card.json").json()
        with Conversation.start(card_json, content, settle=0) as chat:
            card = chat.next_prompt(timeout=30)
            states = [state for state, _ in chat.link_log]
            assert proxy.cuts == 1 and "reconnecting" in states, states
            assert states[states.index("reconnecting") + 1] == "live", states
            assert chat.answer({"approve": True}).status == "accepted"
            # Events the agent numbered (the streams) arrive once each, none missing;
            # snapshots read with GetTask are logged only when they bring a new status.
            ids = [
                e.event_id
                for e in chat.events
                if isinstance(e, (TaskEvent, StatusEvent)) and e.event_id is not None
            ]
            assert len(ids) == len(set(ids)), ids
            numbers = sorted(int(i) for i in ids)
            assert numbers == list(range(1, numbers[-1] + 1)), numbers
            statuses = [
                (s.state, s.timestamp)
                for s in (
                    e.task.status if isinstance(e, TaskEvent) else e.status
                    for e in chat.events
                    if isinstance(e, (TaskEvent, StatusEvent))
                )
            ]
            assert len(statuses) == len(set(statuses)), statuses
            assert [s for s, _ in statuses].count(TaskState.INPUT_REQUIRED) == 1
            assert statuses[-1][0] is TaskState.COMPLETED
            assert sum(isinstance(e, PromptEvent) for e in chat.events) == 1
            assert card.prompt_id == chat.cards[0].prompt_id


def test_a_malformed_prompt_says_why_in_text_too() -> None:
    with MockAgent(faults=["oversize-schema"]) as bad:
        with Conversation.start(bad.url, {"scenario": "approval"}) as chat:
            assert chat.malformed is not None and chat.current is None
            why = "cannot be answered safely: response_schema is 70268 bytes, over 64 KiB"
            text = chat._repr_mimebundle_()["text/plain"]
            assert why in text and "(§Security Considerations S-2)" in text
            assert "/response_schema" not in text  # the section, not a JSON Pointer
            assert why in chat.notice.value


def test_close_stops_the_background_work(agent: MockAgent) -> None:
    chat = Conversation.start(
        agent.url, {"scenario": "approval", "start_delay_seconds": 30}, settle=0
    )
    assert chat.following
    chat.close()
    assert not chat.following and "closed" in chat.notice.value
    chat.close()  # idempotent


def _blocking_workers() -> int:
    return sum(t.name.startswith(BLOCKING_PREFIX) for t in threading.enumerate())


def _threads() -> set[threading.Thread]:
    """Threads but the shared loop's workers for blocking calls.

    Compared as sets, only new ones counted: a thread started before this test may
    end while it runs (the hang guard's timer of the test before, conftest.py).
    """
    return {t for t in threading.enumerate() if not t.name.startswith(BLOCKING_PREFIX)}


def test_one_thread_for_any_number_of_conversations_and_none_kept_when_forgotten(
    agent: MockAgent,
) -> None:
    loop = shared_loop()
    before = _threads()
    content = {"scenario": "approval", "start_delay_seconds": 30}
    chats = [Conversation.start(agent.url, content, settle=0) for _ in range(12)]
    assert _threads() - before == set()  # all on the one shared loop thread
    assert _blocking_workers() <= BLOCKING_WORKERS  # and its few for blocking calls
    assert all(c.following for c in chats)
    followers = [c._box[0] for c in chats]
    del chats
    gc.collect()
    for follower in followers:
        assert follower is not None
        until(lambda f=follower: f.future.done(), what="the follower of a forgotten chat")
    assert _threads() - before == set() and shared_loop() is loop

    async def count() -> int:
        return len([t for t in asyncio.all_tasks() if t is not asyncio.current_task()])

    assert loop.run(count()) == 0


def test_rerunning_the_cell_or_an_interrupt_stops_the_following(agent: MockAgent) -> None:
    from hitl_nb.notebook import _worker

    content = {"scenario": "approval", "start_delay_seconds": 30}
    chat = Conversation.start(agent.url, content, settle=0)
    _worker._by_cell.setdefault("cell-1", __import__("weakref").WeakSet()).add(chat)
    _worker._pre_run_cell(type("Info", (), {"cell_id": "cell-1"})())
    assert not chat.following and "ran again" in chat.notice.value
    other = Conversation.start(agent.url, content, settle=0)
    _worker._post_run_cell(type("Result", (), {"error_in_exec": KeyboardInterrupt()})())
    assert not other.following and "interrupted" in other.notice.value
    chat.close()
    other.close()


def test_attach_follows_an_existing_task(agent: MockAgent) -> None:
    with SyncHitlClient(agent.url) as client:
        task = client.send({"scenario": "approval"})
    with Conversation.attach(agent.url, task.id) as chat:  # e.g. after a kernel restart
        assert chat.current is not None
        assert chat.answer({"approve": True}).status == "accepted"
    with pytest.raises(TaskNotFound):
        Conversation.attach(agent.url, "no-such-task")


def test_start_says_what_went_wrong(agent: MockAgent) -> None:
    with pytest.raises(HitlError, match="unknown scenario"):
        Conversation.start(agent.url, {"scenario": "nope"})
    with pytest.raises(ValueError, match="poll_interval"):
        Conversation.start(agent.url, {"scenario": "approval"}, poll_interval=0)


def test_an_agent_without_the_extension_asks_in_text_and_gets_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.helpers.sdk_agent import SdkAgent

    # The text question's answer, like a prompt's, returns once the conversation has
    # drawn the update that brought its outcome.
    drawn: list[Conversation] = []
    drawing = Conversation.drawn
    monkeypatch.setattr(Conversation, "drawn", lambda self: (drawn.append(self), drawing(self)))
    with SdkAgent() as sdk:
        url = sdk.url + "/.well-known/agent-card.json"
        with Conversation.start(url, "hello", activate_extension=False) as chat:
            question = until(lambda: chat.question, what="the text question")
            assert "Approve the release?" in question.to_text() and chat.current is None
            outcome = chat.answer("yes, ship it")
            assert outcome.status == "accepted", outcome
            assert drawn == [chat]
            assert chat.task is not None and chat.task.status.state.name == "INPUT_REQUIRED"


def test_outcome_repr_is_one_line() -> None:
    outcome = Outcome("invalid", "no", None, [{"path": "/a", "message": "x\ny"}])
    assert repr(outcome) == "<Outcome invalid: no>"
    assert str(outcome) == "invalid: no\n  /a: x\ny"


def test_the_orchestrator_checks_warnings_are_on_the_card(agent: MockAgent) -> None:
    from hitl_nb.mock_agent import Scenario, Step

    long_prompt = "Read all of this. " * 300  # over the 4096 characters a prompt SHOULD keep to
    loose = Scenario("loose", "", steps=[Step(long_prompt, {"type": "object"})])
    agent.register_scenario(loose)
    with Conversation.start(agent.url, {"scenario": "loose"}) as chat:
        card = chat.current
        assert card is not None
        assert "The orchestrator check noted" in card.notes.value
        assert "SHOULD be at most 4096" in card.notes.value


def test_what_the_agent_says_is_text_json_and_safe_links() -> None:
    from hitl_nb.a2a import Artifact, Part
    from hitl_nb.notebook._parts import artifacts_html, artifacts_text

    parts = [
        Part(text="<b>done</b>"),
        Part(data={"n": 1}, has_data=True),
        Part(url="https://example.org/report.pdf", filename="report.pdf", media_type="a/pdf"),
        Part(url="javascript:alert(1)", filename="x"),
        Part(raw=b"abc", filename="blob.bin"),
    ]
    html = artifacts_html([Artifact("a1", parts, name="result")])
    assert "&lt;b&gt;done&lt;/b&gt;" in html and "<b>done</b>" not in html
    assert '"n": 1' in html.replace("&quot;", '"')
    assert '<a href="https://example.org/report.pdf"' in html and 'rel="noopener' in html
    assert 'href="javascript' not in html and "javascript:alert(1)" in html
    assert "blob.bin (3 bytes)" in html
    lines = artifacts_text([Artifact("a1", parts)])
    assert lines[1] == 'artifact: {"n": 1}' and lines[2].endswith("report.pdf")


def test_closing_the_client_under_a_conversation_stops_it_quietly(agent: MockAgent) -> None:
    client = SyncHitlClient(agent.url)
    content = {"scenario": "approval", "start_delay_seconds": 30}
    chat = Conversation.start(client, content, settle=0, poll_interval=0.2)
    assert chat.following
    client.close()
    until(lambda: not chat.following, what="the follower to stop")
    until(lambda: chat.link_log and chat.link_log[-1][0] in ("stopped", "lost"), what="a word")
    chat.close()
