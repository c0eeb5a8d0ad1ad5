"""A task read back from the SDK's store: which prompt each answer closed, and what the
gate needs of it."""

from __future__ import annotations

from typing import Any

from a2a.types import Message, Part, Role, Task, TaskState, TaskStatus
from google.protobuf.struct_pb2 import Struct, Value

from hitl_nb.agent._envelope import build_envelope
from hitl_nb.agent._prompts import Asked, PromptBook
from hitl_nb.agent._stored import past_prompts, stored_task, whole_numbers
from hitl_nb.spec import EXTENSION_URI, RESPONSE_KEY

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}, "ok": {"type": "boolean"}}}


def _meta(value: dict[str, Any]) -> Struct:
    meta = Struct()
    meta.update(value)
    return meta


def _prompt(asked: Asked) -> Message:
    return Message(
        role=Role.ROLE_AGENT,
        message_id="a",
        parts=[Part(text=asked.envelope.prompt)],
        metadata=_meta({EXTENSION_URI: asked.envelope.to_json()}),
    )


def _user(text: str = "", meta: dict[str, Any] | None = None, data: Any = None) -> Message:
    parts = [Part(text=text)] if text else []
    if data is not None:
        value = Value()
        value.struct_value.update(data)
        parts.append(Part(data=value))
    message = Message(role=Role.ROLE_USER, message_id="u", parts=parts)
    if meta is not None:
        message.metadata.CopyFrom(_meta(meta))
    return message


def test_each_answer_is_the_first_user_message_after_the_last_emission() -> None:
    one = Asked("t", build_envelope("n?", SCHEMA))
    two = Asked("t", build_envelope("ok?", SCHEMA))
    three = Asked("t", build_envelope("words?", None))
    answer_one = {RESPONSE_KEY: {"prompt_id": one.prompt_id, "payload": {"n": 3}}}
    history = [
        _user("start"),
        _prompt(one),
        _user("what?"),  # answered nothing: the prompt was asked again
        _prompt(one),
        _user("ok", answer_one),
        _prompt(two),
        _user(data={"ok": True, "n": 2}),  # a plain client's data part
        _prompt(three),
    ]
    task = Task(id="t", context_id="c", history=history)
    task.status.CopyFrom(TaskStatus(state=TaskState.TASK_STATE_INPUT_REQUIRED))
    past = past_prompts(task, PromptBook())
    assert [p.asked.prompt_id for p in past] == [one.prompt_id, two.prompt_id, three.prompt_id]
    assert [p.answer for p in past] == [{"n": 3}, {"ok": True, "n": 2}, None]
    assert type(past[0].answer["n"]) is int  # type: ignore[index]


def test_the_open_prompt_in_the_status_counts_as_its_latest_emission() -> None:
    one = Asked("t", build_envelope("n?", SCHEMA))
    task = Task(id="t", context_id="c", history=[_prompt(one), _user("huh?")])
    task.status.CopyFrom(
        TaskStatus(state=TaskState.TASK_STATE_INPUT_REQUIRED, message=_prompt(one))
    )
    (past,) = past_prompts(task, PromptBook())
    assert past.answer is None  # "huh?" came before the prompt was asked again
    seen = stored_task(task)
    assert seen is not None and seen.input_required and seen.context_id == "c"
    assert seen.prompt_id == one.prompt_id and seen.tag is None
    metadata = seen.metadata()
    assert metadata is not None and EXTENSION_URI in metadata
    assert stored_task(None) is None and past_prompts(None, PromptBook()) == []


def test_whole_numbers_come_back_as_ints() -> None:
    assert whole_numbers({"a": [1.0, 2.5, {"b": 3.0}], "c": 2.0**60, "d": True}) == {
        "a": [1, 2.5, {"b": 3}],
        "c": 2.0**60,
        "d": True,
    }
