import pytest
from hypothesis import given
from hypothesis import strategies as st

from hitl_nb.policy import ResponderGate, Tally, current_responder, tally
from hitl_nb.spec import parse_responders


def gate(*entries):
    return ResponderGate(parse_responders(list(entries) if entries else None))


def test_absent_means_any():
    decision = gate().submit(None, {"ok": True})
    assert decision.action == "forward" and decision.payload == {"ok": True}


def test_specific_admits_only_the_named():
    g = gate("specific:alice", "specific:bob")
    assert g.submit("mallory", {}).action == "refuse"
    assert "alice, bob" in g.submit("mallory", {}).reason
    assert g.submit(None, {}).action == "refuse"
    assert g.submit("bob", {"x": 1}).action == "forward"
    assert g.submit("alice", {"x": 1}).action == "refuse"  # already forwarded


def test_consensus_holds_until_n_distinct_responders_agree():
    g = gate("consensus:2")
    first = g.submit("alice", {"approved": True})
    assert (first.action, first.tally.agreeing, first.tally.needed) == ("hold", 1, 2)
    assert g.submit("alice", {"approved": True}).action == "hold"  # same person twice
    assert g.submit("bob", {"approved": False}).action == "hold"  # disagreement
    changed = g.submit("bob", {"approved": True})  # bob changes his mind
    assert changed.action == "forward" and changed.payload == {"approved": True}
    assert changed.tally.agreeing == 2


def test_consensus_needs_names():
    assert gate("consensus:3").submit(None, {}).action == "refuse"


def test_consensus_among_specific_responders():
    g = gate("specific:a", "specific:b", "consensus:2")
    assert g.submit("c", {}).action == "refuse"
    assert g.submit("a", {"k": 1}).action == "hold"
    assert g.submit("b", {"k": 1}).action == "forward"


def test_unknown_patterns_are_ignored():
    g = gate("role:admin", "specific:alice")
    assert g.submit("bob", {}).action == "refuse"
    assert gate("role:admin").submit("anyone", {}).action == "forward"


def test_current_responder(monkeypatch):
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)
    assert current_responder() is None
    monkeypatch.setenv("JUPYTERHUB_USER", "hub-user")
    assert current_responder() == "hub-user"
    assert current_responder("explicit") == "explicit"


@pytest.mark.property
@given(st.integers(1, 6), st.lists(st.sampled_from("abcdef"), min_size=1, max_size=20))
def test_consensus_forwards_exactly_once_when_n_agree(n, voters):
    g = gate(f"consensus:{n}")
    actions = [g.submit(v, {"same": True}).action for v in voters]
    distinct_at_forward = (
        len(set(voters[: actions.index("forward") + 1])) if "forward" in actions else None
    )
    assert actions.count("forward") <= 1
    if len(set(voters)) >= n:
        assert distinct_at_forward == n
    else:
        assert "forward" not in actions


@pytest.mark.parametrize("entries", [("any",), ("consensus:1",), ()])
def test_single_answer_rules_forward_at_once(entries):
    assert gate(*entries).submit("x", {}).action == "forward"


def test_a_tally_counts_the_largest_group_or_one_answers():
    answers = ['{"a":1}', '{"a":2}', '{"a":1}']
    assert tally(answers, 3) == Tally(agreeing=2, needed=3, answers=3, disagreement=True)
    assert tally(answers, 2, of='{"a":2}') == (1, 2, 3, True)
    assert tally(answers, 2, of='{"a":1}').reached
    assert tally([], 2) == (0, 2, 0, False) and not tally([], 2).reached
    assert tally(["x", "x"], 2) == (2, 2, 2, False)


def test_the_gate_counts_its_ballots_with_the_one_tally():
    g = gate("consensus:3")
    g.submit("alice", {"v": 1})
    g.submit("bob", {"v": 2})
    held = g.submit("carol", {"v": 1})
    assert held.action == "hold" and held.tally == (2, 3, 3, True)
    assert g.tally() == (2, 3, 3, True)
    assert g.tally(of={"v": 2}) == (1, 3, 3, True)
    assert gate("any").submit("x", {}).tally is None  # one answer settles it


@pytest.mark.property
@given(st.lists(st.sampled_from(["a", "b", "c"]), max_size=12), st.integers(1, 5))
def test_a_tallys_largest_group_is_at_least_any_answers(answers, needed):
    largest = tally(answers, needed)
    assert largest.answers == len(answers)
    assert largest.disagreement == (len(set(answers)) > 1)
    for answer in set(answers):
        assert tally(answers, needed, of=answer).agreeing <= largest.agreeing
