"""Outcome helpers for assertions, and answers sent on purpose past the local check."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import closing

import pytest

from hitl_nb.a2a import Artifact, Message, Part, Role, Task, TaskState, TaskStatus
from hitl_nb.client import SyncHitlClient, prompt_of
from hitl_nb.errors import (
    AnswerNotAccepted,
    InvalidParams,
    PromptConflict,
    ResponseInvalid,
)
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook import Conversation, Outcome
from hitl_nb.notebook._outcome import refused_by_agent
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
        # what a person reads names the field by its label, not by its JSON Pointer
        status = chat.current.status.value
        assert "Approve: expected boolean, got string" in status and "/approve" not in status
        assert str(sent).splitlines()[1:] == ["  Approve: expected boolean, got string"]
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
    assert plain.message == "the agent refused the answer (2 problems, listed below)"
    assert "hitl_response_invalid" not in str(plain) and "422" not in str(plain)
    labelled = dataclasses.replace(plain, where={"/approve": "Approve"}.get)
    assert str(labelled).splitlines()[1] == "  Approve: expected boolean"
    own = refused_by_agent(ResponseInvalid("replicas must be odd", validation_errors=[]))
    assert own.message == (
        "the agent refused the answer (it did not say why); it says: replicas must be odd"
    )
