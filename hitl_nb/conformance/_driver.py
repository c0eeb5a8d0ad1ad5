"""How the harness drives an agent into INPUT_REQUIRED: the driver contract.

Every scenario needs a fresh task waiting on a prompt. The harness asks its
:class:`Driver` for the first message of a new task, sends it with
SendStreamingMessage (SendMessage when the card says the agent does not stream), with
the extension activated, and reads until the task is INPUT_REQUIRED with a prompt
envelope. The contract a driver must meet:

1. :meth:`Driver.first_message` returns the content of a message that starts a **new**
   task which reaches INPUT_REQUIRED with a hitl-prompt/v1 envelope (when the extension
   is activated) without further input. It is called once per task (CF-4 calls it once
   per trial) with a ``purpose`` naming the check, e.g. ``"CF-4 trial 3"``.
   The content is a text (a text part), a dict (a data part), a list of
   :class:`~hitl_nb.a2a.Part` or a whole :class:`~hitl_nb.a2a.Message`.
2. :meth:`Driver.valid_payload` and :meth:`Driver.invalid_payload` may return the
   answers to use for a prompt; None (the default) lets the harness build them from
   the prompt's ``response_schema`` (:mod:`hitl_nb.conformance._payloads`).

Three drivers come ready:

- :class:`ScenarioDriver` (the default): the mock agent's convention, a data part
  ``{"scenario": NAME}`` (or the text NAME with ``as_text=True``); ``approval`` unless
  told otherwise.
- :class:`MessageDriver`: a fixed text and/or data part, for agents that start asking
  on any message ("deploy build 41").
- :class:`CallableDriver`: any function ``(purpose) -> content`` (plain or ``async``),
  for agents with other conventions.

:func:`as_driver` turns the ``driver=`` argument of :func:`~hitl_nb.conformance.run`
into one: None, a scenario name, a dict (a data part), a callable or a Driver.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeAlias

from hitl_nb.a2a import Message, Part

__all__ = [
    "CallableDriver",
    "DriveContent",
    "Driver",
    "MessageDriver",
    "PromptInfo",
    "ScenarioDriver",
    "as_driver",
]

#: What a driver hands the harness: text, a data part's object, parts or a Message.
DriveContent: TypeAlias = "str | Mapping[str, Any] | Sequence[Part] | Message"


class PromptInfo:
    """What a driver is told about a prompt it may answer: ids, schema, raw envelope."""

    def __init__(
        self, task_id: str, prompt_id: str, response_schema: dict[str, Any], raw: Any
    ) -> None:
        self.task_id = task_id
        self.prompt_id = prompt_id
        self.response_schema = response_schema
        self.raw = raw

    def __repr__(self) -> str:
        return f"PromptInfo(task_id={self.task_id!r}, prompt_id={self.prompt_id!r})"


class Driver:
    """Base of every driver; subclasses override :meth:`first_message` (see the module)."""

    #: One line saying how this driver starts tasks (shown in the report).
    description: str = "driver"

    async def first_message(self, purpose: str) -> DriveContent:
        """The content of the first message of a new task (``purpose`` names the check)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement first_message")

    def valid_payload(self, prompt: PromptInfo) -> dict[str, Any] | None:
        """A payload that satisfies ``prompt``'s schema; None: let the harness build one."""
        return None

    def invalid_payload(self, prompt: PromptInfo) -> dict[str, Any] | None:
        """A payload that violates ``prompt``'s schema; None: let the harness build one."""
        return None


class ScenarioDriver(Driver):
    """The mock agent's convention: ``{"scenario": NAME, **options}`` (or the text NAME)."""

    def __init__(
        self,
        scenario: str = "approval",
        *,
        options: Mapping[str, Any] | None = None,
        as_text: bool = False,
    ) -> None:
        if not isinstance(scenario, str) or not scenario.strip():
            raise ValueError("ScenarioDriver needs a non-empty scenario name")
        if as_text and options:
            raise ValueError("scenario options need a data part: leave as_text False")
        self.scenario = scenario
        self.options = dict(options or {})
        self.as_text = as_text
        how = f"text {scenario!r}" if as_text else f"data part {{'scenario': {scenario!r}}}"
        self.description = f"scenario message: {how}"

    async def first_message(self, purpose: str) -> DriveContent:
        """The scenario's name as a data part (or a text part)."""
        if self.as_text:
            return self.scenario
        return {"scenario": self.scenario, **self.options}


class MessageDriver(Driver):
    """A fixed first message: a text part, a data part, or both (text first)."""

    def __init__(self, text: str | None = None, data: Mapping[str, Any] | None = None) -> None:
        if text is None and data is None:
            raise ValueError("MessageDriver needs text, data, or both")
        if text is not None and not isinstance(text, str):
            raise TypeError("MessageDriver text must be a string")
        if data is not None and not isinstance(data, Mapping):
            raise TypeError("MessageDriver data must be a JSON object (a mapping)")
        self.text = text
        self.data = dict(data) if data is not None else None
        shown = [f"text {text!r}"] if text is not None else []
        shown += [f"data {self.data!r}"] if self.data is not None else []
        self.description = "message: " + " + ".join(shown)

    async def first_message(self, purpose: str) -> DriveContent:
        """The configured parts."""
        if self.data is None:
            assert self.text is not None
            return self.text
        if self.text is None:
            return dict(self.data)
        return [Part(text=self.text), Part(data=dict(self.data))]


class CallableDriver(Driver):
    """A user function ``fn(purpose) -> content`` (or ``async def``) starts each task.

    ``valid`` and ``invalid`` optionally build the answers: ``fn(PromptInfo) -> dict``.
    """

    def __init__(
        self,
        fn: Callable[[str], DriveContent | Awaitable[DriveContent]],
        *,
        valid: Callable[[PromptInfo], dict[str, Any] | None] | None = None,
        invalid: Callable[[PromptInfo], dict[str, Any] | None] | None = None,
        description: str | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError("CallableDriver needs a callable: fn(purpose) -> message content")
        self.fn = fn
        self._valid = valid
        self._invalid = invalid
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        self.description = description or f"callable {name}"

    async def first_message(self, purpose: str) -> DriveContent:
        """Whatever the function returns (awaited when it is a coroutine)."""
        content = self.fn(purpose)
        if inspect.isawaitable(content):
            content = await content
        return content

    def valid_payload(self, prompt: PromptInfo) -> dict[str, Any] | None:
        """The ``valid`` function's payload, if one was given."""
        return self._valid(prompt) if self._valid is not None else None

    def invalid_payload(self, prompt: PromptInfo) -> dict[str, Any] | None:
        """The ``invalid`` function's payload, if one was given."""
        return self._invalid(prompt) if self._invalid is not None else None


def as_driver(spec: Driver | str | Mapping[str, Any] | Callable[..., Any] | None) -> Driver:
    """A :class:`Driver` from ``run(driver=...)``: None (the mock agent's ``approval``
    scenario), a scenario name, a dict (sent as a data part), a callable, or a Driver."""
    if spec is None:
        return ScenarioDriver()
    if isinstance(spec, Driver):
        return spec
    if isinstance(spec, str):
        return ScenarioDriver(spec)
    if isinstance(spec, Mapping):
        return MessageDriver(data=spec)
    if callable(spec):
        return CallableDriver(spec)
    raise TypeError(
        "driver must be None, a scenario name, a dict (a data part), a callable "
        f"(purpose) -> message content, or a Driver; got {type(spec).__name__}"
    )
