"""Transcripts: a conversation with an agent as plain JSON, to replay it or to serve it.

:meth:`Transcript.record` talks to an agent: it sends the first message, answers each
prompt with the next of the given answers (sent as they are, even when the client
would refuse them, so an agent's 422 is recorded too) and writes down what happened:
each prompt as the agent asked it (question, ``response_schema``, responders, whether
it had a deadline), each answer, what the agent made of it (accepted, or the error and
its ``validation_errors``), the task's state after each step, and how the task ended
(state, final text, artifacts).

:meth:`Transcript.replay` does the same again against a live agent and reports the
first difference in states, prompts, schemas or errors. Ids, timestamps and key order
are ignored (UUIDs and RFC 3339 times inside strings compare equal; objects compare
without order); validation errors are compared by path and keyword, not wording.

:meth:`Transcript.scenario` turns it into a scripted :class:`~hitl_nb.mock_agent.MockAgent`
scenario, and :meth:`Transcript.mock_agent` makes a mock agent that plays it, so the
notebook side can be tested offline against what a real agent did.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hitl_nb.a2a import Task, TaskState
from hitl_nb.client import MalformedPromptEvent, PromptEvent, SyncHitlClient, prompt_of
from hitl_nb.errors import A2AError, HitlError, ResponseInvalid
from hitl_nb.mock_agent import (
    BUILTIN_SCENARIOS,
    DEFAULT_SCENARIO,
    MockAgent,
    Scenario,
    Step,
    TaskEnd,
)

__all__ = ["Difference", "Replay", "Transcript", "TranscriptError"]

FORMAT = "hitl-nb transcript"
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?")
#: Steps a recording or replay takes at most (an agent that never stops asking).
MAX_STEPS = 100

Answers = Sequence[Any] | Callable[[PromptEvent], Any]


class TranscriptError(ValueError):
    """A transcript file or object that is not a transcript (names what is wrong)."""


def normalize(value: Any) -> Any:
    """``value`` with ids and timestamps inside strings replaced, for comparison."""
    if isinstance(value, str):
        return _TIME.sub("<time>", _UUID.sub("<uuid>", value))
    if isinstance(value, list):
        return [normalize(v) for v in value]
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    return value


def _first_difference(expected: Any, got: Any, pointer: str = "") -> str | None:
    """The JSON Pointer of the first place where two JSON values differ, or None."""
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in sorted(set(expected) | set(got)):
            if key not in expected or key not in got:
                return f"{pointer}/{key}"
            inner = _first_difference(expected[key], got[key], f"{pointer}/{key}")
            if inner is not None:
                return inner
        return None
    if isinstance(expected, list) and isinstance(got, list):
        for i, (a, b) in enumerate(zip(expected, got, strict=False)):
            inner = _first_difference(a, b, f"{pointer}/{i}")
            if inner is not None:
                return inner
        return None if len(expected) == len(got) else f"{pointer}/{min(len(expected), len(got))}"
    return None if expected == got and type(expected) is type(got) else (pointer or "/")


def _prompt(event: PromptEvent | MalformedPromptEvent | None) -> dict[str, Any] | None:
    if isinstance(event, PromptEvent):
        env = event.envelope
        return {
            "prompt": env.prompt,
            "response_schema": env.response_schema,
            "allowed_responders": env.to_json().get("allowed_responders"),
            "deadline": env.deadline is not None,
        }
    if isinstance(event, MalformedPromptEvent):
        return {"malformed": event.reason}
    return None


def _final(task: Task) -> dict[str, Any]:
    message = task.status.message
    texts = [p.text for p in message.parts if p.text is not None] if message else []
    artifacts = []
    for artifact in task.artifacts:
        for part in artifact.parts:
            if part.has_data:
                artifacts.append(part.data)
            elif part.text is not None:
                artifacts.append(part.text)
    return {"state": task.status.state.name, "text": "\n".join(texts), "artifacts": artifacts}


def _error(exc: HitlError) -> dict[str, Any]:
    out: dict[str, Any] = {"error": type(exc).__name__}
    if isinstance(exc, A2AError):
        out["code"] = exc.code
    if isinstance(exc, ResponseInvalid):
        out["validation_errors"] = [
            {"path": e.get("path", ""), "keyword": e.get("keyword", "")}
            for e in exc.validation_errors
        ]
    return out


@dataclass(frozen=True)
class Difference:
    """Where a replay first differed: the step, what differed, both values and, inside
    them, the JSON Pointer of the first difference."""

    step: int
    what: str
    expected: Any
    got: Any
    pointer: str = ""

    def __str__(self) -> str:
        where = f" at {self.pointer}" if self.pointer and self.pointer != "/" else ""
        return (
            f"step {self.step}: the {self.what} differs{where}: expected "
            f"{json.dumps(self.expected)[:300]}, got {json.dumps(self.got)[:300]}"
        )


@dataclass(frozen=True)
class Replay:
    """The result of :meth:`Transcript.replay`: ``ok``, or the first :class:`Difference`."""

    difference: Difference | None
    transcript: Transcript

    @property
    def ok(self) -> bool:
        """True when the agent did the same as recorded."""
        return self.difference is None

    def check(self) -> None:
        """Raise ``AssertionError`` with the first difference (for tests)."""
        if self.difference is not None:
            raise AssertionError(f"the agent no longer does what was recorded: {self.difference}")

    def __str__(self) -> str:
        return "same as recorded" if self.difference is None else str(self.difference)


@dataclass
class Transcript:
    """A recorded conversation (see the module docstring). JSON round trip:
    :meth:`to_json` / :meth:`from_json`, :meth:`save` / :meth:`load`."""

    start: Any
    steps: list[dict[str, Any]] = field(default_factory=list)
    final: dict[str, Any] | None = None
    agent: str | None = None

    # -- recording ---------------------------------------------------------------------

    @classmethod
    def record(
        cls,
        agent: str | SyncHitlClient,
        start: Any,
        answers: Answers,
        **client_options: Any,
    ) -> Transcript:
        """Talk to ``agent`` (a URL or a client): send ``start``, answer each prompt with
        the next of ``answers`` (a list, or a function of the prompt event), and write
        down what happened. An answer the agent refuses is recorded with its error and
        the next answer goes to the same prompt. Stops when the task stops asking, or
        when the answers run out."""
        transcript = cls(start, agent=agent if isinstance(agent, str) else None)
        transcript._drive(agent, answers, client_options, None)
        return transcript

    def _drive(
        self,
        agent: str | SyncHitlClient,
        answers: Answers,
        client_options: dict[str, Any],
        against: Transcript | None,
    ) -> Difference | None:
        if isinstance(agent, SyncHitlClient):
            return self._talk(agent, answers, against)
        with SyncHitlClient(agent, **client_options) as client:
            return self._talk(client, answers, against)

    def _talk(
        self, client: SyncHitlClient, answers: Answers, against: Transcript | None
    ) -> Difference | None:
        result = client.send(self.start)
        if not isinstance(result, Task):
            self.final = {"state": "MESSAGE", "text": str(result), "artifacts": []}
            return self._compare_final(against)
        task = result
        queue = list(answers) if not callable(answers) else None
        for number in range(MAX_STEPS):
            event = prompt_of(task)
            if not isinstance(event, (PromptEvent, MalformedPromptEvent)):
                break
            if task.status.state is not TaskState.INPUT_REQUIRED:
                break
            step: dict[str, Any] = {"prompt": _prompt(event)}
            if against is not None:
                diff = self._compare(against, number, "prompt", step["prompt"])
                if diff is not None:
                    return diff
            if not isinstance(event, PromptEvent):
                self.steps.append(step)
                break
            if queue is not None:
                if not queue:
                    self.steps.append(step)
                    break
                payload = queue.pop(0)
            else:
                payload = answers(event)  # type: ignore[operator]
            step["answer"] = payload
            try:
                answered = client.respond(
                    task.id, event.prompt_id, payload, wait=True, validate=False
                )
                step["outcome"] = {"accepted": True}
                if isinstance(answered, Task):
                    task = answered
                else:
                    task = client.get_task(task.id)
            except HitlError as exc:
                step["outcome"] = _error(exc)
                task = client.get_task(task.id)
            step["state"] = task.status.state.name
            self.steps.append(step)
            if against is not None:
                for what in ("outcome", "state"):
                    diff = self._compare(against, number, what, step[what])
                    if diff is not None:
                        return diff
        else:
            raise TranscriptError(f"the agent was still asking after {MAX_STEPS} steps")
        self.final = _final(task)
        if against is not None and len(self.steps) != len(against.steps):
            return Difference(
                len(self.steps), "number of steps", len(against.steps), len(self.steps)
            )
        return self._compare_final(against)

    @staticmethod
    def _compare(against: Transcript, number: int, what: str, got: Any) -> Difference | None:
        if number >= len(against.steps):
            return Difference(number, "number of steps", len(against.steps), number + 1)
        expected = against.steps[number].get(what)
        pointer = _first_difference(normalize(expected), normalize(got))
        if pointer is None:
            return None
        label = {"prompt": "prompt", "outcome": "answer's outcome", "state": "task state"}[what]
        if what == "prompt" and pointer.startswith("/response_schema"):
            label = "prompt's response_schema"
        return Difference(number, label, expected, got, pointer)

    def _compare_final(self, against: Transcript | None) -> Difference | None:
        if against is None:
            return None
        pointer = _first_difference(normalize(against.final), normalize(self.final))
        if pointer is None:
            return None
        return Difference(len(self.steps), "end of the task", against.final, self.final, pointer)

    # -- replaying ---------------------------------------------------------------------

    def answers(self) -> list[Any]:
        """The answers given, in order (what a replay sends)."""
        return [step["answer"] for step in self.steps if "answer" in step]

    def replay(self, agent: str | SyncHitlClient, **client_options: Any) -> Replay:
        """Do the recorded conversation again with ``agent`` and compare (see the module
        docstring); ``replay(url).check()`` raises on the first difference."""
        again = Transcript(self.start, agent=agent if isinstance(agent, str) else None)
        difference = again._drive(agent, self.answers(), client_options, self)
        return Replay(difference, again)

    # -- serving -----------------------------------------------------------------------

    def scenario_name(self) -> str:
        """The mock agent scenario the transcript's first message selects."""
        if isinstance(self.start, Mapping) and isinstance(self.start.get("scenario"), str):
            return str(self.start["scenario"])
        names = {s.name for s in BUILTIN_SCENARIOS}
        if isinstance(self.start, str) and self.start in names:
            return self.start
        return DEFAULT_SCENARIO

    def scenario(self) -> Scenario:
        """A mock agent scenario that asks the recorded prompts and ends as recorded."""
        # A refused answer leaves the same prompt open: a prompt becomes one scripted
        # step when its answer was accepted (or when the task ended waiting on it).
        asked = []
        for i, step in enumerate(self.steps):
            prompt = step.get("prompt") or {}
            accepted = (step.get("outcome") or {}).get("accepted") is True
            if "response_schema" in prompt and (accepted or i == len(self.steps) - 1):
                asked.append(prompt)
        steps = [
            Step(p["prompt"], p["response_schema"], p.get("allowed_responders") or None)
            for p in asked
        ]
        final = self.final or {"state": "COMPLETED", "text": "Done.", "artifacts": []}
        state = TaskState[final["state"]] if final["state"] in TaskState.__members__ else None
        if state is None or not state.is_terminal:
            state = TaskState.COMPLETED
        artifacts = [a if isinstance(a, dict) else {"text": a} for a in final.get("artifacts", [])]
        outcome = TaskEnd(state, final.get("text") or "Done.", artifacts)
        return Scenario(
            self.scenario_name(),
            "Plays a recorded transcript.",
            steps=steps,
            finish=lambda _answers: outcome,
        )

    def mock_agent(self, **mock_agent_options: Any) -> MockAgent:
        """A mock agent that plays this transcript, not started yet:
        ``with transcript.mock_agent() as agent:`` (or ``.start()`` and ``.stop()``)."""
        agent = MockAgent(**mock_agent_options)
        agent.scenarios.register(self.scenario(), replace=True)
        return agent

    # -- files -------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The transcript as a JSON object."""
        return {
            "format": FORMAT,
            "version": 1,
            "agent": self.agent,
            "start": self.start,
            "steps": self.steps,
            "final": self.final,
        }

    @classmethod
    def from_json(cls, data: Any) -> Transcript:
        """A transcript from :meth:`to_json`'s shape (``TranscriptError`` if it is not)."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise TranscriptError(f'not a transcript: expected "format": "{FORMAT}"')
        if data.get("version") != 1:
            raise TranscriptError(f"transcript version {data.get('version')!r} is not 1")
        steps = data.get("steps")
        if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps):
            raise TranscriptError("transcript steps must be a list of objects")
        for i, step in enumerate(steps):
            if not isinstance(step.get("prompt"), (dict, type(None))):
                raise TranscriptError(f"step {i}: prompt must be an object")
        final = data.get("final")
        if final is not None and (not isinstance(final, dict) or "state" not in final):
            raise TranscriptError('transcript "final" must be an object with a "state"')
        if "start" not in data:
            raise TranscriptError('transcript has no "start" (the first message)')
        return cls(data["start"], steps, final, data.get("agent"))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the transcript to ``path`` (JSON, indented, keys in a stable order)."""
        with open(path, "w", encoding="utf-8") as out:
            json.dump(self.to_json(), out, indent=2, ensure_ascii=False)
            out.write("\n")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Transcript:
        """Read a transcript written by :meth:`save`."""
        with open(path, encoding="utf-8") as source:
            try:
                data = json.load(source)
            except ValueError as exc:
                raise TranscriptError(f"{path} is not JSON: {exc}") from None
        return cls.from_json(data)
