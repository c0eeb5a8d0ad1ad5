"""The prompts an agent asked, and the answers held for them until the executor takes them.

The task store is the source of truth for which prompt a task waits on: its status is
INPUT_REQUIRED and its status message carries the envelope. :class:`PromptBook` adds what
the store cannot say on its own:

- the prompt as it was asked (the schema with its own numbers and order, compiled once),
  so a prompt asked in this process is checked against exactly what was emitted; after a
  restart the envelope is read back from the store instead (:meth:`PromptBook.open_prompt`);
- **held answers**: an answer that passed the checks is held for its prompt until the
  executor takes it (:meth:`PromptBook.take`), so of two racing answers the second gets
  409 although the store still shows the prompt open (§Acceptance and rejection: "MUST NOT
  subsequently accept a second response for the same prompt_id"); an answer the SDK then
  refused for a reason of its own is let go (:meth:`PromptBook.release`);
- **closed prompts**: answered or cancelled here, until the store shows the task moved on.

Everything runs on the server's event loop: no locks, and no ``await`` between a check
and the hold it leads to.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hitl_nb._schema_in import settle_schema
from hitl_nb.errors import A2AError, MalformedPrompt
from hitl_nb.spec import EXTENSION_URI, PromptEnvelope

__all__ = ["TEXT_SCHEMA", "Asked", "Hold", "PromptBook", "StoredTask", "envelope_in"]

#: The response_schema of a question answered in words: the answer is ``{"text": ...}``.
#: A client that did not activate hitl-prompt/v1 may answer it with a plain text message.
TEXT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string", "title": "Answer", "minLength": 1}},
    "required": ["text"],
    "additionalProperties": False,
}

#: Metadata key (on the prompt's status message) of the executor's own reference to the
#: prompt, e.g. the LangGraph interrupt it stands for. camelCase: the A2A TCK checks
#: every key a response carries.
TAG_KEY = "hitlNbTag"

# Prompts closed here are remembered until this many more have closed: long enough for
# the store to show each task moved on (the executor's next status is written within
# milliseconds), bounded whatever the traffic.
_CLOSED_KEPT = 10_000


@dataclass(frozen=True)
class Asked:
    """A prompt this agent asked: its task, its envelope, how a plain answer is read.

    ``text``: the question is answered in words (:data:`TEXT_SCHEMA`), so a plain text
    message answers it too. ``tag``: the executor's own reference to the prompt (the
    LangGraph agent keeps the interrupt id there).
    """

    task_id: str
    envelope: PromptEnvelope
    tag: str | None = None

    @property
    def prompt_id(self) -> str:
        """The envelope's prompt_id."""
        return self.envelope.prompt_id

    @property
    def text(self) -> bool:
        """Is this a question answered in words?"""
        return self.envelope.response_schema == TEXT_SCHEMA


@dataclass
class Hold:
    """An answer that passed the checks, held for its prompt until the executor takes it."""

    asked: Asked
    message_id: str
    payload: dict[str, Any]
    taken: bool = False
    #: Set by an executor that refused the answer after all, having emitted nothing for
    #: it (LangGraph's own validation): the middleware answers with it.
    refusal: A2AError | None = None


@dataclass(frozen=True)
class StoredTask:
    """What the store says of a task: its context, whether it waits for input, the
    prompt_id and tag of the envelope in its status message, and (``metadata()``, read
    only when needed: it holds the whole schema) that message's metadata as JSON."""

    context_id: str
    input_required: bool
    prompt_id: str | None
    tag: str | None
    metadata: Callable[[], Mapping[str, Any] | None]

    @classmethod
    def from_json(
        cls, input_required: bool, metadata: Mapping[str, Any] | None, context_id: str = ""
    ) -> StoredTask:
        """From a status message's metadata already in JSON."""
        found = envelope_in(metadata)
        prompt_id = found[0].get("prompt_id") if found else None
        return cls(
            context_id,
            input_required,
            prompt_id if isinstance(prompt_id, str) else None,
            found[1] if found else None,
            lambda: metadata,
        )


def envelope_in(metadata: Mapping[str, Any] | None) -> tuple[dict[str, Any], str | None] | None:
    """``(envelope JSON, tag)`` from a status message's metadata (plain JSON), or None."""
    if not isinstance(metadata, Mapping):
        return None
    envelope = metadata.get(EXTENSION_URI)
    if not isinstance(envelope, dict):
        return None
    tag = metadata.get(TAG_KEY)
    return envelope, tag if isinstance(tag, str) else None


class PromptBook:
    """The prompts asked in this process, answers held for them, prompts closed here."""

    def __init__(self) -> None:
        self._asked: dict[str, Asked] = {}
        self._held: dict[str, Hold] = {}
        self._closed: OrderedDict[str, None] = OrderedDict()

    def record(self, asked: Asked) -> None:
        """``asked`` was just emitted."""
        self._asked[asked.prompt_id] = asked

    def open_prompt(self, task_id: str, stored: StoredTask) -> Asked | None:
        """The prompt a task waits on, from what the store says of it: its state is
        INPUT_REQUIRED and its status message carries an envelope of ours that is not
        closed here. The envelope itself is read only for a prompt not asked in this
        process (after a restart)."""
        if not stored.input_required or stored.prompt_id is None:
            return None
        if stored.prompt_id in self._closed:
            return None
        known = self._asked.get(stored.prompt_id)
        if known is not None:
            return known if known.task_id == task_id else None
        found = envelope_in(stored.metadata())
        return None if found is None else self.asked_from(task_id, *found)

    def asked_from(self, task_id: str, raw: dict[str, Any], tag: str | None) -> Asked | None:
        """The prompt an envelope read from the store stands for: as asked here, or read
        back after a restart (its schema settled: the store's protobuf ``Struct`` turned
        its integers into doubles). None: not a well-formed envelope of this task."""
        prompt_id = raw.get("prompt_id")
        if not isinstance(prompt_id, str):
            return None
        asked = self._asked.get(prompt_id)
        if asked is not None:
            return asked if asked.task_id == task_id else None
        raw = {**raw, "response_schema": settle_schema(raw.get("response_schema"))}
        try:
            envelope = PromptEnvelope.from_json(raw, mode="orchestrator")
        except MalformedPrompt:
            return None
        return Asked(task_id, envelope, tag)

    def is_held(self, prompt_id: str) -> bool:
        """Is an answer to ``prompt_id`` held (checked, not yet taken)?"""
        return prompt_id in self._held

    def hold(self, asked: Asked, message_id: str, payload: dict[str, Any]) -> Hold:
        """Hold a checked answer for ``asked`` (a payload of its own: parsed from this
        request); the caller checked it is not held."""
        held = Hold(asked, message_id, payload)
        self._held[asked.prompt_id] = held
        return held

    def release(self, held: Hold) -> None:
        """Let ``held`` go unless the executor took it (the request ended without)."""
        if not held.taken and self._held.get(held.asked.prompt_id) is held:
            del self._held[held.asked.prompt_id]

    def take(self, task_id: str, message_id: str) -> Hold | None:
        """The answer held for this task's message, taken: its prompt is now closed."""
        for prompt_id, held in self._held.items():
            if held.asked.task_id == task_id and held.message_id == message_id:
                held.taken = True
                del self._held[prompt_id]
                self.close(prompt_id)
                return held
        return None

    def refuse(self, held: Hold, error: A2AError) -> None:
        """The executor refused a taken answer after all, having emitted nothing for it:
        the prompt is open again, and the middleware answers the request with ``error``."""
        held.refusal = error
        self._closed.pop(held.asked.prompt_id, None)
        self._asked[held.asked.prompt_id] = held.asked

    def close(self, prompt_id: str) -> None:
        """``prompt_id`` is answered or cancelled: no answer is taken for it any more."""
        self._asked.pop(prompt_id, None)
        self._held.pop(prompt_id, None)
        self._closed[prompt_id] = None
        while len(self._closed) > _CLOSED_KEPT:
            self._closed.popitem(last=False)

    def close_task(self, task_id: str) -> None:
        """Every prompt of ``task_id`` is closed (the task was cancelled or ended)."""
        for prompt_id in [p for p, a in self._asked.items() if a.task_id == task_id]:
            self.close(prompt_id)
        for prompt_id in [p for p, h in self._held.items() if h.asked.task_id == task_id]:
            self.close(prompt_id)
