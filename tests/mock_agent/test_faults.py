"""Each fault mode breaks exactly the rule it names (and only when switched on)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from hitl_nb.mock_agent import FAULT_NAMES, Faults, MockAgent
from tests.helpers.mock_agent_client import URI, Collector, Wire, envelope_of, headers, user_message


@pytest.fixture()
def wire_for(request: pytest.FixtureRequest) -> Iterator[Wire]:
    with MockAgent(faults=request.param) as agent:
        w = Wire(agent.url)
        yield w
        w.close()


def test_parse_names_round_trip() -> None:
    faults = Faults.parse(["no-echo", "slow-resume=250", "422-without-errors"])
    assert faults.no_echo and faults.slow_resume_ms == 250 and faults.errors_422_without_list
    assert Faults.parse(faults.names()) == faults
    assert not Faults.parse([]) and bool(faults)
    assert len(FAULT_NAMES) == 9


@pytest.mark.parametrize(
    ("names", "words"),
    [
        (["explode"], "unknown fault 'explode'"),
        (["slow-resume"], "needs a delay in milliseconds"),
        (["slow-resume=-5"], "0 < MS"),
        (["no-echo=1"], "takes no value"),
    ],
)
def test_parse_errors_name_the_problem(names: list[str], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        Faults.parse(names)


@pytest.mark.parametrize("wire_for", [["reuse-prompt-ids"]], indirect=True)
def test_reuse_prompt_ids(wire_for: Wire) -> None:
    a, b = wire_for.start(), wire_for.start("multi-step")
    pid = envelope_of(a)["prompt_id"]
    assert envelope_of(b)["prompt_id"] == pid
    nxt = wire_for.answer(b["id"], pid, {"name": "x"})[1]["result"]["task"]
    assert envelope_of(nxt)["prompt_id"] == pid  # a stale answer would now match


@pytest.mark.parametrize("wire_for", [["accept-duplicates"]], indirect=True)
def test_accept_duplicates(wire_for: Wire) -> None:
    task = wire_for.start()
    pid = envelope_of(task)["prompt_id"]
    assert "result" in wire_for.answer(task["id"], pid, {"approve": True})[1]
    assert "result" in wire_for.answer(task["id"], pid, {"approve": False})[1]


@pytest.mark.parametrize("wire_for", [["slow-resume=150"]], indirect=True)
def test_slow_resume(wire_for: Wire) -> None:
    task = wire_for.start()
    msg = user_message(
        task_id=task["id"],
        response={"prompt_id": envelope_of(task)["prompt_id"], "payload": {"approve": True}},
    )
    quick = wire_for.result(
        "SendMessage", {"message": msg, "configuration": {"returnImmediately": True}}
    )
    assert quick["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    # A blocking call waits for the delayed transition.
    again = wire_for.start()
    pid = envelope_of(again)["prompt_id"]
    done = wire_for.answer(again["id"], pid, {"approve": True})[1]["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("wire_for", [["no-replay"]], indirect=True)
def test_no_replay(wire_for: Wire) -> None:
    task = wire_for.start("multi-step")
    wire_for.answer(task["id"], envelope_of(task)["prompt_id"], {"name": "n"})
    body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task["id"]}}
    sub = Collector(wire_for.url, "/", body, {**headers(), "Last-Event-ID": "1"})
    first = sub.wait_for(1)[0][1]["result"]
    assert list(first) == ["task"]  # no replay: a snapshot...
    assert "message" not in first["task"]["status"]  # ...without the envelope


@pytest.mark.parametrize("wire_for", [["422-without-errors"]], indirect=True)
def test_422_without_errors(wire_for: Wire) -> None:
    task = wire_for.start()
    pid = envelope_of(task)["prompt_id"]
    _, body = wire_for.answer(task["id"], pid, {"approve": 1})
    assert body["error"]["code"] == -32011
    assert "validation_errors" not in json.dumps(body)
    _, body03 = wire_for.answer(task["id"], pid, {"approve": 1}, version=None)
    assert body03["error"]["code"] == -32011 and "validation_errors" not in body03["error"]["data"]


@pytest.mark.parametrize("wire_for", [["envelope-without-activation"]], indirect=True)
def test_envelope_without_activation(wire_for: Wire) -> None:
    task = wire_for.start(activated=False)
    assert envelope_of(task)["prompt_id"]


@pytest.mark.parametrize("wire_for", [["oversize-schema"]], indirect=True)
def test_oversize_schema(wire_for: Wire) -> None:
    env = envelope_of(wire_for.start())
    assert len(json.dumps(env["response_schema"]).encode()) > 64 * 1024


@pytest.mark.parametrize("wire_for", [["no-echo"]], indirect=True)
def test_no_echo(wire_for: Wire) -> None:
    r, body = wire_for.rpc("SendMessage", {"message": user_message([{"text": "approval"}])})
    assert "A2A-Extensions" not in r.headers
    assert envelope_of(body["result"]["task"])  # still activated, just not echoed
    r = wire_for.http.get(wire_for.url + "/tasks", headers=headers())
    assert "A2A-Extensions" not in r.headers


@pytest.mark.parametrize("wire_for", [["never-resume"]], indirect=True)
def test_never_resume(wire_for: Wire) -> None:
    task = wire_for.start()
    pid = envelope_of(task)["prompt_id"]
    res = wire_for.answer(task["id"], pid, {"approve": True})[1]["result"]["task"]
    assert res["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert wire_for.answer(task["id"], pid, {"approve": True})[1]["error"]["code"] == -32010


@pytest.mark.parametrize("wire_for", [[]], indirect=True)
def test_no_fault_by_default(wire_for: Wire) -> None:
    r, body = wire_for.rpc("SendMessage", {"message": user_message([{"text": "approval"}])})
    assert r.headers["A2A-Extensions"] == URI
    env = envelope_of(body["result"]["task"])
    assert len(json.dumps(env["response_schema"])) < 64 * 1024
