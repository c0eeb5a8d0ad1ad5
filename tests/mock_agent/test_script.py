"""The script (hitl_nb.mock_agent._script): which scenario a first message starts, the
prompts of each step with fresh ids, deadlines, start delays, the end of a task, and
user scenarios that misbehave."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from hitl_nb.a2a import Message, Part, Role
from hitl_nb.errors import InvalidParams
from hitl_nb.mock_agent import (
    Faults,
    MemoryTaskStore,
    MockAgent,
    Scenario,
    ScenarioRegistry,
    Step,
    TaskEnd,
)
from hitl_nb.mock_agent._script import Script
from hitl_nb.mock_agent._task_book import TaskBook
from hitl_nb.spec import PromptEnvelope
from tests.helpers.mock_agent_client import Collector, Wire, envelope_of, headers, user_message
from tests.helpers.until import until

OBJ: dict[str, Any] = {"type": "object", "properties": {"x": {"type": "integer"}}}


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent(deadline_seconds=0.3) as a:
        yield a


@pytest.fixture()
def wire(agent: MockAgent) -> Iterator[Wire]:
    w = Wire(agent.url)
    yield w
    w.close()


def test_multi_step_issues_three_fresh_prompt_ids(wire: Wire) -> None:
    task = wire.start("multi-step")
    seen = []
    for payload in ({"name": "r1"}, {"replicas": 3}, {"ship": True}):
        env = envelope_of(task)
        seen.append(env["prompt_id"])
        task = wire.answer(task["id"], env["prompt_id"], payload)[1]["result"]["task"]
    assert len(set(seen)) == 3
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["data"]["answers"][1] == {"replicas": 3}


def test_echo_returns_the_payload_as_an_artifact(wire: Wire) -> None:
    task = wire.start("echo")
    payload = {"message": "hi", "n": [1, 2]}
    done = wire.answer(task["id"], envelope_of(task)["prompt_id"], payload)[1]["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["artifacts"][0]["parts"][0]["data"] == payload


@pytest.mark.parametrize(
    ("scenario", "options", "responders"),
    [
        ("consensus", {}, ["consensus:2"]),
        ("consensus", {"n": 3}, ["consensus:3"]),
        ("specific", {"responder": "ana@example.org"}, ["specific:ana@example.org"]),
    ],
)
def test_responder_scenarios(
    wire: Wire, scenario: str, options: dict[str, Any], responders: list[str]
) -> None:
    task = wire.start(scenario, **options) if options else wire.start(scenario)
    assert envelope_of(task)["allowed_responders"] == responders


def test_form_tour_schema_is_usable(wire: Wire) -> None:
    env = envelope_of(wire.start("form-tour"))
    parsed = PromptEnvelope.from_json(env)
    assert parsed.validate({"title": "abc", "priority": "low", "approve": True}) == []
    assert {"oneOf", "allOf", "$defs", "enum", "const", "pattern", "format"} <= set(
        json.dumps(env["response_schema"]).replace('"', " ").split()
    )


def test_unknown_scenario_and_bad_options_are_invalid_params(wire: Wire) -> None:
    _, body = wire.rpc("SendMessage", {"message": user_message([{"data": {"scenario": "nope"}}])})
    assert body["error"]["code"] == -32602 and "unknown scenario 'nope'" in body["error"]["message"]
    bad = user_message([{"data": {"scenario": "consensus", "n": 0}}])
    _, body = wire.rpc("SendMessage", {"message": bad})
    assert body["error"]["code"] == -32602 and "'n'" in body["error"]["message"]


def test_deadline_keep_open_signals_and_still_accepts(wire: Wire, agent: MockAgent) -> None:
    # The subscription must open before the deadline passes, or the signal is not in it:
    # long enough that a loaded machine still subscribes in time.
    task = wire.start("deadline", deadline_seconds=2.0)
    env = envelope_of(task)
    sub = Collector(
        agent.url,
        "/",
        {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task["id"]}},
        headers(),
    )
    events = sub.join()
    assert "task" in events[0][1]["result"]
    signal = events[-1][1]["result"]["statusUpdate"]
    assert signal["metadata"]["hitlTimeout"] == {
        "promptId": env["prompt_id"],
        "deadline": env["deadline"],
        "policy": "keep-open",
    }
    assert signal["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert wire.answer(task["id"], env["prompt_id"], {"approve": True})[1]["result"]


def test_deadline_fail_policy_fails_the_task(wire: Wire) -> None:
    task = wire.start("deadline", deadline_seconds=0.1, on_deadline="fail")
    pid = envelope_of(task)["prompt_id"]

    def moved_on() -> Any:
        now = wire.get_task(task["id"])
        return now if now["status"]["state"] != "TASK_STATE_INPUT_REQUIRED" else None

    now = until(moved_on, timeout=30, what="the deadline to end the prompt")
    assert now["status"]["state"] == "TASK_STATE_FAILED"
    assert wire.answer(task["id"], pid, {"approve": True})[1]["error"]["code"] == -32010


def test_custom_scenario_registered_from_python() -> None:
    from hitl_nb.mock_agent import Scenario, Step, TaskEnd

    triage = Scenario(
        "triage",
        "Severity, then done.",
        steps=[
            Step(
                "Severity?",
                {
                    "type": "object",
                    "required": ["sev"],
                    "properties": {"sev": {"enum": ["lo", "hi"]}},
                },
                allowed_responders=["any"],
            )
        ],
        finish=lambda answers: TaskEnd(text="filed", artifacts=[{"sev": answers[0]["sev"]}]),
    )
    with MockAgent(scenarios=[triage]) as agent:
        wire = Wire(agent.url)
        task = wire.start("triage")
        env = envelope_of(task)
        assert env["prompt"] == "Severity?" and env["allowed_responders"] == ["any"]
        done = wire.answer(task["id"], env["prompt_id"], {"sev": "hi"})[1]["result"]["task"]
        assert done["artifacts"][0]["parts"][0]["data"] == {"sev": "hi"}
        wire.close()


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
            until(
                lambda: wire.get_task(task["id"])["status"]["state"] != "TASK_STATE_WORKING",
                timeout=30,
                what="the first prompt",
                interval=0.05,
            )
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


# -- planning a task, before it exists ----------------------------------------------------


def _first(*parts: Part) -> Message:
    return Message(str(uuid.uuid4()), Role.USER, list(parts))


@pytest.fixture()
def script() -> Script:
    defaults = {"deadline": {"deadline_seconds": 7.0, "on_deadline": "fail"}}
    return Script(TaskBook(MemoryTaskStore()), ScenarioRegistry(), Faults(), defaults)


def test_the_first_message_picks_the_scenario(script: Script) -> None:
    assert script.plan(_first(Part(text="hello"))).scenario == "approval"
    plan = script.plan(_first(Part(text=" multi-step ")))
    assert plan.scenario == "multi-step" and len(plan.steps) == 3 and plan.options == {}
    plan = script.plan(_first(Part(text="echo"), Part(data={"scenario": "consensus", "n": 4})))
    assert plan.scenario == "consensus" and plan.options == {"n": 4}  # data before text
    assert plan.steps[0].allowed_responders == ["consensus:4"]


def test_the_agents_defaults_reach_the_steps_but_not_the_stored_options(script: Script) -> None:
    plan = script.plan(_first(Part(data={"scenario": "deadline"})))
    assert plan.options == {}
    assert (plan.steps[0].deadline_seconds, plan.steps[0].on_deadline) == (7.0, "fail")
    plan = script.plan(_first(Part(data={"scenario": "deadline", "deadline_seconds": 2})))
    assert plan.steps[0].deadline_seconds == 2 and plan.options == {"deadline_seconds": 2}


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"scenario": "nope"}, "unknown scenario 'nope'"),
        ({"scenario": 5}, "unknown scenario 5"),
        ({"scenario": "specific", "responder": "a b"}, "responder"),
        ({"scenario": "approval", "start_delay_seconds": -1}, "start_delay_seconds"),
    ],
)
def test_plan_refuses_what_no_task_could_run(
    script: Script, data: dict[str, Any], words: str
) -> None:
    with pytest.raises(InvalidParams, match=words):
        script.plan(_first(Part(data=data)))
