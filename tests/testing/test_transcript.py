"""Transcripts: record to JSON, replay with the first difference, serve as a mock agent."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.client import SyncHitlClient
from hitl_nb.mock_agent import MockAgent, Scenario, Step, TaskEnd
from hitl_nb.notebook import Conversation
from hitl_nb.testing import Transcript, TranscriptError
from tests.helpers.sdk_agent import SdkAgent

APPROVE = {
    "type": "object",
    "required": ["approve"],
    "additionalProperties": False,
    "properties": {"approve": {"type": "boolean"}},
}


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


def test_record_a_conversation_with_a_refused_answer(agent: MockAgent, tmp_path: Path) -> None:
    script = Transcript.record(
        agent.url, {"scenario": "echo"}, [["not an object"], {"message": "hi"}]
    )
    assert len(script.steps) == 2
    first, second = script.steps
    assert first["prompt"]["prompt"].startswith("Send any object")
    assert first["outcome"]["error"] in ("InvalidParams", "ResponseInvalid")
    assert first["state"] == "INPUT_REQUIRED"
    assert second["outcome"] == {"accepted": True} and second["state"] == "COMPLETED"
    assert script.final == {
        "state": "COMPLETED",
        "text": "Echoing the accepted payload.",
        "artifacts": [{"message": "hi"}],
    }
    script.save(tmp_path / "echo.json")
    again = Transcript.load(tmp_path / "echo.json")
    assert again.to_json() == script.to_json()
    assert json.loads((tmp_path / "echo.json").read_text("utf-8"))["format"] == "hitl-nb transcript"


def test_a_replay_against_the_same_agent_is_the_same(agent: MockAgent) -> None:
    script = Transcript.record(
        agent.url,
        {"scenario": "multi-step"},
        [{"environment": "staging"}, {"environment": "nope"}, {"approve": True}, {}, {}],
    )
    # ids (task, prompt, message) and times differ on every run; the replay ignores them.
    result = script.replay(agent.url)
    result.check()
    assert result.ok and str(result) == "same as recorded"


def _agent_with(steps: list[Step], text: str = "Filed.") -> MockAgent:
    flow = Scenario("flow", "test", steps=steps, finish=lambda _a: TaskEnd(text=text))
    return MockAgent(scenarios=[flow])


def test_replay_reports_the_first_difference() -> None:
    recorded_steps = [Step("Approve?", APPROVE)]
    with _agent_with(recorded_steps) as before:
        script = Transcript.record(
            before.url, {"scenario": "flow"}, [{"approve": "yes"}, {"approve": True}]
        )
    assert script.steps[0]["outcome"]["validation_errors"] == [
        {"path": "/approve", "keyword": "type"}
    ]
    changed_schema = {**APPROVE, "properties": {"approve": {"type": "string"}}}
    cases: list[tuple[list[Step], str, str]] = [
        (
            [Step("Approve?", changed_schema)],
            "prompt's response_schema",
            "/response_schema/properties/approve/type",
        ),
        ([Step("Approve now?", APPROVE)], "prompt", "/prompt"),
    ]
    for steps, what, pointer in cases:
        with _agent_with(steps) as after:
            diff = script.replay(after.url).difference
        assert diff is not None and diff.step == 0 and diff.what == what and diff.pointer == pointer
    with _agent_with(recorded_steps, text="Filed twice.") as after:
        result = script.replay(after.url)
    assert result.difference is not None and result.difference.what == "end of the task"
    with pytest.raises(AssertionError, match="step 2: the end of the task differs at /text"):
        result.check()
    two = [Step("Approve?", APPROVE), Step("Really?", APPROVE)]
    with _agent_with(two) as after:
        diff = script.replay(after.url).difference
    assert diff is not None and diff.what == "task state" and diff.step == 1
    assert (diff.expected, diff.got) == ("COMPLETED", "INPUT_REQUIRED")


def test_serve_a_transcript_as_a_scripted_agent() -> None:
    with SdkAgent() as sdk:
        script = Transcript.record(sdk.url, "hello", [{"approved": "yes"}, {"approved": True}])
    assert script.steps[0]["outcome"]["error"] == "ResponseInvalid"
    assert script.final is not None and script.final["state"] == "COMPLETED"
    assert script.final["text"] == "approved"
    with script.mock_agent() as offline:
        script.replay(offline.url).check()  # the mock agent plays what the SDK agent did
        with SyncHitlClient(offline.url) as client:
            chat = Conversation.start(client, "hello")
            try:
                assert chat.answer({"approved": True}).raise_for_status().final_text == "approved"
            finally:
                chat.close()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "not a transcript"),
        ({"format": "hitl-nb transcript", "version": 2}, "version 2 is not 1"),
        ({"format": "hitl-nb transcript", "version": 1, "steps": {}}, "steps must be a list"),
        ({"format": "hitl-nb transcript", "version": 1, "steps": [{"prompt": 3}]}, "step 0"),
        ({"format": "hitl-nb transcript", "version": 1, "steps": [], "final": {}}, '"final"'),
        ({"format": "hitl-nb transcript", "version": 1, "steps": []}, 'no "start"'),
    ],
)
def test_bad_transcripts_are_named(data: Any, message: str) -> None:
    with pytest.raises(TranscriptError, match=message):
        Transcript.from_json(data)


def test_a_file_that_is_not_json(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("{", "utf-8")
    with pytest.raises(TranscriptError, match="is not JSON"):
        Transcript.load(tmp_path / "x.json")
