"""Who is told what: the notes a prompt and its end put in the outbox."""

from __future__ import annotations

import pytest

from hitl_nb.errors import NotifyRefused
from hitl_nb.notify import PromptFacts, TeamChannels, opened_notes, outcome_notes
from hitl_nb.notify._slack import SlackTarget

NOW = 1_000_000.0
OPS = SlackTarget("https://hooks.example.org/ops", admin=True)
ALL = SlackTarget("https://hooks.example.org/all", admin=True)
TEAMS = TeamChannels({"agent.example.org": OPS, "*": ALL})


def facts(**kw):
    base = {"reg_id": "r", "prompt_id": "p", "agent_url": "https://agent.example.org:8443/a2a"}
    base.update(question="Ship it?", registered_by="Alice", registrant="alice")
    base.update(kw)
    return PromptFacts(**base)


def test_each_named_person_is_told_now_and_reminded_before_the_deadline():
    notes = opened_notes(facts(specific=("bob", "carol", "bob"), deadline=NOW + 3600), TEAMS, NOW)
    assert [(n.recipient, n.kind) for n in notes] == [
        ("user:bob", "opened"),
        ("user:bob", "reminder"),
        ("user:carol", "opened"),
        ("user:carol", "reminder"),
    ]
    opened, reminder = notes[:2]
    assert opened.due == NOW and opened.expires == NOW + 3600
    assert reminder.due == NOW + 3600 - 600 and reminder.expires == NOW + 3600
    assert len({n.key for n in notes}) == 4


def test_no_reminder_when_the_prompt_is_shorter_than_the_lead_or_has_no_deadline():
    short = opened_notes(facts(specific=("bob",), deadline=NOW + 300), TEAMS, NOW)
    assert [n.kind for n in short] == ["opened"]
    assert [n.kind for n in opened_notes(facts(specific=("bob",)), TEAMS, NOW)] == ["opened"]
    off = opened_notes(
        facts(specific=("bob",), deadline=NOW + 9999), TEAMS, NOW, remind_before=None
    )
    assert [n.kind for n in off] == ["opened"]
    assert opened_notes(facts(specific=("bob",), deadline=NOW - 1), TEAMS, NOW) == []


def test_a_prompt_for_anyone_goes_to_its_hosts_team_channel_else_the_default():
    mine = opened_notes(facts(needed=3, deadline=NOW + 3600), TEAMS, NOW)
    assert {n.recipient for n in mine} == {"team:agent.example.org"}
    other = opened_notes(facts(agent_url="http://other.example/"), TEAMS, NOW)
    assert [n.recipient for n in other] == ["team:*"]
    assert opened_notes(facts(), TeamChannels({"agent.example.org": OPS}), NOW) != []
    assert opened_notes(facts(agent_url="http://x.example/"), TeamChannels(), NOW) == []
    assert TEAMS.target("agent.example.org") is OPS and TEAMS.target("gone") is None


def test_a_prompt_naming_a_crowd_goes_to_the_team_channel_instead():
    crowd = tuple(f"user{i}" for i in range(21))
    notes = opened_notes(facts(specific=crowd), TEAMS, NOW)
    assert [n.recipient for n in notes] == ["team:agent.example.org"]
    assert len(opened_notes(facts(specific=crowd[:20]), TEAMS, NOW)) == 20


def test_the_registrant_learns_the_outcome_unless_they_answered_alone():
    told = outcome_notes(facts(outcome="forwarded", responders=("bob",)), NOW)
    assert [(n.recipient, n.kind, n.expires) for n in told] == [("user:alice", "outcome", None)]
    assert outcome_notes(facts(outcome="forwarded", responders=("alice",)), NOW) == []
    assert len(outcome_notes(facts(outcome="refused", responders=("alice",)), NOW)) == 1
    assert len(outcome_notes(facts(outcome="expired"), NOW)) == 1
    assert outcome_notes(facts(outcome="expired", registrant=None), NOW) == []
    assert outcome_notes(facts(), NOW) == []


def test_a_refusal_and_the_acceptance_after_it_are_two_notes():
    (refused,) = outcome_notes(facts(outcome="refused", responders=("bob",)), NOW)
    (accepted,) = outcome_notes(facts(outcome="forwarded", responders=("carol",)), NOW + 60)
    assert refused.key != accepted.key


@pytest.mark.parametrize("host", ["", "a/b", "x@y", "a b", "h:80"])
def test_team_channels_are_named_by_host(host):
    with pytest.raises(NotifyRefused):
        TeamChannels({host: OPS})
