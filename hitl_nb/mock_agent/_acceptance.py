"""Answers to an open prompt: exactly-once acceptance, then the task moves on.

:class:`Acceptance` is the part of the agent that takes an answer. Every check comes
before any change (§Acceptance and rejection), so of many racing answers the first
valid one is accepted and every later one gets 409; an invalid payload gets 422 with
its ``validation_errors`` and the prompt stays open. On acceptance the prompt closes
and the script resumes the task (AC-4: out of INPUT_REQUIRED at once), unless a fault
mode holds it back. It sees the task book as :class:`Book` and the script as
:class:`Prompts`.
"""

from __future__ import annotations

from typing import Any, Protocol

from hitl_nb.a2a import Message
from hitl_nb.errors import PromptConflict, ResponseInvalid
from hitl_nb.mock_agent._faults import Faults
from hitl_nb.mock_agent._records import TaskRecord
from hitl_nb.mock_agent._task_book import Commits, Defers, Keeps
from hitl_nb.spec import EXTENSION_URI
from hitl_nb.validation import validate_payload

__all__ = ["OMIT_ERRORS", "Acceptance", "Book", "Prompts"]

#: Set in a ResponseInvalid's ``data`` when the 422-without-errors fault drops the list.
OMIT_ERRORS = "omit_validation_errors"


class Book(Keeps, Commits, Defers, Protocol):
    """What acceptance does with the task book: keep the answer, store the change, hold
    the resume back (a fault mode)."""


class Prompts(Protocol):
    """What acceptance asks of the script."""

    def close_prompt(self, rec: TaskRecord, status: str) -> None:
        """The prompt is over (``"answered"``)."""

    def resume(self, rec: TaskRecord) -> None:
        """Move the task on after an accepted answer."""


class Acceptance:
    """Takes answers to open prompts, exactly once each."""

    def __init__(self, book: Book, prompts: Prompts, faults: Faults) -> None:
        self.book = book
        self.prompts = prompts
        self.faults = faults

    def answer(
        self, rec: TaskRecord, message: Message, prompt_id: str, payload: dict[str, Any]
    ) -> tuple[TaskRecord, int]:
        """Accept ``payload`` for ``prompt_id``, or raise PromptConflict (409) /
        ResponseInvalid (422) with nothing changed; returns the task and the outbox id
        before the change."""
        # Every check comes before any change (§Acceptance and rejection).
        open_ = rec.prompt
        if open_ is None or open_.prompt_id != prompt_id:
            if self.faults.accept_duplicates and prompt_id == rec.last_answered:
                return rec, rec.outbox.last_id
            # §Acceptance and rejection: the message is the spec's (the class's
            # default), the detail ours.
            raise PromptConflict(
                data={
                    "extension": EXTENSION_URI,
                    "prompt_id": prompt_id,
                    "task_id": rec.id,
                    "detail": f"prompt_id {prompt_id} is unknown or already answered "
                    f"for task {rec.id}",
                },
            )
        issues = validate_payload(open_.envelope["response_schema"], payload)
        if issues:
            data: dict[str, Any] = {
                "extension": EXTENSION_URI,
                "prompt_id": prompt_id,
                "task_id": rec.id,
                "detail": f"payload does not match the response_schema of prompt {prompt_id}",
            }
            # Sorted by member, so the same bad payload always gives the same answer.
            errors = [i.to_json() for i in sorted(issues, key=lambda i: (i.path, i.keyword))]
            if self.faults.errors_422_without_list:
                data[OMIT_ERRORS] = True
                errors = []
            raise ResponseInvalid(data=data, validation_errors=errors)
        start = rec.outbox.last_id
        self.prompts.close_prompt(rec, "answered")
        rec.last_answered = prompt_id
        rec.answers.append(payload)
        rec.step_index += 1
        self.book.keep(rec, message)
        if self.faults.never_resume:
            pass
        elif self.faults.slow_resume_ms:
            self.book.later(rec, self.prompts.resume, self.faults.slow_resume_ms / 1000)
        else:
            self.prompts.resume(rec)
        self.book.commit(rec)
        return rec, start
