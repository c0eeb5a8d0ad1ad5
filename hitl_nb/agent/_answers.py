"""What a message to a waiting task offers as an answer, and the checks it must pass.

An answer is a message whose ``metadata.hitl_response_for`` names a prompt
(§Response Envelope). A client that did not activate the extension saw the question as
plain text; it answers the open prompt with a data part holding a JSON object, or with
text that is a JSON object, or, for a question asked in words, with any text
(:func:`plain_answer`). Every check of §Acceptance and rejection comes before anything
changes: an unknown or answered prompt is :class:`~hitl_nb.errors.PromptConflict`
(409 / -32010), a payload that does not validate is
:class:`~hitl_nb.errors.ResponseInvalid` (422 / -32011) with its ``validation_errors``,
bounded as S-2 asks (:mod:`hitl_nb.validation`).
"""

from __future__ import annotations

from typing import Any

from hitl_nb._json import parse_json
from hitl_nb.a2a import Message
from hitl_nb.errors import (
    BadJSON,
    PromptConflict,
    ResponseInvalid,
)
from hitl_nb.spec import EXTENSION_URI, RESPONSE_KEY
from hitl_nb.validation import MAX_PAYLOAD_BYTES

from ._prompts import Asked

__all__ = ["check_payload", "conflict", "plain_answer", "response_in"]


def response_in(message: Message) -> Any:
    """The raw ``hitl_response_for`` of a message (None when it carries none)."""
    return (message.metadata or {}).get(RESPONSE_KEY)


def plain_answer(message: Message, asked: Asked) -> dict[str, Any] | None:
    """The payload a message without ``hitl_response_for`` offers for ``asked``.

    A data part holding an object, else text that is a JSON object, else, for a question
    asked in words, the text itself (``{"text": ...}``). None: the message answers
    nothing (it is kept in the history and the prompt stays open).
    """
    for part in message.parts:
        if isinstance(part.data, dict):
            return part.data
    text = "\n".join(p.text for p in message.parts if p.text is not None).strip()
    if not text:
        return None
    if text.startswith("{"):
        try:
            value = parse_json(text, max_bytes=MAX_PAYLOAD_BYTES)
        except BadJSON:
            value = None
        if isinstance(value, dict):
            return value
    return {"text": text} if asked.text else None


def conflict(task_id: str, prompt_id: str) -> PromptConflict:
    """409 / -32010: ``prompt_id`` is not the open prompt of ``task_id``."""
    # §Acceptance and rejection: the message is the spec's (the class's default), the
    # detail ours.
    return PromptConflict(
        data={
            "extension": EXTENSION_URI,
            "prompt_id": prompt_id,
            "task_id": task_id,
            "detail": f"prompt_id {prompt_id} is unknown or already answered for task {task_id}",
        }
    )


def check_payload(asked: Asked, payload: Any) -> None:
    """ResponseInvalid (422 / -32011, the task stays INPUT_REQUIRED) unless ``payload``
    validates against the prompt's response_schema, within the S-2 bounds."""
    issues = asked.envelope.validate(payload)
    if not issues:
        return
    # Sorted by member, so the same bad payload always gets the same answer.
    errors = [i.to_json() for i in sorted(issues, key=lambda i: (i.path, i.keyword))]
    raise ResponseInvalid(
        data={
            "extension": EXTENSION_URI,
            "prompt_id": asked.prompt_id,
            "task_id": asked.task_id,
            "detail": f"payload does not match the response_schema of prompt {asked.prompt_id}",
        },
        validation_errors=errors,
    )
