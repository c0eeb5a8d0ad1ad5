"""Answers to an open prompt: exactly-once acceptance, then the task moves on.

A mixin of :class:`~hitl_nb.mock_agent._core.AgentCore` (the request side) built on
:class:`~hitl_nb.mock_agent._script.ScriptSteps` (the script side): every check of an
answer comes before any change (§Acceptance and rejection), so the first valid answer is
accepted and every later one gets 409; an invalid payload gets 422 with its
``validation_errors``. On acceptance the task leaves INPUT_REQUIRED at once (AC-4) and
the rest of the script runs on the next loop turn. Runs on the agent's loop only.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from abc import abstractmethod
from typing import Any

from hitl_nb.a2a import Message, TaskState
from hitl_nb.errors import PromptConflict, ResponseInvalid
from hitl_nb.mock_agent._records import TaskRecord
from hitl_nb.mock_agent._script import ScriptSteps
from hitl_nb.spec import EXTENSION_URI
from hitl_nb.validation import validate_payload

__all__ = ["OMIT_ERRORS", "AcceptanceSteps"]

log = logging.getLogger("hitl_nb.mock_agent")

#: Set in a ResponseInvalid's ``data`` when the 422-without-errors fault drops the list.
OMIT_ERRORS = "omit_validation_errors"


class AcceptanceSteps(ScriptSteps):
    """The answer side of the agent core (a mixin; see the module docstring).

    The class using it provides :attr:`loop`, :meth:`_wake` and :meth:`_commit`.
    """

    @property
    @abstractmethod
    def loop(self) -> asyncio.AbstractEventLoop:
        """The serving loop."""

    @abstractmethod
    def _wake(self, rec: TaskRecord) -> None:
        """Release blocking sends when nothing is pending."""

    def _answer(
        self, rec: TaskRecord, message: Message, prompt_id: str, payload: dict[str, Any]
    ) -> tuple[TaskRecord, int]:
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
        self._close_prompt(rec, "answered")
        rec.last_answered = prompt_id
        rec.answers.append(payload)
        rec.step_index += 1
        stored = copy.copy(message)
        stored.context_id = rec.task.context_id
        rec.task.history.append(stored)
        if self.faults.never_resume:
            pass
        elif self.faults.slow_resume_ms:
            rec.pending += 1
            self.loop.call_later(self.faults.slow_resume_ms / 1000, self._resume, rec, True)
        else:
            self._resume(rec, False)
        self._commit(rec)
        return rec, start

    def _resume(self, rec: TaskRecord, delayed: bool) -> None:
        if delayed:
            rec.pending -= 1
        if not rec.task.status.state.is_terminal:
            # §Acceptance and rejection / AC-4: out of INPUT_REQUIRED at once. The rest of
            # the script runs on the next loop turn, so subscribers get WORKING first.
            self._emit_status(rec, TaskState.WORKING, None)
            if self._loop is not None:
                rec.pending += 1
                self._loop.call_soon(self._continue, rec)
            else:
                self._advance(rec)
        if delayed:
            self._commit(rec)
        self._wake(rec)

    def _continue(self, rec: TaskRecord) -> None:
        self._run_step(rec, "the next step")

    def _run_step(self, rec: TaskRecord, which: str, *, first: bool = False) -> None:
        """Run the task's next step (a call the loop scheduled); ``first``: only if no
        step has run yet."""
        rec.pending -= 1
        try:
            working = rec.task.status.state is TaskState.WORKING
            if working and (not first or rec.step_index == 0):
                try:
                    self._advance(rec)
                except Exception as exc:
                    # A step that breaks fails the task; before, it stayed WORKING and a
                    # blocking send waiting for it never returned.
                    log.exception("scenario %s: %s failed", rec.scenario, which)
                    self._emit_status(rec, TaskState.FAILED, f"The scenario failed: {exc}")
                self._commit(rec)
        finally:
            self._wake(rec)
