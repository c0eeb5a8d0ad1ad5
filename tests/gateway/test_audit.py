"""The audit trail's entries: hashes of canonical JSON (never the answer), actions, and
the JSON lines export."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hitl_nb.gateway import Caller
from hitl_nb.gateway._audit import action_of, answer_entry, json_lines, sha256_of
from hitl_nb.gateway._forward import GatewayReply
from hitl_nb.gateway._store import PromptRow, Registration

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
REG = Registration("r1", "http://agent.invalid", "t1", "Alice", 1.0, "alice")
ROW = PromptRow(
    "r1", "p1", None, {"prompt_id": "p1", "response_schema": {"type": "object"}}, None, 1.0, None
)


def _shuffled(value: Any, rnd: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rnd.shuffle(items)
        return {k: _shuffled(v, rnd) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rnd) for v in value]
    return value


@pytest.mark.property
@given(JSON, st.integers(0, 2**32))
def test_the_hash_is_of_the_value_not_of_its_spelling(value: Any, seed: int) -> None:
    digest = sha256_of(value)
    same = _shuffled(json.loads(json.dumps(value)), random.Random(seed))
    assert sha256_of(same) == digest
    if value is not None:
        assert digest is not None and len(digest) == 64


def test_what_json_cannot_hold_has_no_hash() -> None:
    assert sha256_of(None) is None
    assert sha256_of({"x": float("nan")}) is None
    assert sha256_of({"a": 1}) != sha256_of({"a": 2})


def test_each_reply_names_its_action() -> None:
    for status, action in [
        ("collecting", "held"),
        ("forwarded", "forwarded"),
        ("forwarding", "forwarding"),
        ("rejected", "rejected"),
        ("closed", "closed"),
        ("failed", "failed"),
        ("???", "failed"),
    ]:
        assert action_of(GatewayReply(200, {"status": status})) == action


def test_an_entry_holds_hashes_and_the_agents_reply_never_the_answer() -> None:
    payload = {"approve": True, "comment": "a secret reason"}
    reply = GatewayReply(
        200,
        {
            "status": "forwarded",
            "responders": ["alice", "bob"],
            "task_state": "completed",
            "message": "the agent accepted",
        },
    )
    entry = answer_entry(
        REG, ROW, Caller("bob", "Bob"), payload, status=200, action="forwarded", reply=reply
    )
    line = json_lines([entry])
    assert line.endswith("\n") and line.count("\n") == 1
    data = json.loads(line)
    assert "a secret reason" not in line
    assert data["payload_sha256"] == sha256_of(payload)
    assert data["response_schema_sha256"] == sha256_of({"type": "object"})
    assert data["responder"] == "bob" and data["display_name"] == "Bob"
    assert data["responders"] == ["alice", "bob"]
    assert data["agent_reply"] == {"message": "the agent accepted", "task_state": "completed"}
    held = answer_entry(
        REG,
        ROW,
        Caller("bob", "Bob"),
        payload,
        status=202,
        action="held",
        reply=GatewayReply(202, {"status": "collecting", "message": "1 of 2"}),
    )
    assert held.agent_reply is None  # the agent was not asked
    refused = answer_entry(
        REG,
        ROW,
        Caller("eve", "eve"),
        payload,
        status=403,
        action="refused",
        reason="only carol may answer",
    )
    assert refused.reason == "only carol may answer" and refused.agent_reply is None
