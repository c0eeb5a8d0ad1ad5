"""A card as text: the short, true summary a notebook shows before it runs (and nbval
compares): the question, who may answer, the deadline, the form in one line, the last
outcome; never a list of empty fields, never a problem the browser does not show."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook import Conversation, Outcome
from tests.helpers.until import until


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


#: What a card adds when the agent was slow to resume depends on the machine's load,
#: so the lines compared here leave it out.
_SLOW = re.compile(r"; it took \d+\.\d s to resume \(the extension asks for at most 1 s\)")


def _lines(chat: Conversation) -> list[str]:
    card = chat.cards[-1]
    text = card.to_text()
    assert card._repr_mimebundle_()["text/plain"] == text
    return _SLOW.sub("", text).splitlines()


def test_a_pristine_card_is_its_question_who_may_answer_and_what_is_left(
    agent: MockAgent,
) -> None:
    with Conversation.start(agent.url, {"scenario": "approval"}) as chat:
        assert _lines(chat) == [
            "? Approve the deployment of build 41 to staging?",
            "  who may answer: anyone",
            "  form: waiting for an answer (1 required field to fill in)",
        ]  # no field listed, nothing "to fix" before anything was done


def test_an_accepted_card_shows_the_answer_and_the_outcome(agent: MockAgent) -> None:
    with Conversation.start(agent.url, {"scenario": "approval"}) as chat:
        chat.answer({"approve": True, "comment": "ok"})
        assert _lines(chat) == [
            "? Approve the deployment of build 41 to staging?",
            "  who may answer: anyone",
            '  answer: {"approve": true, "comment": "ok"}',
            "  accepted: the agent accepted the answer; the task is now COMPLETED",
        ]
        assert chat.to_text().splitlines()[-2:] == [
            "the task is COMPLETED",
            "the agent says: Approved. Comment: ok",
        ]


def test_a_refused_card_stays_open_and_names_who_may_answer(agent: MockAgent) -> None:
    content = {"scenario": "specific", "responder": "rm@example.com"}
    with Conversation.start(agent.url, content) as chat:
        chat.answer({"approve": True}, responder="intern@example.com")
        assert _lines(chat)[1:] == [
            "  who may answer: rm@example.com",
            "  form: ready to submit",
            "  refused: 'intern@example.com' may not answer: the prompt is for rm@example.com",
        ]


def test_a_consensus_card_gives_its_count(agent: MockAgent) -> None:
    content = {"scenario": "consensus", "n": 2}
    with Conversation.start(agent.url, content, responder="alice") as chat:
        chat.answer({"approve": True})
        assert _lines(chat)[1:] == [
            "  who may answer: 2 people who agree",
            "  answering as: alice; 1 answer collected, 1 of 2 agreeing; 1 more needed",
            "  form: ready to submit",
            "  held: 1 of 2 agree so far; waiting for more responders",
        ]


def test_problems_are_listed_once_by_label(agent: MockAgent) -> None:
    with Conversation.start(agent.url, {"scenario": "approval"}) as chat:
        card = chat.current
        assert card is not None
        card.form.set_errors(
            [{"path": "/extra", "keyword": "additionalProperties", "message": "not permitted"}]
        )
        assert _lines(chat)[2:] == [
            "  form: 2 problems to fix",
            "    Extra: not permitted",
            "    Approve: Choose Yes or No",
        ]
        outcome = card.answer({"approve": "maybe"}, validate=False)  # the agent's 422
        assert outcome.status == "invalid"
        lines = _lines(chat)
        assert lines[-2:] == [
            "  invalid: the agent refused the answer (1 problem)",
            "    Approve: expected boolean, got string",
        ]
        assert sum(line.startswith("    Approve:") for line in lines) == 1  # the outcome's


EXPIRING = {"scenario": "deadline", "deadline_seconds": 0.5, "on_deadline": "fail"}


def _until_closed(chat: Conversation) -> Outcome:
    """Read the task (every 0.2 s) until its deadline has closed the last card."""
    card = chat.cards[-1]

    def looked() -> Outcome | None:
        if card.outcome is None:
            chat.refresh()
        return card.outcome

    return until(looked, timeout=30, what="the deadline to close the card", interval=0.2)


def test_a_card_closed_by_its_deadline_says_so_without_a_form_line(agent: MockAgent) -> None:
    with Conversation.start(agent.url, EXPIRING) as chat:
        assert _lines(chat)[2].startswith("  deadline: ")
        _until_closed(chat)
        lines = _lines(chat)
        assert lines[-1] == "  expired: the deadline passed and the task failed"
        assert not any(line.startswith("  form:") for line in lines)


def test_a_card_costs_few_widget_models(agent: MockAgent) -> None:
    # Each model is a message the kernel sends and a view the front end builds before
    # the card shows: the lines of a card and of a conversation have no Layout or Style
    # models, and a prompt anyone may answer draws no "Answering as" field.
    from ipywidgets.widgets.widget import _instances

    Conversation.start(agent.url, {"scenario": "approval"}).close()  # the shared ones
    before = set(_instances)
    with Conversation.start(agent.url, {"scenario": "approval"}) as chat:
        chat._repr_mimebundle_()
        made = [_instances[k] for k in set(_instances) - before]
        assert len(made) <= 26, sorted(type(w).__name__ for w in made)
        assert chat.cards[0].who.widget is None


def test_an_answer_that_meets_a_closing_card_waits_for_its_outcome(agent: MockAgent) -> None:
    """The task closes a card (its state first, the outcome just after, from another
    thread): an answer looking in between waits for that outcome instead of failing on
    a card with none recorded (seen under load in a Run All test)."""
    import threading

    with Conversation.start(agent.url, {"scenario": "approval"}) as chat:
        card = chat.cards[-1]
        with card._lock:
            card.state = "done"  # as closed_by() leaves it, before _finish() records
        closing = Outcome("closed", "the task was canceled before this prompt was answered")
        threading.Timer(0.3, card._finish, (closing,)).start()
        assert card._await_outcome(timeout=10) is closing


# -- a card that is done puts its inputs away ------------------------------------------


def _on_card(card: object, widget: object) -> bool:
    return widget in card.widget.children  # type: ignore[attr-defined]


def _closed(agent: MockAgent, typed: dict[str, object] | None) -> Conversation:
    chat = Conversation.start(agent.url, EXPIRING)
    if typed is not None:
        chat.cards[-1].form.value = typed
    assert _until_closed(chat).status == "expired"
    return chat


def test_a_card_closed_before_anyone_answered_drops_its_empty_form(agent: MockAgent) -> None:
    with _closed(agent, None) as chat:
        card = chat.cards[-1]
        assert not _on_card(card, card.form)  # nothing to read in an empty, dead form
        assert _on_card(card, card.header) and _on_card(card, card.status)
        assert "expired" in card.status.value


def test_a_card_closed_with_a_typed_answer_keeps_it_without_a_submit(agent: MockAgent) -> None:
    with _closed(agent, {"comment": "half-written"}) as chat:
        card = chat.cards[-1]
        assert card.form.touched and _on_card(card, card.form)
        assert card.form.disabled  # what was typed stays readable, read-only
        assert card.form.submit_button.layout.display == "none"


def test_an_accepted_card_keeps_the_answer_and_loses_its_submit(agent: MockAgent) -> None:
    with Conversation.start(agent.url, {"scenario": "approval"}) as chat:
        card = chat.cards[-1]
        assert not card.form.touched and card.form.submit_button.layout.display != "none"
        chat.answer({"approve": True})
        until(lambda: card.state == "done", timeout=30, what="the agent to move on")
        assert _on_card(card, card.form)
        assert card.form.submit_button.layout.display == "none"


def test_a_text_question_closed_without_an_answer_drops_its_text_box(agent: MockAgent) -> None:
    from hitl_nb.a2a import Message, Part, Role, Task, TaskState, TaskStatus
    from hitl_nb.notebook._card import QuestionCard
    from hitl_nb.notebook._link import Link

    asking = Message("m1", Role.AGENT, [Part(text="Ship it?")])
    task = Task("t1", "c1", TaskStatus(TaskState.INPUT_REQUIRED, asking))
    link = Link(agent.url)
    try:
        empty, typed = QuestionCard(link, task), QuestionCard(link, task)
        typed.text.value = "not yet"
        canceled = Task("t1", "c1", TaskStatus(TaskState.CANCELED))
        for card in (empty, typed):
            card.closed_by(canceled)
            assert card.state == "done" and card.send_button.layout.display == "none"
        assert not _on_card(empty, empty.text) and not _on_card(empty, empty.send_button)
        assert _on_card(typed, typed.text) and typed.text.disabled
    finally:
        link.close()
