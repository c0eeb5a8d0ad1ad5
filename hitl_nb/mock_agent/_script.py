"""How a mock-agent task moves through its scenario: prompts, deadlines, the end.

A mixin of :class:`~hitl_nb.mock_agent._core.AgentCore`, kept apart so the core reads as
the request side (send, answer, cancel, list, persistence) and this as the script side.
Runs on the agent's loop only, like the core.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import uuid
from abc import ABC, abstractmethod
from datetime import datetime, timedelta, timezone
from typing import Any

from hitl_nb.a2a import (
    Artifact,
    Message,
    Part,
    Role,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from hitl_nb.mock_agent._faults import Faults
from hitl_nb.mock_agent._records import OpenPrompt, TaskRecord
from hitl_nb.mock_agent._scenarios import ScenarioRegistry, Step, TaskEnd
from hitl_nb.spec import EXTENSION_URI, check_prompt
from hitl_nb.validation import compile_schema

__all__ = ["TIMEOUT_KEY", "ScriptSteps", "now_iso"]

log = logging.getLogger("hitl_nb.mock_agent")

#: Status-update metadata key of the deadline signal (spec S-4; the extension leaves
#: the event to the transport): ``{"promptId", "deadline", "policy"}``.
TIMEOUT_KEY = "hitlTimeout"
_OVERSIZE_PAD = 70_000


def now_iso() -> str:
    """The current UTC time as RFC 3339 with milliseconds and ``Z``."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ScriptSteps(ABC):
    """The scenario side of the agent core (a mixin; see the module docstring).

    The class using it provides the attributes below and :meth:`_commit`.
    """

    scenarios: ScenarioRegistry
    faults: Faults
    issued: set[str]
    _reused_id: str | None
    _loop: asyncio.AbstractEventLoop | None

    @abstractmethod
    def _commit(self, rec: TaskRecord) -> None:
        """Persist ``rec``'s change: its record, new outbox events and prompt rows."""

    def _advance(self, rec: TaskRecord) -> None:
        if rec.step_index < len(rec.steps):
            self._open_prompt(rec, rec.steps[rec.step_index])
            return
        scenario = self.scenarios.get(rec.scenario)
        try:
            outcome = scenario.finish(rec.answers) if scenario else TaskEnd()
        except Exception as exc:  # a user's finish() failing fails the task, not the agent
            log.exception("scenario %s: finish() failed", rec.scenario)
            outcome = TaskEnd(TaskState.FAILED, f"The scenario failed: {exc}")
        for i, data in enumerate(outcome.artifacts):
            artifact = Artifact(str(uuid.uuid4()), [Part(data=dict(data))], name=f"result-{i + 1}")
            rec.task.artifacts.append(artifact)
            rec.outbox.append(
                TaskArtifactUpdateEvent(rec.id, rec.task.context_id, artifact, last_chunk=True)
            )
        self._emit_status(rec, outcome.state, outcome.text)

    def _mint_prompt_id(self) -> str:
        if self.faults.reuse_prompt_ids:
            if self._reused_id is None:
                self._reused_id = next(iter(sorted(self.issued)), None) or str(uuid.uuid4())
            return self._reused_id
        while True:  # S-5: unique within the agent's lifetime, across restarts when durable
            pid = str(uuid.uuid4())
            if pid not in self.issued:
                return pid

    def _open_prompt(self, rec: TaskRecord, step: Step) -> None:
        pid = self._mint_prompt_id()
        envelope: dict[str, Any] = {
            "prompt_id": pid,
            "prompt": step.prompt,
            "response_schema": copy.deepcopy(dict(step.response_schema)),
        }
        if step.deadline_seconds is not None:
            at = datetime.now(timezone.utc) + timedelta(seconds=step.deadline_seconds)
            envelope["deadline"] = at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        if step.allowed_responders is not None:
            envelope["allowed_responders"] = list(step.allowed_responders)
        if self.faults.oversize_schema:
            envelope["response_schema"]["description"] = "x" * _OVERSIZE_PAD
        else:
            # §Prompt Envelope: every envelope this agent emits passes the strict check.
            errors = [f for f in check_prompt(envelope, mode="strict") if f.severity == "error"]
            if not errors:
                try:
                    compile_schema(envelope["response_schema"])
                except Exception as exc:
                    errors = [exc]  # type: ignore[list-item]
            if errors:
                log.error("scenario %s emitted a bad envelope: %s", rec.scenario, errors)
                self._emit_status(
                    rec, TaskState.FAILED, "The scenario's prompt is not valid: " + str(errors[0])
                )
                return
        self.issued.add(pid)
        rec.prompt = OpenPrompt(pid, envelope, step.on_deadline)
        rec.prompt_rows.append((pid, rec.id, "open"))
        text = f"{step.prompt}\n(Answer with a data part holding a JSON object.)"
        msg = Message(
            str(uuid.uuid4()),
            Role.AGENT,
            [Part(text=text)],
            task_id=rec.id,
            context_id=rec.task.context_id,
            metadata={EXTENSION_URI: envelope},
            extensions=[EXTENSION_URI],
        )
        self._emit_status(rec, TaskState.INPUT_REQUIRED, msg)
        self._arm_deadline(rec)

    def _close_prompt(self, rec: TaskRecord, status: str) -> None:
        if rec.prompt is not None:
            rec.prompt_rows.append((rec.prompt.prompt_id, rec.id, status))
            rec.prompt = None
        if rec.timer is not None:
            rec.timer.cancel()
            rec.timer = None

    def _arm_deadline(self, rec: TaskRecord) -> None:
        if self._loop is None or rec.prompt is None or rec.prompt.deadline_at is None:
            return
        delay = (rec.prompt.deadline_at - datetime.now(timezone.utc)).total_seconds()
        rec.timer = self._loop.call_later(
            max(delay, 0.0), self._deadline_passed, rec, rec.prompt.prompt_id
        )

    def _deadline_passed(self, rec: TaskRecord, prompt_id: str) -> None:
        rec.timer = None
        p = rec.prompt
        if p is None or p.prompt_id != prompt_id or p.timed_out:
            return
        signal = {
            TIMEOUT_KEY: {
                "promptId": prompt_id,
                "deadline": p.envelope.get("deadline"),
                "policy": p.on_deadline,
            }
        }
        if p.on_deadline == "fail":
            self._close_prompt(rec, "closed")
            self._emit_status(
                rec, TaskState.FAILED, f"The deadline of prompt {prompt_id} passed.", signal
            )
        else:
            # S-4: the prompt stays open; the signal rides on an unchanged status.
            p.timed_out = True
            status = copy.copy(rec.task.status)
            rec.outbox.append(TaskStatusUpdateEvent(rec.id, rec.task.context_id, status, signal))
        self._commit(rec)

    def _emit_status(
        self,
        rec: TaskRecord,
        state: TaskState,
        message: Message | str | None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        if isinstance(message, str):
            message = Message(
                str(uuid.uuid4()),
                Role.AGENT,
                [Part(text=message)],
                task_id=rec.id,
                context_id=rec.task.context_id,
            )
        if message is not None:
            rec.task.history.append(message)
        rec.task.status = TaskStatus(state, message, now_iso())
        event = TaskStatusUpdateEvent(
            rec.id, rec.task.context_id, copy.copy(rec.task.status), metadata
        )
        rec.outbox.append(event)
