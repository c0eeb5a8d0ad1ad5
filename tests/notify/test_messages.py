"""What a notification says, and how each channel shows it."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hitl_nb.notify import (
    AnswerLinks,
    Batch,
    PromptFacts,
    TeamChannels,
    escalation_notes,
    opened_notes,
    outcome_notes,
)
from hitl_nb.notify._messages import SUBJECT_LIMIT, Link, compose, when
from hitl_nb.notify._notes import Note, note_key
from tests.notify.test_text import HOSTILE, assert_dead, assert_plain

NOW = 1_767_225_600.0  # 2026-01-01 00:00 UTC
LINKS = AnswerLinks("https://hub.example.org/", hub=True)
TEAMS = TeamChannels({"*": None})  # type: ignore[dict-item]  # targets are not read here


def facts(**kw):
    base = {"reg_id": "r1", "prompt_id": "p1", "agent_url": "https://agent.example.org/a2a"}
    base.update(question="Deploy build 42 to production?", registered_by="Alice")
    base.update(registrant="alice", deadline=NOW + 1800)
    base.update(kw)
    return PromptFacts(**base)


def batch(*notes, total=None, counts=None, recipient=None):
    return Batch(
        recipient=recipient or notes[0].recipient,
        token="t",
        notes=tuple(notes),
        total=len(notes) if total is None else total,
        counts=counts or {},
    )


def opened_for(recipient_facts, who="user:bob"):
    (note,) = [
        n
        for n in opened_notes(recipient_facts, TEAMS, NOW)
        if n.kind == "opened" and n.recipient == who
    ]
    return note


def test_a_prompt_for_bob():
    note = opened_for(facts(specific=("bob",)))
    m = compose(batch(note), LINKS, NOW)
    link = "https://hub.example.org/hub/user-redirect/lab?hitl-registration=r1&hitl-prompt=p1"
    assert m.kind == "opened" and m.key == note.key and m.link == link
    assert m.subject_line() == "Question for you: Deploy build 42 to production?"
    assert m.plain() == (
        "Alice's agent at agent.\u200bexample.\u200borg asks you:\n\n"
        "    Deploy build 42 to production?\n\n"
        "Answer by 2026-01-01 00:30 UTC (in 30 minutes).\n\n"
        f"Answer it here: {link}\n"
    )
    assert f'<a href="{link.replace("&", "&amp;")}">' in m.html()
    assert m.chat().startswith(
        "Alice's agent at agent.\u200bexample.\u200borg asks you:\n\n> Deploy"
    )


def test_a_consensus_for_the_team_says_how_many_answers_it_still_needs():
    note = opened_for(facts(needed=3, answers=1), who="team:*")
    m = compose(batch(note), LINKS, NOW)
    assert m.subject_line().startswith("Question for the team: ")
    text = m.plain()
    assert "asks anyone on the team:" in text
    assert (
        "It needs 3 people to give the same answer; 1 answer has come so far, 2 more needed."
        in text
    )


def test_an_escalation_names_the_prompt_and_the_time_left_and_widens_nobody():
    f = facts(specific=("bob",))
    (note,) = escalation_notes(f, ["team:ops.example.org"], NOW)
    m = compose(batch(note), LINKS, NOW + 1200)
    assert m.subject_line() == "Escalated: Deploy build 42 to production?"
    text = m.plain()
    assert text.startswith("A question from Alice's agent at agent.")
    assert "has no answer yet:" in text and "Deploy build 42 to production?" in text
    assert "It closes 2026-01-01 00:30 UTC (in 10 minutes)." in text
    assert "who may answer it is unchanged" in text
    # at the deadline itself (an escalation with no lead), read after it
    late = compose(batch(note), LINKS, NOW + 1800).plain()
    assert "It closed 2026-01-01 00:30 UTC (passed)." in late and "It closes" not in late


def test_a_reminder_and_each_outcome():
    (reminder,) = [
        n for n in opened_notes(facts(specific=("bob",)), TEAMS, NOW) if n.kind == "reminder"
    ]
    m = compose(batch(reminder), LINKS, reminder.due)
    assert m.subject_line() == "Reminder: Deploy build 42 to production?"
    assert m.plain().startswith("A question from Alice's agent at agent.")
    assert "still waits for you:" in m.plain() and "(in 10 minutes)" in m.plain()

    said = {}
    for outcome in ("forwarded", "refused", "expired"):
        f = facts(outcome=outcome, responders=("bob", "carol"), detail="out of <!channel> budget")
        (note,) = outcome_notes(f, NOW)
        said[outcome] = compose(batch(note), LINKS, NOW)
    assert said["forwarded"].subject_line().startswith("Answered: ")
    assert "answered by bob, carol, and the agent accepted the answer" in said["forwarded"].plain()
    assert said["refused"].subject_line().startswith("The agent refused the answer: ")
    assert "It said: out of <!channel> budget" in said["refused"].plain()
    assert "&lt;!channel&gt;" in said["refused"].chat()
    assert (
        said["expired"]
        .plain()
        .startswith(
            "Nobody answered your agent's question before its deadline, 2026-01-01 00:30 UTC"
        )
    )


def test_a_digest_counts_each_kind_and_lists_the_first():
    notes = [opened_for(facts(prompt_id=f"p{i}", specific=("bob",))) for i in range(3)]
    (outcome,) = outcome_notes(facts(prompt_id="q", outcome="expired", registrant="bob"), NOW)
    m = compose(batch(*notes, outcome, total=12, counts={"opened": 11, "outcome": 1}), LINKS, NOW)
    assert m.kind == "digest" and m.total == 12
    assert m.subject_line() == ("11 new questions, 1 outcome of your agents' questions for you")
    text = m.plain()
    assert text.count("- New: Deploy build 42") == 3 and "- Expired: " in text
    assert "... and 8 more." in text
    assert text.rstrip().endswith(
        "See them all here: https://hub.example.org/hub/user-redirect/lab?hitl-inbox=1"
    )
    doc = json.loads(m.to_json_bytes())
    assert doc["kind"] == "digest" and doc["total"] == 12 and len(doc["items"]) == 4
    assert doc["recipient"] == {"type": "person", "name": "bob"}
    assert doc["items"][0]["link"].endswith("hitl-prompt=p0")


def test_a_digests_key_is_the_same_for_the_same_notes_and_differs_for_more():
    notes = [opened_for(facts(prompt_id=f"p{i}", specific=("bob",))) for i in range(3)]
    one = compose(batch(*notes), LINKS, NOW).key
    assert compose(batch(*reversed(notes)), LINKS, NOW + 60).key == one
    assert compose(batch(*notes, total=4), LINKS, NOW).key != one
    assert compose(batch(*notes[:2]), LINKS, NOW).key != one


def test_a_digest_without_counts_counts_what_it_lists():
    notes = [opened_for(facts(prompt_id=f"p{i}", specific=("bob",))) for i in range(2)]
    assert compose(batch(*notes), LINKS, NOW).subject_line() == "2 new questions for you"


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (30, "in less than a minute"),
        (60, "in 1 minute"),
        (5340, "in 89 minutes"),
        (7200, "in about 2 hours"),
        (3 * 86400, "in about 3 days"),
    ],
)
def test_deadlines_in_words(seconds, words):
    assert when(NOW + seconds, NOW).endswith(f"({words})")
    assert when(NOW - 1, NOW).endswith("(passed)")
    assert when(1e20, NOW) == "at a time too far away to show"


TAGS = {"!DOCTYPE", "html", "/html", "body", "/body", "p", "/p", "blockquote", "/blockquote"}
TAGS |= {"a", "/a"}
hostile = st.lists(st.sampled_from(HOSTILE) | st.text(max_size=30), max_size=20).map("".join)


@pytest.mark.property
@given(question=hostile, name=hostile, detail=hostile, prompt_id=st.text(max_size=40))
@settings(max_examples=150, deadline=None)
def test_the_agents_words_never_escape_in_any_rendering(question, name, detail, prompt_id):
    f = facts(
        question=question,
        registered_by=name,
        prompt_id=prompt_id,
        responders=(name,),
        specific=("bob",),
        outcome="refused",
        detail=detail,
    )
    notes = [opened_for(f), *outcome_notes(f, NOW)]
    for b in [batch(n) for n in notes] + [batch(*notes, recipient="user:bob")]:
        m = compose(b, LINKS, NOW)
        subject = m.subject_line()
        assert len(subject) <= SUBJECT_LIMIT and "\n" not in subject and "\r" not in subject
        assert_plain(subject, newlines=False)
        links = {item.link for item in m.items} | {m.link}
        chat = re.sub(r"(?m)^> ", "", m.chat())  # our block quote
        for link in sorted(links, key=len, reverse=True):
            chat = chat.replace(link, "")
        assert_dead(chat)
        assert_plain(chat, newlines=True)
        html = m.html()
        assert set(re.findall(r"<\s*([!/]?[\w-]*)", html)) <= TAGS, html
        hrefs = re.findall(r'<a href="([^"]*)">', html)
        assert {h.replace("&amp;", "&") for h in hrefs} <= links
        assert len(hrefs) == sum(isinstance(x, Link) for p in m.paragraphs for x in p)
        assert json.loads(m.to_json_bytes())["id"] == m.key


def test_a_message_needs_a_note():
    with pytest.raises(ValueError):
        compose(Batch("user:bob", "t", (), 0), LINKS, NOW)


def test_json_items_carry_the_question_as_plain_text():
    note = Note(
        key=note_key("opened", "r", "p", "team:*"),
        recipient="team:*",
        kind="opened",
        facts=facts(question="Line one\r\nLine\x00 two"),
        created=NOW,
        due=NOW,
    )
    doc = compose(batch(note), LINKS, NOW).to_json()
    assert doc["items"][0]["question"] == "Line one\nLine two"
    assert doc["items"][0]["deadline"] == "2026-01-01T00:30:00Z"
    assert doc["recipient"] == {"type": "team", "name": "*"}
