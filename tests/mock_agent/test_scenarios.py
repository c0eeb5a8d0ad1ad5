"""Scenarios: their validation, the registry, and user scenarios that misbehave."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from hitl_nb.a2a._model import TaskState
from hitl_nb.mock_agent import (
    BUILTIN_SCENARIOS,
    MockAgent,
    Scenario,
    ScenarioRegistry,
    Step,
    TaskEnd,
)
from tests.helpers.mock_agent_client import Wire, envelope_of, user_message

OBJ: dict[str, Any] = {"type": "object", "properties": {"x": {"type": "integer"}}}


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"prompt": "", "response_schema": OBJ}, "non-empty"),
        ({"prompt": "q", "response_schema": {"type": "array"}}, 'type "object"'),
        ({"prompt": "q", "response_schema": OBJ, "deadline_seconds": 0}, "positive"),
        ({"prompt": "q", "response_schema": OBJ, "on_deadline": "explode"}, "on_deadline"),
    ],
)
def test_step_refuses_what_would_break_the_envelope(kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        Step(**kwargs)


def test_outcome_must_be_terminal_and_scenario_needs_steps() -> None:
    with pytest.raises(ValueError, match="terminal"):
        TaskEnd(TaskState.WORKING)
    with pytest.raises(ValueError, match="at least one step"):
        Scenario("empty", "no steps")


def test_registry() -> None:
    reg = ScenarioRegistry()
    assert reg.names() == [s.name for s in BUILTIN_SCENARIOS]
    assert {"approval", "form-tour", "multi-step", "deadline", "consensus", "specific",
            "echo"} <= set(reg.names())  # fmt: skip
    mine = Scenario("approval", "mine", steps=[Step("q", OBJ)])
    with pytest.raises(ValueError, match="already registered"):
        reg.register(mine)
    reg.register(mine, replace=True)
    assert reg.get("approval") is mine
    with pytest.raises(TypeError):
        reg.register("approval")  # type: ignore[arg-type]
    assert ScenarioRegistry(builtins=False).names() == []


def _boom(answers: Any) -> TaskEnd:
    raise RuntimeError("finish exploded")


def test_misbehaving_user_scenarios_fail_their_task_not_the_agent() -> None:
    huge = {"type": "object", "description": "x" * 70_000}
    with MockAgent() as agent:
        agent.register_scenario(Scenario("boom", "", steps=[Step("q", OBJ)], finish=_boom))
        agent.register_scenario(Scenario("huge", "", steps=[Step("q", huge)]))
        with pytest.raises(ValueError, match="already registered"):
            agent.register_scenario(Scenario("boom", "", steps=[Step("q", OBJ)]))
        wire = Wire(agent.url)
        task = wire.start("boom")
        done = wire.answer(task["id"], envelope_of(task)["prompt_id"], {"x": 1})[1]
        status = done["result"]["task"]["status"]
        assert status["state"] == "TASK_STATE_FAILED"
        assert "finish exploded" in status["message"]["parts"][0]["text"]
        bad = wire.start("huge")
        assert bad["status"]["state"] == "TASK_STATE_FAILED"
        assert "not valid" in bad["status"]["message"]["parts"][0]["text"]
        skills = wire.http.get(agent.card_url).json()["skills"]
        assert {"boom", "huge"} <= {s["id"] for s in skills}
        assert wire.start()["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        wire.close()


def test_start_delay_keeps_the_task_working_before_its_first_prompt() -> None:
    with MockAgent() as agent:
        wire = Wire(agent.url)
        try:
            part = {"data": {"scenario": "approval", "start_delay_seconds": 0.4}}
            params = {"message": user_message([part]), "configuration": {"returnImmediately": True}}
            task = wire.result("SendMessage", params)["task"]
            assert task["status"]["state"] == "TASK_STATE_WORKING"
            assert task["status"]["message"]["parts"][0]["text"] == "Preparing the first question."
            # a blocking send waits for the prompt
            blocking = wire.start("approval", start_delay_seconds=0.2)
            assert blocking["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            deadline = time.monotonic() + 10
            while wire.get_task(task["id"])["status"]["state"] == "TASK_STATE_WORKING":
                assert time.monotonic() < deadline, "the first prompt never came"
                time.sleep(0.05)
            assert envelope_of(wire.get_task(task["id"]))["prompt"]
            # a task canceled while it thinks stays canceled
            part = {"data": {"scenario": "approval", "start_delay_seconds": 0.2}}
            params = {"message": user_message([part]), "configuration": {"returnImmediately": True}}
            gone = wire.result("SendMessage", params)["task"]
            wire.result("CancelTask", {"id": gone["id"]})
            time.sleep(0.4)
            assert wire.get_task(gone["id"])["status"]["state"] == "TASK_STATE_CANCELED"
        finally:
            wire.close()


@pytest.mark.parametrize("bad", [-1, 3601, "soon", True, None])
def test_start_delay_must_be_a_sensible_number(bad: Any) -> None:
    with MockAgent() as agent:
        wire = Wire(agent.url)
        try:
            part = {"data": {"scenario": "approval", "start_delay_seconds": bad}}
            _, body = wire.rpc("SendMessage", {"message": user_message([part])})
            if bad is None:
                assert body["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            else:
                assert body["error"]["code"] == -32602
                assert "start_delay_seconds" in json.dumps(body["error"])
        finally:
            wire.close()
