"""Scenarios (hitl_nb.mock_agent._scenarios): their validation, the registry, the
built-in ends (how the script runs them is test_script.py)."""

from __future__ import annotations

from typing import Any

import pytest

from hitl_nb.a2a._model import TaskState
from hitl_nb.mock_agent import (
    BUILTIN_SCENARIOS,
    Scenario,
    ScenarioRegistry,
    Step,
    TaskEnd,
)

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
    assert {
        "approval",
        "form-tour",
        "multi-step",
        "deadline",
        "consensus",
        "specific",
        "echo",
    } <= set(reg.names())
    mine = Scenario("approval", "mine", steps=[Step("q", OBJ)])
    with pytest.raises(ValueError, match="already registered"):
        reg.register(mine)
    reg.register(mine, replace=True)
    assert reg.get("approval") is mine
    with pytest.raises(TypeError):
        reg.register("approval")  # type: ignore[arg-type]
    assert ScenarioRegistry(builtins=False).names() == []


def test_a_scenario_without_finish_counts_its_answers_in_words() -> None:
    plain = Scenario("plain", "", steps=[Step("q", OBJ)])
    assert plain.finish([{}]).text == "Done: 1 answer received."
    assert plain.finish([{}, {}]).text == "Done: 2 answers received."
