"""A task's record (hitl_nb.mock_agent._records): its JSON form for the store keeps all but
the outbox and the steps (which come back from the store and the scenario), and the open
prompt's deadline is read as RFC 3339 once, with the rest of the package."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from hitl_nb.a2a import PushConfig, Task, TaskState, TaskStatus
from hitl_nb.mock_agent._outbox import Outbox
from hitl_nb.mock_agent._records import (
    OpenPrompt,
    PushEntry,
    TaskRecord,
    record_from_json,
    record_to_json,
)

STAMP = "2030-01-01T00:00:00Z"
ENVELOPE = {
    "prompt_id": "0d7f1e7e-0000-4000-8000-000000000001",
    "prompt": "Approve?",
    "response_schema": {"type": "object"},
    "deadline": "2030-01-02T03:04:05.5+01:00",
}


def _record() -> TaskRecord:
    hook = PushConfig("https://example.org/hook", id="c1", task_id="t1", token="secret")
    return TaskRecord(
        task=Task(
            "t1", "c1", TaskStatus(TaskState.INPUT_REQUIRED, timestamp="2030-01-01T00:00:00Z")
        ),
        scenario="approval",
        options={"n": 2},
        steps=[],
        step_index=1,
        answers=[{"approve": True}],
        prompt=OpenPrompt(ENVELOPE["prompt_id"], ENVELOPE, "fail", timed_out=False),
        last_answered="0d7f1e7e-0000-4000-8000-000000000000",
        push={"c1": PushEntry(hook, "0.3", activated=True)},
    )


def test_a_record_comes_back_from_its_json_with_the_stores_outbox() -> None:
    rec = _record()
    blob = json.loads(json.dumps(record_to_json(rec)))  # what the store keeps is JSON text
    outbox = Outbox()
    back = record_from_json(blob, outbox, steps=[])
    assert record_to_json(back) == record_to_json(rec)
    assert back.outbox is outbox and back.committed == outbox.last_id
    assert back.push["c1"].config.token == "secret" and back.push["c1"].version == "0.3"


def test_the_open_prompts_deadline_is_an_aware_datetime() -> None:
    prompt = OpenPrompt(ENVELOPE["prompt_id"], ENVELOPE)
    want = datetime(2030, 1, 2, 3, 4, 5, 500_000, timezone(timedelta(hours=1)))
    assert prompt.deadline_at == want
    assert OpenPrompt("p", {"prompt": "no deadline"}).deadline_at is None
