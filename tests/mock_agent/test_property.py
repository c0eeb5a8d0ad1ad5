"""Open-ended input: any JSON body gets a JSON-RPC answer; any payload is judged as the
validator judges it; the agent never falls over."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hitl_nb.errors import A2A_ERRORS
from hitl_nb.mock_agent import MockAgent
from hitl_nb.mock_agent._scenarios import APPROVAL_SCHEMA
from hitl_nb.validation import validate_payload
from tests.helpers.mock_agent_client import Wire, envelope_of, headers

pytestmark = pytest.mark.property

CODES = {cls.code for cls in A2A_ERRORS}
METHODS = ["SendMessage", "GetTask", "ListTasks", "CancelTask", "message/send", "tasks/get"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as a:
        yield a


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    method=st.sampled_from(METHODS) | st.text(max_size=12),
    params=json_values,
    rid=st.integers(0, 10**6) | st.text(min_size=1, max_size=6),
    version=st.sampled_from(["1.0", "0.3", None]),
)
def test_any_request_gets_a_json_rpc_answer(
    agent: MockAgent, http: httpx.Client, method: str, params: Any, rid: Any, version: str | None
) -> None:
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    r = http.post(agent.url + "/", json=body, headers=headers(version))
    assert r.status_code == 200
    out = r.json()
    assert out["jsonrpc"] == "2.0" and out["id"] == rid
    assert ("result" in out) != ("error" in out)
    if "error" in out:
        assert out["error"]["code"] in CODES and out["error"]["message"]


payloads = st.dictionaries(
    st.sampled_from(["approve", "comment", "other"]),
    st.booleans() | st.text(max_size=5) | st.integers() | st.none(),
    max_size=3,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(payload=payloads)
def test_an_answer_is_accepted_exactly_when_it_validates(agent: MockAgent, payload: Any) -> None:
    wire = Wire(agent.url)
    task = wire.start()
    _, body = wire.answer(task["id"], envelope_of(task)["prompt_id"], payload)
    valid = validate_payload(APPROVAL_SCHEMA, payload) == []
    if valid:
        assert body["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    else:
        errors = body["error"]["data"][1]["validation_errors"]
        assert body["error"]["code"] == -32011 and errors
        assert wire.get_task(task["id"])["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    wire.close()
