"""The outbox's rows: recipients, stable keys, facts that survive the store."""

from __future__ import annotations

import json

import pytest

from hitl_nb.errors import NotifyRefused
from hitl_nb.notify import Note, PromptFacts, person, team
from hitl_nb.notify._notes import note_key, recipient_parts

FACTS = PromptFacts(
    "r1",
    "p1",
    "http://agent.example.org/",
    "Ship it?",
    registered_by="Alice",
    registrant="alice",
    deadline=1000.0,
    specific=("bob", "carol"),
    needed=2,
    answers=1,
)


def test_recipients():
    assert person("bob") == "user:bob" and team("*") == "team:*"
    assert recipient_parts("user:bob:x") == ("user", "bob:x")
    for bad in ("bob", "user:", "group:x", ""):
        with pytest.raises(NotifyRefused):
            recipient_parts(bad)


def test_keys_are_stable_and_tell_every_part_apart():
    key = note_key("opened", "r1", "p1", "user:bob")
    assert key == note_key("opened", "r1", "p1", "user:bob") and len(key) == 64
    others = {
        note_key("reminder", "r1", "p1", "user:bob"),
        note_key("opened", "r2", "p1", "user:bob"),
        note_key("opened", "r1", "p2", "user:bob"),
        note_key("opened", "r1", "p1", "user:bo"),
        note_key("opened", "r1/p1", "", "user:bob"),
    }
    assert key not in others and len(others) == 5


def test_facts_survive_json():
    again = PromptFacts.from_json(json.loads(json.dumps(FACTS.to_json())))
    assert again == FACTS
    outcome = PromptFacts("r", "p", "u", "q", outcome="refused", responders=("bob",), detail="no")
    assert PromptFacts.from_json(outcome.to_json()) == outcome


def test_facts_read_from_a_row_are_sane_whatever_it_holds():
    odd = PromptFacts.from_json(
        {"needed": "3", "answers": -1, "deadline": True, "specific": "bob", "outcome": "won"}
    )
    assert odd.needed == 1 and odd.answers == 0 and odd.deadline is None
    assert odd.specific == () and odd.outcome is None


def test_a_note_names_a_known_kind_and_a_recipient():
    with pytest.raises(NotifyRefused):
        Note("k", "user:bob", "shouted", FACTS, 0.0, 0.0)
    with pytest.raises(NotifyRefused):
        Note("k", "bob", "opened", FACTS, 0.0, 0.0)
    with pytest.raises(NotifyRefused):
        PromptFacts("r", "p", "u", "q", outcome="lost")
