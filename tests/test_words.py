"""Durations and a consensus' count in words (hitl_nb/_words.py), each wording as its
readers have been reading it: a card's clock, a message's deadline, a card's count and a
message's."""

from __future__ import annotations

import pytest

from hitl_nb._words import duration, needs_words, plural, tally_words
from hitl_nb.policy import Tally


@pytest.mark.parametrize(
    ("seconds", "exact", "rough"),
    [
        (-5, "0 s", "less than a minute"),
        (0, "0 s", "less than a minute"),
        (45.9, "45 s", "less than a minute"),
        (60, "1 min 0 s", "1 minute"),
        (252, "4 min 12 s", "4 minutes"),
        (89 * 60 + 29, "1 h 29 min", "89 minutes"),
        (90 * 60, "1 h 30 min", "about 2 hours"),
        (3 * 3600 + 5 * 60 + 59, "3 h 5 min", "about 3 hours"),
        (35 * 3600, "1 d 11 h", "about 35 hours"),
        (36 * 3600, "1 d 12 h", "about 2 days"),
        (2 * 86400 + 3600, "2 d 1 h", "about 2 days"),
    ],
)
def test_a_duration_as_a_clock_and_as_a_message_say_it(
    seconds: float, exact: str, rough: str
) -> None:
    assert duration(seconds) == exact
    assert duration(seconds, "rough") == rough


def test_a_consensus_count_as_a_card_and_as_a_message_say_it() -> None:
    assert tally_words(Tally(1, 1, 1, False)) == ""
    assert (
        tally_words(Tally(1, 2, 1, False)) == "1 answer collected, 1 of 2 agreeing; 1 more needed"
    )
    assert tally_words(Tally(2, 2, 2, False)) == "2 answers collected, 2 of 2 agreeing: enough"
    assert tally_words(Tally(1, 3, 2, True)).endswith(
        "The answers given so far differ: nothing goes to the agent until 3 people send "
        "the same answer"
    )
    assert needs_words(1, 0, still=True) == ""
    assert needs_words(2, 0, still=True) == "It needs 2 people to give the same answer."
    assert needs_words(3, 1, still=False) == (
        "It needs 3 people to give the same answer; 1 answer has come so far."
    )
    assert needs_words(3, 2, still=True) == (
        "It needs 3 people to give the same answer; 2 answers have come so far, 1 more needed."
    )
    assert plural(1, "prompt", "prompts") == "1 prompt"
    assert plural(0, "prompt", "prompts") == "0 prompts"
