"""The prompts an agent asked and the answers held for them: exactly once, whatever the
order of checks, takes and releases."""

from __future__ import annotations

from hitl_nb.agent._envelope import build_envelope
from hitl_nb.agent._prompts import TAG_KEY, Asked, PromptBook, StoredTask
from hitl_nb.errors import ResponseInvalid
from hitl_nb.spec import EXTENSION_URI

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}}


def test_a_held_answer_is_taken_once_then_the_prompt_is_closed() -> None:
    book = PromptBook()
    asked = Asked("t1", build_envelope("n?", SCHEMA))
    book.record(asked)
    meta = {EXTENSION_URI: asked.envelope.to_json()}
    assert book.open_prompt("t1", StoredTask.from_json(True, meta)) is asked
    assert book.open_prompt("t2", StoredTask.from_json(True, meta)) is None  # another task's prompt
    assert book.open_prompt("t1", StoredTask.from_json(False, meta)) is None  # not waiting
    held = book.hold(asked, "m1", {"n": 1})
    assert book.is_held(asked.prompt_id)
    assert book.take("t1", "m2") is None  # another message
    assert book.take("t1", "m1") is held and held.taken
    assert book.take("t1", "m1") is None
    assert (
        book.open_prompt("t1", StoredTask.from_json(True, meta)) is None
    )  # closed until the store moves on
    book.release(held)  # after a take: nothing to let go
    assert not book.is_held(asked.prompt_id)


def test_an_answer_the_sdk_refused_is_let_go() -> None:
    book = PromptBook()
    asked = Asked("t1", build_envelope("n?", SCHEMA))
    held = book.hold(asked, "m1", {"n": 1})
    book.release(held)
    assert not book.is_held(asked.prompt_id) and book.take("t1", "m1") is None


def test_a_refused_answer_reopens_its_prompt() -> None:
    book = PromptBook()
    asked = Asked("t1", build_envelope("n?", SCHEMA), tag="interrupt-1")
    held = book.hold(asked, "m1", {"n": 1})
    assert book.take("t1", "m1") is held
    book.refuse(held, ResponseInvalid())
    meta = {EXTENSION_URI: asked.envelope.to_json(), TAG_KEY: "interrupt-1"}
    assert book.open_prompt("t1", StoredTask.from_json(True, meta)) is asked
    assert isinstance(held.refusal, ResponseInvalid)


def test_a_prompt_asked_before_a_restart_is_read_back_with_its_numbers_settled() -> None:
    book = PromptBook()
    raw = build_envelope("n?", {"type": "object", "properties": {"s": {"maxLength": 3}}}).to_json()
    raw["response_schema"]["properties"]["s"]["maxLength"] = 3.0  # as a protobuf Struct has it
    asked = book.open_prompt("t9", StoredTask.from_json(True, {EXTENSION_URI: raw, TAG_KEY: "i-7"}))
    assert asked is not None and asked.tag == "i-7" and asked.task_id == "t9"
    assert type(asked.envelope.response_schema["properties"]["s"]["maxLength"]) is int
    assert (
        book.open_prompt("t9", StoredTask.from_json(True, {EXTENSION_URI: {"prompt_id": 5}}))
        is None
    )
    assert book.open_prompt("t9", StoredTask.from_json(True, {"other": raw})) is None
