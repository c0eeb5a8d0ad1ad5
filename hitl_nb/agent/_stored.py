"""A task as the SDK's task store keeps it, read for the extension.

Three readings of one protobuf ``Task``:

- :func:`stored_task`: what the gate checks an answer against (its context, whether it
  waits for input, its status message's metadata as plain JSON);
- :func:`task_json`: the task on the wire, as A2A 1.0 or 0.3 writes it (the middleware
  opens a stream on an existing task with it);
- :func:`past_prompts`: the prompts a task asked before, each with the answer that
  closed it, in order, so an executor that runs again after a restart is given back the
  answers it already had (``ask`` returns them without asking again).

Which message answered which prompt: a prompt stays open until answered, and a message
that does not answer it is followed by the same prompt asked again (the executor re-emits
it, so the message is kept in the history). So the answer to a prompt is the first user
message after the *last* time the prompt was emitted; a prompt with no user message after
its last emission is still open.

The store keeps metadata as a protobuf ``Struct``, whose numbers are doubles: an answer
read back has its whole numbers turned back into ints (:func:`whole_numbers`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from a2a.types import SendMessageConfiguration, Task, TaskState
from a2a.utils.task import apply_history_length
from google.protobuf.json_format import MessageToDict

from hitl_nb.a2a import CODEC_V1, Message, Role
from hitl_nb.errors import WireDecodeError
from hitl_nb.spec import EXTENSION_URI

from ._answers import plain_answer, response_in
from ._prompts import TAG_KEY, Asked, PromptBook, StoredTask, envelope_in

__all__ = ["Past", "past_prompts", "stored_task", "task_json", "whole_numbers"]

# Doubles hold every integer up to 2**53 exactly; beyond, a float stays a float.
_EXACT = 2**53


@dataclass(frozen=True)
class Past:
    """A prompt a task asked before, and its answer (None: still open)."""

    asked: Asked
    answer: dict[str, Any] | None


def _plain(task: Task) -> dict[str, Any]:
    out: dict[str, Any] = MessageToDict(task)
    return out


def stored_task(found: Any) -> StoredTask | None:
    """The gate's reading of what the store's ``get`` returned (None: no such task).

    Only the envelope's ``prompt_id`` and the tag are read at once, from the protobuf
    ``Struct``; the whole metadata (the schema) is converted only if the prompt was not
    asked in this process."""
    task = getattr(found, "task", found)  # a versioned store wraps the task
    if not isinstance(task, Task):
        return None
    message = task.status.message if task.status.HasField("message") else None
    fields = message.metadata.fields if message is not None else {}
    envelope = fields.get(EXTENSION_URI)
    prompt_id = tag = None
    if envelope is not None and envelope.HasField("struct_value"):
        value = envelope.struct_value.fields.get("prompt_id")
        if value is not None and value.HasField("string_value"):
            prompt_id = value.string_value
    if TAG_KEY in fields and fields[TAG_KEY].HasField("string_value"):
        tag = fields[TAG_KEY].string_value

    def metadata() -> dict[str, Any] | None:
        if message is None or not message.HasField("metadata"):
            return None
        out: dict[str, Any] = MessageToDict(message.metadata)
        return out

    return StoredTask(
        context_id=task.context_id,
        input_required=task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED,
        prompt_id=prompt_id,
        tag=tag,
        metadata=metadata,
    )


def task_json(found: Any, version: str, history_length: int | None = None) -> dict[str, Any] | None:
    """What the store's ``get`` returned, as the JSON of a Task in A2A ``version`` ("1.0":
    ProtoJSON, "0.3": the SDK's compat model), the history cut to ``history_length`` as
    the SDK cuts it (None: whole). None: no such task."""
    task = getattr(found, "task", found)  # a versioned store wraps the task
    if not isinstance(task, Task):
        return None
    if history_length is not None:
        task = apply_history_length(task, SendMessageConfiguration(history_length=history_length))
    if version == "0.3":
        from a2a.compat.v0_3.conversions import to_compat_task

        old: dict[str, Any] = to_compat_task(task).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        return old
    out: dict[str, Any] = MessageToDict(task)
    return out


def whole_numbers(value: Any) -> Any:
    """``value`` with every integral float (up to 2**53) turned back into an int."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= _EXACT:
        return int(value)
    if isinstance(value, dict):
        return {k: whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole_numbers(v) for v in value]
    return value


def _message(raw: Any) -> Message | None:
    try:
        return CODEC_V1.decode_message(raw)
    except WireDecodeError:
        return None


def past_prompts(task: Task | None, book: PromptBook) -> list[Past]:
    """The prompts ``task`` asked, in order, each with the answer that closed it."""
    if task is None:
        return []
    plain = _plain(task)
    said = list(plain.get("history", []))
    status = plain.get("status", {})
    if isinstance(status.get("message"), dict):
        said.append(status["message"])
    order: list[str] = []
    last: dict[str, int] = {}
    envelopes: dict[str, tuple[dict[str, Any], str | None]] = {}
    messages: list[Message | None] = [_message(m) for m in said]
    for i, message in enumerate(messages):
        if message is None or message.role is not Role.AGENT:
            continue
        found = envelope_in(message.metadata)
        prompt_id = found[0].get("prompt_id") if found else None
        if found is None or not isinstance(prompt_id, str):
            continue
        if prompt_id not in last:
            order.append(prompt_id)
            envelopes[prompt_id] = found
        last[prompt_id] = i
    past = []
    for prompt_id in order:
        raw, tag = envelopes[prompt_id]
        asked = book.asked_from(task.id, raw, tag)
        if asked is None:
            continue  # not an envelope of ours: nothing answers it through the extension
        answer = None
        for message in messages[last[prompt_id] + 1 :]:
            if message is not None and message.role is Role.USER:
                answer = _answer_of(message, asked)
                break
        past.append(Past(asked, answer))
    return past


def _answer_of(message: Message, asked: Asked) -> dict[str, Any] | None:
    """The payload with which ``message`` answered ``asked``."""
    raw = response_in(message)
    if isinstance(raw, dict):
        payload = raw.get("payload")
        answer = payload if raw.get("prompt_id") == asked.prompt_id else None
    else:
        answer = plain_answer(message, asked)
    return whole_numbers(answer) if isinstance(answer, dict) else None
