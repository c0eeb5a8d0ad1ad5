"""What a check's code works with: its steps, its assertions, the session, earlier results.

A check asserts with :meth:`CheckContext.require` (a failure ends the check) or
:meth:`CheckContext.expect` (the failure is recorded and the check goes on). Each failure
names the current step, what was expected, what was seen, and the spec section
(the check's own unless one is given).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ._records import DriveFailed, Prompted
from ._report import CheckResult, Failure
from ._session import Session

__all__ = ["CheckFailed", "CheckSpec", "CheckContext"]


class CheckFailed(Exception):
    """Ends a check: the agent broke a rule the remaining steps depend on."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(str(failure))
        self.failure = failure


@dataclass(frozen=True)
class CheckSpec:
    """One entry of the scenario table: id, title, group, spec section, steps, code.

    ``requires`` names checks that must run first (CF-7 judges CF-1..CF-6).
    """

    id: str
    title: str
    group: str
    section: str
    steps: tuple[str, ...]
    run: Callable[[CheckContext], Awaitable[None]]
    requires: tuple[str, ...] = ()

    def step_text(self, number: int) -> str:
        """``"step N: <text>"`` for step ``number`` (1-based)."""
        return f"step {number}: {self.steps[number - 1]}"


class CheckContext:
    """The running check: session, result under construction, earlier results."""

    def __init__(
        self, spec: CheckSpec, session: Session, result: CheckResult, done: list[CheckResult]
    ) -> None:
        self.spec = spec
        self.session = session
        self.result = result
        self.done = done
        self._step = 0

    @property
    def settings(self) -> Any:
        """The run's :class:`~hitl_nb.conformance._session.Settings`."""
        return self.session.settings

    @property
    def rest(self) -> bool:
        """True on the HTTP+JSON binding (errors are HTTP statuses there)."""
        return self.session.binding == "HTTP+JSON"

    @property
    def grpc(self) -> bool:
        """True on the gRPC binding (errors are gRPC status codes and ErrorInfo reasons)."""
        return self.session.grpc

    def step(self, number: int) -> None:
        """Enter step ``number`` of the check's table entry (repeating one is harmless)."""
        self._step = number
        label = self.spec.step_text(number)
        if not any(s == label for s, _ in self.result.steps):
            self.result.steps.append((label, "passed"))

    def _failure(self, expected: str, seen: str, section: str | None) -> Failure:
        label = f"step {self._step}" if self._step else ""
        if self.result.steps and self.result.steps[-1][1] == "passed":
            self.result.steps[-1] = (self.result.steps[-1][0], "failed")
        return Failure(label, expected, seen, section or self.spec.section)

    def expect(self, ok: bool, expected: str, seen: str, section: str | None = None) -> bool:
        """Record a failure unless ``ok``; the check goes on. Returns ``ok``."""
        if not ok:
            self.result.failures.append(self._failure(expected, seen, section))
        return ok

    def require(self, ok: bool, expected: str, seen: str, section: str | None = None) -> None:
        """Fail the check here unless ``ok``."""
        if not ok:
            raise CheckFailed(self._failure(expected, seen, section))

    def warn(self, text: str) -> None:
        """A departure from a SHOULD (or the spec's wording) that does not fail the check."""
        if text not in self.result.warnings:
            self.result.warnings.append(text)

    def note(self, text: str) -> None:
        """A remark that does not fail the check."""
        if text not in self.result.notes:
            self.result.notes.append(text)

    async def drive(self, purpose: str) -> Prompted:
        """Drive a new task into INPUT_REQUIRED, failing the check when the agent won't."""
        try:
            prompted = await self.session.drive(purpose)
        except DriveFailed as exc:
            raise CheckFailed(
                self._failure(
                    "the task in INPUT_REQUIRED with a hitl-prompt/v1 envelope",
                    str(exc),
                    "§Prompt Envelope",
                )
            ) from None
        if prompted.malformed:
            self.note(f"task {prompted.task_id}: the envelope is malformed: {prompted.malformed}")
        return prompted

    def valid_payload(self, prompted: Prompted) -> dict[str, Any]:
        """A valid payload for the prompt; the check errors out when none can be built."""
        valid, _ = self.session.payloads(prompted)
        if valid is None:
            raise RuntimeError(
                "the harness cannot build a payload that satisfies this response_schema: "
                "give the driver a valid_payload"
            )
        return valid

    def invalid_payload(self, prompted: Prompted) -> tuple[dict[str, Any], str]:
        """An invalid payload and how it is broken; errors out when none can be built."""
        _, invalid = self.session.payloads(prompted)
        if invalid is None:
            raise RuntimeError(
                "the harness cannot build a payload that violates this response_schema "
                "(it accepts everything?): give the driver an invalid_payload"
            )
        return invalid
