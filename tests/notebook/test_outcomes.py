"""Outcomes and their words: the helpers for assertions, answers sent on purpose past the
local check, the 409 told apart, and the responder gateway's reply in the words both
gateway cards say.

``gateway_verdict`` is the one place a reply of the Jupyter server's responder gateway
(what ``GatewayLink.answer`` returned or raised) becomes a card's outcome: the
``PromptCard`` in gateway mode and the inbox's ``GatewayCard`` both use it (through a
gateway sender). The cards' use of it against a real server is tested in
``tests/server/test_cards.py`` and ``tests/server/test_inbox_notebook.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import closing
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hitl_nb.a2a import Artifact, Message, Part, Role, Task, TaskState, TaskStatus
from hitl_nb.client import GatewayAnswer, SyncHitlClient, prompt_of
from hitl_nb.errors import (
    AgentTimeout,
    AgentUnreachable,
    AnswerNotAccepted,
    GatewayRefused,
    HitlError,
    InvalidParams,
    PromptConflict,
    ProtocolViolation,
    ResponseInvalid,
)
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook import Conversation, Outcome, _outcomes
from hitl_nb.notebook._outcomes import (
    HUB,
    consensus_closed,
    gateway_refusal,
    gateway_silent,
    gateway_verdict,
    refused_by_agent,
    sending_html,
    tally_words,
)
from hitl_nb.policy import Tally
from hitl_nb.spec import PromptEnvelope
from tests.helpers.sdk_agent import SdkAgent


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


def _task(state: TaskState, text: str | None, artifacts: list[Artifact]) -> Task:
    parts = [Part(text=text)] if text is not None else [Part(data={"x": 1})]
    message = Message("m1", Role.AGENT, parts, task_id="t1", context_id="c1")
    return Task("t1", "c1", TaskStatus(state, message), artifacts=artifacts)


def test_helpers_read_the_task() -> None:
    artifacts = [
        Artifact("a1", [Part(data={"ok": True}), Part(text="note")]),
        Artifact("a2", [Part(url="https://example.org/f.pdf"), Part(data=None, has_data=True)]),
    ]
    outcome = Outcome("accepted", "fine", _task(TaskState.COMPLETED, "Shipped.", artifacts))
    assert outcome.raise_for_status() is outcome
    assert outcome.accepted and outcome.state is TaskState.COMPLETED
    assert outcome.final_text == "Shipped."
    assert [a.artifact_id for a in outcome.artifacts] == ["a1", "a2"]
    assert outcome.artifact_data == [{"ok": True}, "note", None]
    bare = Outcome("held", "waiting")
    assert bare.raise_for_status() is bare and not bare.accepted
    assert bare.state is None and bare.final_text is None and bare.artifact_data == []
    no_text = Outcome("accepted", "ok", _task(TaskState.COMPLETED, None, []))
    assert no_text.final_text is None


@pytest.mark.parametrize("status", ["invalid", "conflict", "refused", "failed"])
def test_raise_for_status_for_every_refusal(status: str) -> None:
    cause = PromptConflict("hitl_already_answered_or_unknown") if status == "conflict" else None
    issues = [{"path": "/approve", "keyword": "type", "message": "not a boolean"}]
    outcome = Outcome(status, "no", validation_errors=issues, error=cause)  # type: ignore[arg-type]
    with pytest.raises(AnswerNotAccepted) as caught:
        outcome.raise_for_status()
    assert caught.value.outcome is outcome
    assert caught.value.validation_errors == issues
    assert f"{status}: no" in str(caught.value) and "/approve: not a boolean" in str(caught.value)
    assert caught.value.__cause__ is cause


def test_accepted_answer_brings_final_text_and_artifacts(agent: MockAgent) -> None:
    with closing(Conversation.start(agent.url, {"scenario": "echo"})) as chat:
        outcome = chat.answer({"message": "hello"}).raise_for_status()
    assert outcome.state is TaskState.COMPLETED
    assert outcome.final_text == "Echoing the accepted payload."
    assert outcome.artifact_data == [{"message": "hello"}]


def test_validate_false_reaches_the_agents_422(agent: MockAgent) -> None:
    with closing(Conversation.start(agent.url, {"scenario": "approval"})) as chat:
        local = chat.answer({})
        assert local.status == "invalid" and "nothing was sent" in local.message
        # A value the form cannot even hold goes past it too.
        assert "cannot hold" in chat.answer({"approve": "yes"}).message
        assert local.error is None  # refused here: no agent error behind it
        sent = chat.answer({"approve": "yes"}, validate=False)
        assert sent.status == "invalid" and "the agent refused" in sent.message
        assert isinstance(sent.error, ResponseInvalid)
        assert any(e.get("path") == "/approve" for e in sent.validation_errors)
        # what a person reads names the field by its label, not by its JSON Pointer: on
        # the card, the form's summary (the status line does not list it a third time)
        status = chat.current.status.value
        assert "(1 problem)" in status and "/approve" not in status
        assert str(sent).splitlines()[1:] == ["  Approve: expected boolean, got string"]
        form = chat.current.form
        form.value = {"approve": True}  # the form holds a valid answer; the agent refuses
        chat.answer({"approve": "yes"}, validate=False)
        assert "Approve: Expected boolean, got string" in form.summary_text().splitlines()
        with pytest.raises(AnswerNotAccepted) as caught:
            sent.raise_for_status()
        assert isinstance(caught.value.__cause__, ResponseInvalid)
        # The task is still waiting: a valid answer goes through afterwards.
        assert chat.answer({"approve": True}).raise_for_status().state is TaskState.COMPLETED


def test_client_validate_false_sends_what_the_local_check_refuses(agent: MockAgent) -> None:
    with SyncHitlClient(agent.url) as client:
        task = client.send({"scenario": "approval"})
        prompt = prompt_of(task)
        assert prompt is not None and prompt.prompt_id is not None
        with pytest.raises(ResponseInvalid, match="checked locally"):
            client.respond(task.id, prompt.prompt_id, {"approve": 1})
        with pytest.raises(ResponseInvalid) as caught:
            client.respond(task.id, prompt.prompt_id, {"approve": 1}, validate=False)
        assert "checked locally" not in str(caught.value)
        assert [e["path"] for e in caught.value.validation_errors] == ["/approve"]
        # Not even an object: the envelope check is skipped too, and the agent refuses it.
        with pytest.raises(ResponseInvalid, match="checked locally"):
            client.respond(task.id, prompt.prompt_id, ["x"])  # type: ignore[arg-type]
        with pytest.raises(InvalidParams):
            client.respond(task.id, prompt.prompt_id, ["x"], validate=False)  # type: ignore[arg-type]
        assert client.get_task(task.id).status.state is TaskState.INPUT_REQUIRED


def test_validate_false_against_an_sdk_agent() -> None:
    with SdkAgent() as sdk, SyncHitlClient(sdk.url) as client:
        task = client.send("hello")
        prompt = prompt_of(task)
        assert prompt is not None and prompt.prompt_id is not None
        with pytest.raises(ResponseInvalid) as caught:
            client.respond(task.id, prompt.prompt_id, {"approved": "yes"}, validate=False)
        assert "checked locally" not in str(caught.value)
        assert any(e.get("path") == "/approved" for e in caught.value.validation_errors)


def test_an_agents_422_is_said_in_words_with_the_fields_by_label() -> None:
    issues = [
        {"path": "/approve", "keyword": "type", "message": "expected boolean"},
        {"path": "/comment", "keyword": "maxLength", "message": "too long"},
    ]
    plain = refused_by_agent(ResponseInvalid(validation_errors=issues))
    assert plain.status == "invalid"
    assert plain.message == "the agent refused the answer (2 problems)"
    assert "hitl_response_invalid" not in str(plain) and "422" not in str(plain)
    labelled = dataclasses.replace(plain, where={"/approve": "Approve"}.get)
    assert str(labelled).splitlines()[1] == "  Approve: expected boolean"
    own = refused_by_agent(ResponseInvalid("replicas must be odd", validation_errors=[]))
    assert own.message == (
        "the agent refused the answer (it did not say why); it says: replicas must be odd"
    )


# --- the responder gateway's reply ---------------------------------------------------

NOTHING_SENT = "nothing was sent to the agent"


def _reply(status: str, **body: Any) -> GatewayAnswer:
    return GatewayAnswer(status, str(body.get("message", "")), {"status": status, **body})


@pytest.mark.parametrize(
    ("reply", "status", "open_again", "words"),
    [
        (_reply("forwarded"), "accepted", False, "the agent accepted the answer"),
        (
            _reply("forwarded", responders=["alice", "bob"]),
            "accepted",
            False,
            "the agent accepted the answer (agreed by alice, bob)",
        ),
        (_reply("forwarding"), "accepted", False, "the agent has not confirmed it yet"),
        (
            _reply("collecting", agreeing=1, needed=2, answers=2, disagreement=True),
            "held",
            True,
            "counted this answer from alice; it goes to the agent once 2 people",
        ),
        (ResponseInvalid("no", validation_errors=[{"path": "/ok"}]), "invalid", True, "no"),
        (PromptConflict("answered already"), "conflict", False, "yours was not sent"),
        (
            GatewayRefused(403, "the prompt is for bob"),
            "refused",
            True,
            f"the Jupyter server refused: the prompt is for bob; {NOTHING_SENT}",
        ),
        (GatewayRefused(410, "the deadline passed"), "expired", False, "the deadline passed"),
        (
            GatewayRefused(502, "the agent refused"),
            "failed",
            True,
            "the Jupyter server's gateway answered 502: the agent refused",
        ),
        (AgentTimeout("read timed out"), "failed", True, "did not answer in time"),
        (
            AgentUnreachable("connection refused"),
            "failed",
            True,
            f"could not be reached (connection refused); {NOTHING_SENT}",
        ),
        # Asked, but its answer unreadable: whether it forwarded is unknown, never "not sent".
        (
            ProtocolViolation("not JSON"),
            "failed",
            True,
            "could not be read (not JSON); it forwards an answer at most once",
        ),
    ],
)
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
        _JSON,
        max_size=5,
    ),
)
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


# --- a prompt closed without our answer, and a 409 ----------------------------------------

PROMPT_ID = "0b7a5a5e-4c1f-4a64-9d55-4f3c6f1b2a10"


def _envelope(deadline: str | None) -> PromptEnvelope:
    raw: dict[str, Any] = {
        "prompt_id": PROMPT_ID,
        "prompt": "Approve?",
        "response_schema": {"type": "object"},
    }
    if deadline is not None:
        raw["deadline"] = deadline
    return PromptEnvelope.from_json(raw, mode="orchestrator")


def _ended(state: TaskState, said: str) -> Task:
    message = Message("m9", Role.AGENT, [Part(text=said)], task_id="t1", context_id="c1")
    return Task("t1", "c1", TaskStatus(state, message))


PAST, FUTURE = "2020-01-01T00:00:00Z", "2999-01-01T00:00:00Z"


@pytest.mark.parametrize(
    ("deadline", "state", "signaled", "status", "words"),
    [
        (PAST, TaskState.FAILED, False, "expired", "the deadline passed and the task failed"),
        (FUTURE, TaskState.FAILED, True, "expired", "the deadline passed and the task failed"),
        (
            FUTURE,
            TaskState.CANCELED,
            False,
            "closed",
            "the task was canceled before this prompt was answered",
        ),
        (
            None,
            TaskState.REJECTED,
            False,
            "closed",
            "the task was rejected before this prompt was answered",
        ),
        (
            PAST,
            TaskState.WORKING,
            False,
            "expired",
            "the deadline passed and the agent no longer takes answers to this prompt",
        ),
        (
            FUTURE,
            TaskState.WORKING,
            False,
            "conflict",
            "someone else answered this prompt first; the agent moved on",
        ),
    ],
)
def test_a_closed_prompt_is_told_apart_by_the_task_and_said_once(
    deadline: str | None, state: TaskState, signaled: bool, status: str, words: str
) -> None:
    said = f"The deadline of prompt {PROMPT_ID} passed."
    task = _ended(state, said)
    outcome = _outcomes.closing(task, _envelope(deadline), signaled=signaled)
    assert (outcome.status, outcome.message) == (status, words)
    # What the agent said is shown under the cards, not repeated on the status line;
    # it stays on the outcome for code.
    assert PROMPT_ID not in outcome.message and outcome.final_text == said
    assert outcome.task is task and outcome.error is None


def test_a_409_says_so_and_keeps_its_error_whatever_the_task_shows() -> None:
    conflict = PromptConflict("hitl_already_answered_or_unknown")
    unknown = _outcomes.closing(None, _envelope(FUTURE), conflict=conflict)
    assert unknown.status == "conflict" and unknown.error is conflict
    assert unknown.message.endswith("(409 hitl_already_answered_or_unknown)")
    late = _outcomes.closing(_ended(TaskState.FAILED, "late"), _envelope(PAST), conflict=conflict)
    assert late.status == "expired" and late.error is conflict and "409" not in late.message


@pytest.mark.property
@given(
    agreeing=st.integers(0, 9),
    more=st.integers(-3, 9),
    answers=st.integers(0, 12),
    disagreement=st.booleans(),
)
def test_a_consensus_count_says_enough_never_zero_more(
    agreeing: int, more: int, answers: int, disagreement: bool
) -> None:
    needed = max(2, agreeing + more)
    words = tally_words(Tally(agreeing, needed, answers, disagreement))
    assert "0 more" not in words and "(s)" not in words
    assert words.endswith(": enough") is (agreeing >= needed)
    assert f"{agreeing} of {needed} agreeing" in words
    if agreeing < needed:
        assert f"{needed - agreeing} more needed" in words
        assert ("differ" in words) is disagreement
    assert tally_words(Tally(agreeing, 1, answers, disagreement)) == ""


@pytest.mark.parametrize(
    "reply",
    [
        _reply("forwarding"),
        _reply("collecting", agreeing=1, needed=2, answers=1),
        GatewayRefused(403, "the prompt is for bob"),
        GatewayRefused(502, "the agent refused"),
        AgentTimeout("read timed out"),
        AgentUnreachable("connection refused"),
        ProtocolViolation("not JSON"),
    ],
)
def test_through_the_hubs_service_the_words_name_the_hub(
    reply: GatewayAnswer | HitlError,
) -> None:
    """On a hub the gateway is the hub's service, not anyone's Jupyter server: a card
    must not say "the Jupyter server" counted, refused or forwarded an answer."""
    verdict = gateway_verdict(reply, "alice", 2, HUB)
    words = verdict.outcome.message + " " + verdict.note
    assert "the hub" in words and "Jupyter server" not in words, words


def test_words_from_code_and_after_a_consensus_name_the_gateways_host() -> None:
    assert "the hub decides who may answer" in (
        gateway_refusal("bob", "bob", None, True, HUB) or ""
    )
    said = gateway_refusal("bob", "bob", "carol", False, HUB) or ""
    assert said.startswith("the hub says you are 'bob'")
    task = _task(TaskState.COMPLETED, "done", [])
    view = {"state": "forwarded", "forwarded_for": ["alice", "carol"]}
    other = consensus_closed(view, "bob", task, HUB)
    assert other is not None and "which the hub forwarded" in other.message
    assert "the hub did not answer within 5" in gateway_silent(5, HUB).message
    assert sending_html(to=HUB).endswith("the answer is on its way to the hub</div>")
