"""Tests for hitl_nb.client._events: prompts found, malformed ones reported, never raised."""

from __future__ import annotations

from typing import Any

import pytest

from hitl_nb.a2a import CODEC_V03, CODEC_V1
from hitl_nb.client._events import (
    ArtifactEvent,
    MalformedPromptEvent,
    MessageEvent,
    PromptEvent,
    StatusEvent,
    TaskEvent,
    ends_stream,
    neutral_events,
)
from tests.helpers import wire


def decode(payload: dict[str, Any]) -> Any:
    return CODEC_V1.decode_stream_response(payload)


def test_status_with_envelope_gives_status_then_prompt() -> None:
    env = wire.envelope("Ship it?")
    events = neutral_events(decode(wire.status_update("t1", "input_required", env)), "7")
    assert [type(e) for e in events] == [StatusEvent, PromptEvent]
    prompt = events[1]
    assert isinstance(prompt, PromptEvent)
    assert (prompt.task_id, prompt.prompt_id, prompt.prompt) == ("t1", env["prompt_id"], "Ship it?")
    assert prompt.event_id == "7"
    assert prompt.response_schema == wire.APPROVAL_SCHEMA


def test_task_snapshot_with_envelope() -> None:
    events = neutral_events(decode({"task": wire.task("t1", "input_required", wire.envelope())}))
    assert [type(e) for e in events] == [TaskEvent, PromptEvent]


def test_envelope_outside_input_required_is_not_a_prompt() -> None:
    events = neutral_events(decode(wire.status_update("t1", "working", wire.envelope())))
    assert [type(e) for e in events] == [StatusEvent]


@pytest.mark.parametrize(
    "env, needle",
    [
        pytest.param(
            {"prompt": "x", "response_schema": {"type": "object"}}, "prompt_id", id="no-id"
        ),
        pytest.param(wire.envelope(response_schema={"type": "string"}), "object", id="not-object"),
        pytest.param(
            wire.envelope(
                response_schema={
                    "type": "object",
                    "properties": {f"p{i}": {"description": "x" * 100} for i in range(700)},
                }
            ),
            "64 KiB",
            id="schema-over-64KiB",
        ),
        pytest.param("not an object", "object", id="string"),
        pytest.param(wire.envelope(prompt=""), "empty", id="empty-prompt"),
    ],
)
def test_malformed_envelope_becomes_an_event(env: Any, needle: str) -> None:
    events = neutral_events(decode(wire.status_update("t1", "input_required", env)))
    assert [type(e) for e in events] == [StatusEvent, MalformedPromptEvent]
    bad = events[1]
    assert isinstance(bad, MalformedPromptEvent)
    assert needle in bad.reason
    assert bad.raw == env
    assert "malformed prompt" in str(bad)


def test_unknown_responder_pattern_is_ignored_and_script_kept_as_data() -> None:
    env = wire.envelope("<script>alert(1)</script>", allowed_responders=["any", "robots:7"])
    [_, prompt] = neutral_events(decode(wire.status_update("t1", "input_required", env)))
    assert isinstance(prompt, PromptEvent)
    assert prompt.prompt == "<script>alert(1)</script>"
    assert "<script>" not in prompt.envelope._repr_html_()


def test_artifact_and_message_events() -> None:
    art = decode(
        {
            "artifactUpdate": {
                "taskId": "t",
                "artifact": {"artifactId": "a", "parts": [{"text": "x"}]},
            }
        }
    )
    msg = decode({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}})
    assert [type(e) for e in neutral_events(art)] == [ArtifactEvent]
    assert [type(e) for e in neutral_events(msg)] == [MessageEvent]
    assert not ends_stream(art)
    assert ends_stream(msg)


@pytest.mark.parametrize(
    "state, ends",
    [("working", False), ("input_required", True), ("completed", True), ("failed", True)],
)
def test_ends_stream_states(state: str, ends: bool) -> None:
    assert ends_stream(decode(wire.status_update("t", state))) is ends


def test_v03_final_flag_ends_stream() -> None:
    event = CODEC_V03.decode_stream_response(
        {
            "kind": "status-update",
            "taskId": "t",
            "contextId": "c",
            "status": {"state": "working"},
            "final": True,
        }
    )
    assert ends_stream(event)


def test_status_update_metadata_is_kept() -> None:
    # Where agents put signals about the task, e.g. a deadline timeout (spec S-4).
    update = wire.status_update("t1", "input_required", wire.envelope())
    update["statusUpdate"]["metadata"] = {"hitlTimeout": {"policy": "keep-open"}}
    status = neutral_events(decode(update))[0]
    assert isinstance(status, StatusEvent)
    assert status.metadata == {"hitlTimeout": {"policy": "keep-open"}}
