"""How a mock-agent task moves through its scenario: the start, prompts, deadlines, the end.

:class:`Script` is the part of the agent that knows the scenarios. It plans a new task
from the client's first message (which scenario, its options, its steps: every refusal
comes before the task exists), starts it, opens each step's prompt (a fresh prompt_id,
an envelope that passes the strict check, its deadline armed), carries on after an
accepted answer and ends the task with the scenario's ``finish``. It changes tasks
through the task book only, seen as :class:`Book`; how an answer is accepted is
:mod:`~hitl_nb.mock_agent._acceptance`'s concern, which calls :meth:`Script.resume`.
"""

from __future__ import annotations

import copy
import functools
import logging
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

from hitl_nb.a2a import Artifact, Message, Part, Role, TaskState
from hitl_nb.errors import InvalidParams
from hitl_nb.mock_agent._faults import Faults
from hitl_nb.mock_agent._records import OpenPrompt, Plan, TaskRecord
from hitl_nb.mock_agent._scenarios import DEFAULT_SCENARIO, ScenarioRegistry, Step, TaskEnd
from hitl_nb.mock_agent._task_book import Alarms, Commits, Defers, Emits
from hitl_nb.spec import EXTENSION_URI, check_prompt
from hitl_nb.validation import compile_schema

__all__ = ["TIMEOUT_KEY", "Book", "Script"]

log = logging.getLogger("hitl_nb.mock_agent")

#: Status-update metadata key of the deadline signal (spec S-4; the extension leaves
#: the event to the transport): ``{"promptId", "deadline", "policy"}``.
TIMEOUT_KEY = "hitlTimeout"
_OVERSIZE_PAD = 70_000


class Book(Emits, Commits, Defers, Alarms, Protocol):
    """What the script does with the task book: move tasks, store their changes, run
    their next steps later, arm deadlines."""


class Script:
    """The scenario side of the agent: new tasks, their prompts, deadlines and end."""

    def __init__(
        self,
        book: Book,
        scenarios: ScenarioRegistry,
        faults: Faults,
        defaults: Mapping[str, Mapping[str, Any]],
    ) -> None:
        self.book = book
        self.scenarios = scenarios
        self.faults = faults
        #: Options a scenario gets unless the first message says otherwise.
        self.defaults = defaults
        #: Every prompt id issued (S-5), across restarts when the store is durable.
        self.issued: set[str] = set()
        self._reused_id: str | None = None

    # -- a new task -----------------------------------------------------------------------

    def plan(self, message: Message) -> Plan:
        """The scenario, options and steps the first ``message`` asks for
        (InvalidParams naming what is wrong; nothing exists yet to undo)."""
        name, options = self._pick_scenario(message)
        scenario = self.scenarios.get(name)
        assert scenario is not None
        merged = self._merged(name, options)
        try:
            steps = scenario.steps_for(merged)
        except ValueError as exc:
            raise InvalidParams(f"scenario {name!r}: {exc}") from None
        _start_delay(merged)
        return Plan(name, options, steps)

    def begin(self, rec: TaskRecord, message: Message) -> None:
        """Start a planned task: WORKING, then its first prompt."""
        delay = _start_delay(self._merged(rec.scenario, rec.options))
        if delay:
            # An agent that thinks before its first question: WORKING with a word about
            # it, the first prompt ``delay`` seconds later.
            self.book.emit_status(rec, TaskState.WORKING, "Preparing the first question.")
            self.book.later(rec, self._first_step, delay)
        else:
            self.book.emit_status(rec, TaskState.WORKING, None)
            self._advance(rec)

    def _pick_scenario(self, message: Message) -> tuple[str, dict[str, Any]]:
        for i, part in enumerate(message.parts):
            if isinstance(part.data, dict) and "scenario" in part.data:
                name = part.data["scenario"]
                if not isinstance(name, str) or self.scenarios.get(name) is None:
                    raise InvalidParams(
                        f"/message/parts/{i}/data/scenario: unknown scenario {name!r}; "
                        f"known: {', '.join(self.scenarios.names())}"
                    )
                return name, {k: v for k, v in part.data.items() if k != "scenario"}
        for part in message.parts:
            if part.text is not None and self.scenarios.get(part.text.strip()) is not None:
                return part.text.strip(), {}
        return DEFAULT_SCENARIO, {}

    def _merged(self, name: str, options: Mapping[str, Any]) -> dict[str, Any]:
        return {**self.defaults.get(name, {}), **options}

    # -- after a restart ------------------------------------------------------------------

    def remember(self, prompt_ids: Iterable[str]) -> None:
        """Prompt ids issued before a restart: never issued again (S-5)."""
        self.issued.update(prompt_ids)

    def steps_of(self, name: str, options: dict[str, Any]) -> list[Step]:
        """The steps of a stored task of scenario ``name`` (none when it is not
        registered here: the task keeps its state but asks nothing more)."""
        scenario = self.scenarios.get(name)
        if scenario is None:
            log.warning("a stored task's scenario %r is not registered here", name)
            return []
        return scenario.steps_for(self._merged(name, options))

    def pick_up(self, rec: TaskRecord) -> None:
        """Carry on with a stored task once the agent serves again: arm its open
        prompt's deadline, or run the step after an answer accepted just before a stop."""
        if rec.prompt is not None and not rec.prompt.timed_out:
            self._arm_deadline(rec)
        elif rec.prompt is None and rec.task.status.state is TaskState.WORKING:
            self.book.later(rec, self._next_step)

    # -- moving on ------------------------------------------------------------------------

    def resume(self, rec: TaskRecord) -> None:
        """After an accepted answer: out of INPUT_REQUIRED at once (§Acceptance and
        rejection / AC-4); the next step runs on the next loop turn, so subscribers
        get WORKING first."""
        if not rec.task.status.state.is_terminal:
            self.book.emit_status(rec, TaskState.WORKING, None)
            self.book.later(rec, self._next_step)

    def _first_step(self, rec: TaskRecord) -> None:
        if rec.step_index == 0:  # else the task moved on (or ended) while it waited
            self._step(rec, "the first step")

    def _next_step(self, rec: TaskRecord) -> None:
        self._step(rec, "the next step")

    def _step(self, rec: TaskRecord, which: str) -> None:
        if rec.task.status.state is not TaskState.WORKING:
            return  # canceled (or failed) meanwhile
        try:
            self._advance(rec)
        except Exception as exc:
            # A step that breaks fails the task; before, it stayed WORKING and a
            # blocking send waiting for it never returned.
            log.exception("scenario %s: %s failed", rec.scenario, which)
            self.book.emit_status(rec, TaskState.FAILED, f"The scenario failed: {exc}")

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
            self.book.add_artifact(rec, artifact)
        self.book.emit_status(rec, outcome.state, outcome.text)

    # -- prompts --------------------------------------------------------------------------

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
                self.book.emit_status(
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
        self.book.emit_status(rec, TaskState.INPUT_REQUIRED, msg)
        self._arm_deadline(rec)

    def close_prompt(self, rec: TaskRecord, status: str) -> None:
        """The task's prompt is over: ``"answered"`` or ``"closed"`` (its id stays
        issued, and refused from now on), its deadline disarmed."""
        if rec.prompt is not None:
            rec.prompt_rows.append((rec.prompt.prompt_id, rec.id, status))
            rec.prompt = None
        if rec.timer is not None:
            rec.timer.cancel()
            rec.timer = None

    def _arm_deadline(self, rec: TaskRecord) -> None:
        if rec.prompt is None or rec.prompt.deadline_at is None:
            return
        delay = (rec.prompt.deadline_at - datetime.now(timezone.utc)).total_seconds()
        passed = functools.partial(self._deadline_passed, rec, rec.prompt.prompt_id)
        rec.timer = self.book.alarm(delay, passed)

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
            self.close_prompt(rec, "closed")
            self.book.emit_status(
                rec, TaskState.FAILED, "The deadline passed before anyone answered.", signal
            )
        else:
            # S-4: the prompt stays open; the signal rides on an unchanged status.
            p.timed_out = True
            self.book.signal(rec, signal)
        self.book.commit(rec)


def _start_delay(options: Mapping[str, Any]) -> float:
    """The ``start_delay_seconds`` option (any scenario): 0 when absent."""
    raw = options.get("start_delay_seconds")
    if raw is None:
        return 0.0
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 <= raw <= 3600:
        raise InvalidParams(
            f"start_delay_seconds must be a number of seconds from 0 to 3600; got {raw!r}"
        )
    return float(raw)
