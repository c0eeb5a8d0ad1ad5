"""The mock agent's scripted behaviours, and how to add your own.

A :class:`Scenario` is a sequence of prompts (:class:`Step`) and what happens once the
last one is answered (:attr:`Scenario.finish`). The client picks one with its first
message: a data part ``{"scenario": NAME, ...options}`` or a text part equal to NAME;
with neither, ``approval``. Options in the data part reach the steps:

- ``deadline``: ``deadline_seconds`` (default: the agent's, 30 s), ``on_deadline``
  (``"keep-open"``, the default, or ``"fail"``);
- ``specific``: ``responder`` (default ``reviewer@example.org``);
- ``consensus``: ``n`` (default 2);
- any scenario: ``start_delay_seconds`` (0 to 3600): the task stays WORKING, with the
  status message "Preparing the first question.", that long before its first prompt.

Register your own from Python::

    from hitl_nb.mock_agent import MockAgent, Scenario, Step, TaskEnd

    triage = Scenario(
        "triage",
        "Asks for a severity, then files the ticket.",
        steps=[Step("Severity of INC-7?", {"type": "object", "properties": {
            "severity": {"enum": ["low", "high"]}}, "required": ["severity"],
            "additionalProperties": False})],
        finish=lambda answers: TaskEnd(text=f"Filed as {answers[0]['severity']}"),
    )
    with MockAgent(scenarios=[triage]) as agent:
        ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from hitl_nb.a2a import TaskState

__all__ = [
    "BUILTIN_SCENARIOS",
    "DEADLINE_POLICIES",
    "DEFAULT_SCENARIO",
    "MAX_DEADLINE_SECONDS",
    "DeadlinePolicy",
    "Scenario",
    "ScenarioRegistry",
    "Step",
    "TaskEnd",
    "deadline_policy",
]

DEFAULT_SCENARIO = "approval"
#: What the agent does when a step's deadline passes (spec S-4 allows both).
DeadlinePolicy = Literal["keep-open", "fail"]
DEADLINE_POLICIES: tuple[DeadlinePolicy, ...] = get_args(DeadlinePolicy)


def deadline_policy(value: object, what: str = "on_deadline") -> DeadlinePolicy:
    """``value`` checked as a deadline policy; ``ValueError`` naming ``what`` otherwise."""
    for policy in DEADLINE_POLICIES:
        if value == policy:
            return policy
    raise ValueError(f"{what} must be 'keep-open' or 'fail', got {value!r}")


#: The longest deadline a step may set (a year): a deadline is written as a date, and
#: datetime stops at year 9999 (1e12 seconds raised OverflowError mid-task).
MAX_DEADLINE_SECONDS = 366 * 24 * 3600


@dataclass(frozen=True)
class Step:
    """One prompt: the question, its response_schema, responders, deadline.

    ``deadline_seconds`` puts the deadline that many seconds after the prompt is emitted;
    ``on_deadline`` says what the agent does when it passes (spec S-4 allows both):
    ``"keep-open"`` emits a timeout signal and keeps accepting answers, ``"fail"`` emits
    the signal with the task FAILED.
    """

    prompt: str
    response_schema: Mapping[str, Any]
    allowed_responders: Sequence[str] | None = None
    deadline_seconds: float | None = None
    on_deadline: DeadlinePolicy = "keep-open"

    def __post_init__(self) -> None:
        if not isinstance(self.prompt, str) or not self.prompt:
            raise ValueError("Step.prompt must be a non-empty string")
        if not isinstance(self.response_schema, Mapping):
            raise ValueError("Step.response_schema must be a JSON Schema object")
        if self.response_schema.get("type") != "object":
            raise ValueError('Step.response_schema must declare type "object" at the top')
        if self.deadline_seconds is not None and not (
            0 < self.deadline_seconds <= MAX_DEADLINE_SECONDS  # also refuses NaN
        ):
            raise ValueError(
                f"Step.deadline_seconds must be positive and at most {MAX_DEADLINE_SECONDS}"
            )
        deadline_policy(self.on_deadline, "Step.on_deadline")


@dataclass(frozen=True)
class TaskEnd:
    """How a task ends once every step is answered.

    ``state`` is a terminal state (default COMPLETED); ``text`` goes in the final status
    message; each entry of ``artifacts`` becomes an artifact with one data part.
    """

    state: TaskState = TaskState.COMPLETED
    text: str = "Done."
    artifacts: Sequence[Mapping[str, Any]] = ()

    def __post_init__(self) -> None:
        if not self.state.is_terminal:
            raise ValueError(f"TaskEnd.state must be terminal, got {self.state.value}")


def _default_finish(answers: Sequence[Mapping[str, Any]]) -> TaskEnd:
    count = len(answers)
    return TaskEnd(text=f"Done: {count} answer{'' if count == 1 else 's'} received.")


@dataclass(frozen=True)
class Scenario:
    """A named script: ``steps`` asked in order, then ``finish(answers)``.

    ``build(options)``, when given, makes the steps from the options of the first
    message (see the module docstring); otherwise ``steps`` are used as they are.
    """

    name: str
    description: str
    steps: Sequence[Step] = ()
    finish: Callable[[Sequence[Mapping[str, Any]]], TaskEnd] = _default_finish
    build: Callable[[Mapping[str, Any]], Sequence[Step]] | None = field(default=None)
    examples: Sequence[str] = ()

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError("Scenario.name must be a non-empty string")
        if self.build is None and not self.steps:
            raise ValueError(f"scenario {self.name!r} needs at least one step")

    def steps_for(self, options: Mapping[str, Any]) -> list[Step]:
        """The steps of this run (``build(options)`` or the fixed ``steps``)."""
        steps = list(self.build(options) if self.build is not None else self.steps)
        if not steps:
            raise ValueError(f"scenario {self.name!r} produced no steps")
        return steps


# -- the built-in scenarios -----------------------------------------------------------

APPROVAL_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["approve"],
    "properties": {
        "approve": {"type": "boolean", "title": "Approve"},
        "comment": {"type": "string", "maxLength": 1024, "title": "Comment"},
    },
}

FORM_TOUR_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "title": "Release checklist",
    "description": "Every kind of field the form generator supports.",
    "additionalProperties": False,
    "required": ["title", "priority", "approve"],
    "$defs": {
        "person": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "email": {"type": "string", "format": "email"},
            },
        }
    },
    "properties": {
        "title": {"type": "string", "title": "Title", "minLength": 3, "maxLength": 80},
        "notes": {"type": "string", "description": "Free text", "maxLength": 2000},
        "ticket": {"type": "string", "pattern": "^[A-Z]+-[0-9]+$", "examples": ["OPS-42"]},
        "priority": {"type": "string", "enum": ["low", "medium", "high"], "default": "medium"},
        "channel": {"const": "release"},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 2},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "step": {"type": "number", "multipleOf": 0.5},
        "approve": {"type": "boolean"},
        "when": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "time"},
        "link": {"type": "string", "format": "uri"},
        "build_id": {"type": "string", "format": "uuid"},
        "tags": {
            "type": "array",
            "items": {"type": "string"},
            "minItems": 0,
            "maxItems": 5,
            "uniqueItems": True,
        },
        "regions": {
            "type": "array",
            "items": {"enum": ["eu", "us", "ap"]},
            "uniqueItems": True,
        },
        "owner": {"$ref": "#/$defs/person"},
        "reviewers": {"type": "array", "items": {"$ref": "#/$defs/person"}, "maxItems": 3},
        "rollback": {"type": ["string", "null"]},
        "target": {
            "oneOf": [
                {
                    "type": "object",
                    "title": "Cluster",
                    "additionalProperties": False,
                    "required": ["kind", "cluster"],
                    "properties": {"kind": {"const": "cluster"}, "cluster": {"type": "string"}},
                },
                {
                    "type": "object",
                    "title": "Host",
                    "additionalProperties": False,
                    "required": ["kind", "host"],
                    "properties": {"kind": {"const": "host"}, "host": {"type": "string"}},
                },
            ]
        },
        "limits": {
            "allOf": [
                {"type": "object", "properties": {"cpu": {"type": "integer", "minimum": 1}}},
                {"type": "object", "properties": {"memory_mb": {"type": "integer"}}},
            ]
        },
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}


def _approval_finish(answers: Sequence[Mapping[str, Any]]) -> TaskEnd:
    answer = answers[-1]
    verdict = "Approved" if answer.get("approve") else "Not approved"
    comment = answer.get("comment")
    return TaskEnd(text=f"{verdict}." + (f" Comment: {comment}" if comment else ""))


def _echo_finish(answers: Sequence[Mapping[str, Any]]) -> TaskEnd:
    return TaskEnd(text="Echoing the accepted payload.", artifacts=[dict(answers[-1])])


def _multi_step_finish(answers: Sequence[Mapping[str, Any]]) -> TaskEnd:
    return TaskEnd(
        text="All three steps answered.", artifacts=[{"answers": [dict(a) for a in answers]}]
    )


def _number(options: Mapping[str, Any], key: str, default: float, maximum: float) -> float:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= maximum:
        raise ValueError(f"option {key!r} must be a positive number, at most {maximum:.0f}")
    return float(value)


def _deadline_steps(options: Mapping[str, Any]) -> list[Step]:
    seconds = _number(options, "deadline_seconds", 30.0, MAX_DEADLINE_SECONDS)
    policy = deadline_policy(options.get("on_deadline", "keep-open"), "option 'on_deadline'")
    return [
        Step(
            f"Approve before the deadline ({seconds:g} s)?",
            APPROVAL_SCHEMA,
            deadline_seconds=seconds,
            on_deadline=policy,
        )
    ]


def _specific_steps(options: Mapping[str, Any]) -> list[Step]:
    who = options.get("responder", "reviewer@example.org")
    if not isinstance(who, str) or not who or any(c.isspace() for c in who):
        raise ValueError("option 'responder' must be a string without spaces")
    return [Step(f"{who}: approve the change?", APPROVAL_SCHEMA, [f"specific:{who}"])]


def _consensus_steps(options: Mapping[str, Any]) -> list[Step]:
    n = options.get("n", 2)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError("option 'n' must be a positive integer")
    return [
        Step(f"Approve the change? ({n} concurring answers)", APPROVAL_SCHEMA, [f"consensus:{n}"])
    ]


def _step_schema(name: str, prop: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": [name],
        "properties": {name: dict(prop)},
    }


BUILTIN_SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "approval",
        "One yes/no prompt: approve (boolean, required) and an optional comment.",
        steps=[Step("Approve the deployment of build 41 to staging?", APPROVAL_SCHEMA)],
        finish=_approval_finish,
    ),
    Scenario(
        "form-tour",
        "One prompt whose schema uses every keyword the form generator supports.",
        steps=[Step("Fill in the release checklist.", FORM_TOUR_SCHEMA)],
    ),
    Scenario(
        "multi-step",
        "Three prompts in sequence on one task, each with a new prompt_id.",
        steps=[
            Step("Step 1 of 3: name the release.", _step_schema("name", {"type": "string"})),
            Step(
                "Step 2 of 3: how many replicas?",
                _step_schema("replicas", {"type": "integer", "minimum": 1}),
            ),
            Step("Step 3 of 3: ship it?", _step_schema("ship", {"type": "boolean"})),
        ],
        finish=_multi_step_finish,
    ),
    Scenario(
        "deadline",
        "A prompt with a short deadline; when it passes the agent emits a status update "
        "whose metadata carries hitlTimeout. Options: deadline_seconds, on_deadline "
        "(keep-open: the prompt stays open; fail: the task fails).",
        build=_deadline_steps,
    ),
    Scenario(
        "consensus",
        'A prompt with allowed_responders ["consensus:N"] (option n, default 2).',
        build=_consensus_steps,
    ),
    Scenario(
        "specific",
        'A prompt with allowed_responders ["specific:<id>"] (option responder).',
        build=_specific_steps,
    ),
    Scenario(
        "echo",
        "One prompt; completes with the accepted payload as an artifact.",
        steps=[
            Step(
                "Send any object; it comes back as an artifact.",
                {"type": "object", "properties": {"message": {"type": "string"}}},
            )
        ],
        finish=_echo_finish,
    ),
)


class ScenarioRegistry:
    """The scenarios one agent knows, by name (the built-ins plus your own)."""

    def __init__(self, scenarios: Iterable[Scenario] = (), *, builtins: bool = True) -> None:
        self._by_name: dict[str, Scenario] = {}
        for scenario in (*(BUILTIN_SCENARIOS if builtins else ()), *scenarios):
            self.register(scenario, replace=True)

    def register(self, scenario: Scenario, *, replace: bool = False) -> None:
        """Add ``scenario``; a name already taken raises ``ValueError`` unless ``replace``."""
        if not isinstance(scenario, Scenario):
            raise TypeError(f"expected a Scenario, got {type(scenario).__name__}")
        if scenario.name in self._by_name and not replace:
            raise ValueError(f"a scenario named {scenario.name!r} is already registered")
        self._by_name[scenario.name] = scenario

    def get(self, name: str) -> Scenario | None:
        """The scenario called ``name``, or None."""
        return self._by_name.get(name)

    def names(self) -> list[str]:
        """Every registered name, in registration order."""
        return list(self._by_name)

    def __iter__(self) -> Any:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)
