"""The limits as pure decisions: time passed in, rows given."""

from __future__ import annotations

import pytest

from hitl_nb.errors import NotifyRefused
from hitl_nb.notify import Batch, Limits, Note, PromptFacts, stale_reason
from hitl_nb.notify._plan import Ceiling, decide, next_allowed, retry_at, stale_before

LIMITS = Limits()
FACTS = PromptFacts("r", "p", "http://agent.example/", "q")


def note(**kw):
    base = dict(key="k", recipient="user:bob", kind="opened", facts=FACTS, created=0.0, due=0.0)
    base.update(kw)
    return Note(**base)


def test_one_message_per_recipient_per_minute():
    assert next_allowed(100.0, LIMITS) == 160.0
    fresh = Batch("user:bob", "t", (note(),), 1, last_sent=None)
    assert decide(fresh, 100.0, LIMITS).action == "send"
    recent = Batch("user:bob", "t", (note(),), 1, last_sent=90.0)
    assert (decide(recent, 100.0, LIMITS).action, decide(recent, 100.0, LIMITS).until) == (
        "defer",
        150.0,
    )
    assert decide(recent, 150.0, LIMITS).action == "send"


def test_retries_back_off_to_a_ceiling_with_a_little_jitter():
    waits = [retry_at(0.0, n, LIMITS, 0.0) for n in range(1, 10)]
    assert waits == [5, 10, 20, 40, 80, 160, 300, 300, 300]
    assert retry_at(0.0, 1, LIMITS, 0.999) == pytest.approx(5 * 1.1998)
    assert retry_at(0.0, 10_000, LIMITS, 0.5) == pytest.approx(330.0)


def test_the_give_up_bound_and_its_words():
    assert stale_before(10_000.0, LIMITS) == 10_000.0 - 3600
    assert stale_reason(note(expires=5.0), 10.0) == "not sent: its prompt's deadline passed first"
    assert stale_reason(note(), 10.0) == "not sent in time"
    tried = note(attempts=3, last_error="the SMTP server could not be reached")
    assert stale_reason(tried, 10.0) == (
        "not sent in time after 3 attempts (last: the SMTP server could not be reached)"
    )


def test_the_ceiling_counts_a_sliding_minute():
    ceiling = Ceiling(3)
    for t in (0.0, 1.0, 2.0):
        assert ceiling.room(t) > 0
        ceiling.count(t)
    assert ceiling.room(30.0) == 0 and ceiling.free_at(30.0) == 60.0
    assert ceiling.room(60.0) == 1 and ceiling.free_at(60.0) == 60.0
    assert ceiling.room(62.0) == 3


@pytest.mark.parametrize(
    "kw",
    [
        {"every": -1.0},
        {"listed": 0},
        {"per_minute": 0},
        {"first_retry": 0.0},
        {"first_retry": 10.0, "max_retry": 5.0},
        {"give_up_after": 0.5},
        {"listed": True},
    ],
)
def test_limits_out_of_range_are_refused(kw):
    with pytest.raises(NotifyRefused):
        Limits(**kw)
