"""The rule of exactly-once answers (client/_answer.py, ``fate``), both ways: an agent
that keeps its task's history and one that keeps none. The history proves what it
holds; its silence proves nothing (A2A: ``historyLength``, or no history at all); a
409 to a first send is never ours. The gateway's forward, the same engine:
tests/gateway/test_forward.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hitl_nb.a2a import CODEC_V1, Task
from hitl_nb.client import Fate, HitlClient, HttpLimits, Reconnect, fate
from hitl_nb.errors import PromptConflict
from hitl_nb.spec import RESPONSE_KEY, PromptEnvelope
from tests.helpers import wire
from tests.helpers.one_prompt import OnePromptAgent

FAST = {
    "limits": HttpLimits(timeout=5.0, connect_timeout=2.0),
    "reconnect": Reconnect(backoff=0.01),
}
KEEPS = pytest.mark.parametrize("keeps_history", [True, False], ids=["history", "no-history"])
YES = {"approved": True}


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def _message(message_id: str, prompt_id: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "x"}]}
    if prompt_id is not None:
        out["metadata"] = {RESPONSE_KEY: {"prompt_id": prompt_id, "payload": YES}}
    return out


def _task(state: str, env: dict[str, Any] | None, history: list[dict[str, Any]] | None) -> Task:
    task = wire.task("t1", state, env)
    if history is not None:
        task["history"] = history
    return CODEC_V1.decode_task(task)


ENV = wire.envelope()
PID = ENV["prompt_id"]
NOTICE = {"messageId": "m-agent", "role": "ROLE_AGENT", "parts": [{"text": "late"}]}


@pytest.mark.parametrize(
    "state, env, history, expected",
    [
        pytest.param("working", None, [_message("ours", PID)], Fate.LANDED, id="ours-in-history"),
        pytest.param(
            "input_required", ENV, [_message("ours", PID)], Fate.LANDED, id="ours-slow-to-resume"
        ),
        pytest.param("input_required", ENV, None, Fate.OPEN, id="open-no-history"),
        pytest.param("input_required", ENV, [NOTICE], Fate.OPEN, id="open-history"),
        pytest.param("working", None, [_message("other", PID)], Fate.CLOSED, id="another-answer"),
        pytest.param("failed", None, [NOTICE], Fate.CLOSED, id="ended-without-ours"),
        pytest.param("working", None, None, Fate.LANDED, id="closed-no-history"),
        pytest.param("failed", None, None, Fate.LANDED, id="ended-no-history"),
        pytest.param("working", None, [NOTICE], Fate.LANDED, id="closed-history-cut-short"),
        pytest.param(
            "working", None, [_message("other", "another-prompt")], Fate.LANDED, id="other-prompt"
        ),
    ],
)
def test_what_a_task_read_back_says_of_our_answer(
    state: str, env: dict[str, Any] | None, history: list[dict[str, Any]] | None, expected: Fate
) -> None:
    assert fate(_task(state, env, history), PID, "ours") is expected


@KEEPS
def test_an_answer_accepted_whose_reply_was_lost_is_not_sent_again(keeps_history: bool) -> None:
    agent = OnePromptAgent(keeps_history=keeps_history, lose="after")
    with agent.serve() as server:
        client = HitlClient(server.url, **FAST)
        result = run(client.respond("t1", agent.prompt_id, YES))
    assert result.status.state.value == "working"
    assert len(agent.sends) == 1 and agent.accepted == agent.sends[0]["messageId"]
    receipt = client.receipt(agent.prompt_id)
    assert receipt is not None and receipt.recovered


@KEEPS
def test_a_409_to_a_first_send_is_another_answer_whatever_the_history(keeps_history: bool) -> None:
    agent = OnePromptAgent(keeps_history=keeps_history)
    agent.answer_elsewhere()
    with agent.serve() as server:
        client = HitlClient(server.url, **FAST)
        prompt = PromptEnvelope.from_json(agent.env, mode="orchestrator")
        with pytest.raises(PromptConflict):
            run(client.respond("t1", agent.prompt_id, YES, prompt=prompt, context_id="ctx-1"))
        assert server.calls.count("GetTask") == 0  # type: ignore[attr-defined]
    assert len(agent.sends) == 1 and agent.accepted == "m-elsewhere"
    assert client.receipt(agent.prompt_id) is None


@KEEPS
def test_an_answer_lost_while_another_was_accepted(keeps_history: bool) -> None:
    """The history shows the other answer: ours is sent again and the agent's 409
    stands. Without a history nothing shows it: the prompt closed after ours was sent,
    and it counts as ours (rule 5 of ``fate``: the limit of an agent that keeps none)."""
    agent = OnePromptAgent(keeps_history=keeps_history, lose="before")
    with agent.serve() as server:
        client = HitlClient(server.url, **FAST)
        if keeps_history:
            with pytest.raises(PromptConflict):
                run(client.respond("t1", agent.prompt_id, YES, context_id="ctx-1"))
            assert len(agent.sends) == 2
            assert agent.sends[0]["messageId"] == agent.sends[1]["messageId"]
        else:
            result = run(client.respond("t1", agent.prompt_id, YES, context_id="ctx-1"))
            assert result.status.state.value == "working" and len(agent.sends) == 1
    assert agent.accepted == "m-elsewhere"
