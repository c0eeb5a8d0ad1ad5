"""The gateway's reply to one answer, in the words both gateway cards say.

``gateway_verdict`` is the one place a reply of the Jupyter server's responder gateway
(what ``GatewayLink.answer`` returned or raised) becomes a card's outcome: the
``PromptCard`` in gateway mode and the inbox's ``GatewayCard`` both use it. The cards'
use of it against a real server is tested in ``tests/server/test_cards.py`` and
``tests/server/test_inbox_notebook.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hitl_nb.client import GatewayAnswer
from hitl_nb.errors import (
    AgentTimeout,
    AgentUnreachable,
    GatewayRefused,
    HitlError,
    PromptConflict,
    ProtocolViolation,
    ResponseInvalid,
)
from hitl_nb.notebook._gateway_answer import Tally, gateway_verdict

NOTHING_SENT = "nothing was sent to the agent"


def _reply(status: str, **body: Any) -> GatewayAnswer:
    return GatewayAnswer(status, str(body.get("message", "")), {"status": status, **body})


@pytest.mark.parametrize(
    ("reply", "status", "open_again", "words"),
    [
        (_reply("forwarded"), "accepted", False, "the agent accepted the answer"),
        (_reply("forwarded", responders=["alice", "bob"]), "accepted", False,
         "the agent accepted the answer (agreed by alice, bob)"),
        (_reply("forwarding"), "accepted", False, "the agent has not confirmed it yet"),
        (_reply("collecting", agreeing=1, needed=2, answers=2, disagreement=True), "held", True,
         "counted this answer from alice; it goes to the agent once 2 people"),
        (ResponseInvalid("no", validation_errors=[{"path": "/ok"}]), "invalid", True, "no"),
        (PromptConflict("answered already"), "conflict", False, "yours was not sent"),
        (GatewayRefused(403, "the prompt is for bob"), "refused", True,
         f"the Jupyter server refused: the prompt is for bob; {NOTHING_SENT}"),
        (GatewayRefused(410, "the deadline passed"), "expired", False, "the deadline passed"),
        (GatewayRefused(502, "the agent refused"), "failed", True,
         "the Jupyter server's gateway answered 502: the agent refused"),
        (AgentTimeout("read timed out"), "failed", True, "did not answer in time"),
        (AgentUnreachable("connection refused"), "failed", True,
         f"could not be reached (connection refused); {NOTHING_SENT}"),
        # Asked, but its answer unreadable: whether it forwarded is unknown, never "not sent".
        (ProtocolViolation("not JSON"), "failed", True,
         "could not be read (not JSON); it forwards an answer at most once"),
    ],
)  # fmt: skip
def test_each_reply_of_the_gateway_in_words(
    reply: GatewayAnswer | HitlError, status: str, open_again: bool, words: str
) -> None:
    verdict = gateway_verdict(reply, "alice", 2)
    assert verdict.outcome.status == status, verdict
    assert verdict.open_again is open_again
    assert words in verdict.outcome.message
    if isinstance(reply, HitlError):
        assert verdict.outcome.error is reply
    if status == "invalid":
        assert verdict.outcome.validation_errors == [{"path": "/ok"}]


def test_a_held_answer_carries_the_count_and_an_accepted_one_its_note() -> None:
    held = gateway_verdict(_reply("collecting", agreeing=1, answers=3), "alice", 2)
    assert held.tally == Tally(agreeing=1, needed=2, answers=3, disagreement=False)
    agreed = gateway_verdict(_reply("forwarded", responders=["alice", "bob"]), "alice", 2)
    assert agreed.note == "agreed by alice, bob" and agreed.tally is None
    once = gateway_verdict(_reply("forwarding"), "alice", 1)
    assert once.note == "the Jupyter server makes sure it reaches the agent once"
    assert gateway_verdict(_reply("forwarded"), "alice", 1).note == ""


def _nested(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)


# A named function, not a lambda over several lines: hypothesis reads a lambda's source
# to see that it recurses, and warns (an error in this suite) when it cannot.
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8), _nested, max_leaves=8
)


@pytest.mark.property
@given(
    status=st.sampled_from(["forwarded", "forwarding", "collecting"]) | st.text(max_size=10),
    body=st.dictionaries(
        st.sampled_from(["agreeing", "needed", "answers", "disagreement", "responders", "x"]),
        _JSON, max_size=5,
    ),
)  # fmt: skip
def test_any_reply_the_gateway_took_is_accepted_or_held_never_more(
    status: str, body: dict[str, Any]
) -> None:
    verdict = gateway_verdict(GatewayAnswer(status, "", body), "alice", 2)
    assert verdict.outcome.message
    assert verdict.outcome.status == ("held" if status == "collecting" else "accepted")
    assert verdict.open_again is (status == "collecting")
    assert (verdict.tally is not None) is (status == "collecting")


@pytest.mark.property
@given(code=st.integers(400, 599), message=st.text(min_size=1, max_size=40))
def test_a_refusal_is_never_accepted_and_says_what_the_server_said(code: int, message: str) -> None:
    verdict = gateway_verdict(GatewayRefused(code, message), "alice", 1)
    assert verdict.outcome.status in ("refused", "expired", "failed")
    assert message in verdict.outcome.message
    assert verdict.open_again is (code != 410)
