"""What the harness records about a run: its settings, the answers and envelopes it saw.

Plain data shared by :mod:`~hitl_nb.conformance._session` (which fills it) and the checks
(which judge it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx

from hitl_nb.a2a import (
    BindingChoice,
    Task,
    TaskState,
    VersionChoice,
    binding_choice,
    version_choice,
)
from hitl_nb.errors import A2AError
from hitl_nb.spec import EXTENSION_URI, HEADER_EXTENSIONS, HEADER_EXTENSIONS_V03

from ._driver import PromptInfo

__all__ = ["Answer", "DriveFailed", "Prompted", "Seen", "Settings", "Sighting", "activated", "uris"]


@dataclass(frozen=True)
class Settings:
    """Knobs of a run; times in seconds unless the name says ms.

    ``binding``: ``"auto"``, ``"JSONRPC"``, ``"HTTP+JSON"`` or ``"GRPC"``; ``version``: ``"auto"``,
    ``"1.0"`` or ``"0.3"`` (as for the client). ``trials``: CF-4 trials (the spec asks
    for at least 20).
    ``transition_timeout``: how long an accepted answer may take to move the task out of
    INPUT_REQUIRED before CF-1/2/3 call it stuck; ``resume_timeout``: the same for one
    CF-4 trial (its verdict is the 95th percentile against ``latency_budget_ms``).
    """

    binding: BindingChoice = "auto"
    version: VersionChoice = "auto"
    trials: int = 20
    latency_budget_ms: float = 1000.0
    request_timeout: float = 10.0
    drive_timeout: float = 15.0
    transition_timeout: float = 2.0
    resume_timeout: float = 5.0
    replay_timeout: float = 5.0
    headers: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Checked and spelled as the client spells them ("jsonrpc" -> "JSONRPC").
        object.__setattr__(self, "binding", binding_choice(self.binding))
        object.__setattr__(self, "version", version_choice(self.version))
        if isinstance(self.trials, bool) or not isinstance(self.trials, int) or self.trials < 1:
            raise ValueError(f"trials must be a positive integer; got {self.trials!r}")
        for name in (
            "request_timeout",
            "drive_timeout",
            "transition_timeout",
            "resume_timeout",
            "replay_timeout",
            "latency_budget_ms",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive")


class DriveFailed(Exception):
    """The agent did not reach INPUT_REQUIRED with a usable envelope; says what it did."""


@dataclass(frozen=True)
class Seen:
    """One answer: was the extension activated, what was echoed, which status.

    A gRPC call is recorded with the method ``"GRPC"``, its status code in
    ``grpc_status`` (``"OK"``, ``"ABORTED"``, ...) and, in ``status``, the HTTP status
    Google's mapping gives that code; ``echoed`` is its ``a2a-extensions`` metadata.
    """

    method: str
    url: str
    status: int
    activated: bool
    echoed: tuple[str, ...]
    echoed_v03: tuple[str, ...] = ()
    grpc_status: str | None = None

    def echoes(self, version: str) -> bool:
        """Did the answer name the extension in ``A2A-Extensions`` (0.3: either header)?"""
        return EXTENSION_URI in self.echoed or (
            version == "0.3" and EXTENSION_URI in self.echoed_v03
        )


@dataclass(frozen=True)
class Sighting:
    """A task status carrying an envelope, as it passed by."""

    task_id: str
    state: TaskState
    raw: Any
    at: datetime
    source: str

    @property
    def prompt_id(self) -> Any:
        """The raw envelope's prompt_id (whatever type it has)."""
        return self.raw.get("prompt_id") if isinstance(self.raw, dict) else None


@dataclass
class Prompted:
    """A task waiting on a prompt: ids, schema, the raw envelope and stream bookkeeping.

    ``event_id`` is the SSE id of the event that carried the envelope and
    ``before_id`` the id of the event before it (None when the agent does not number
    its events). ``malformed`` holds the client's reason when the envelope failed the
    orchestrator check (the harness still answers it if it has an id and a schema).
    """

    task_id: str
    context_id: str
    prompt_id: str
    response_schema: dict[str, Any]
    raw: Any
    event_id: str | None = None
    before_id: str | None = None
    malformed: str | None = None

    def info(self) -> PromptInfo:
        """What a driver is told about this prompt."""
        return PromptInfo(self.task_id, self.prompt_id, self.response_schema, self.raw)


@dataclass
class Answer:
    """How the agent took an answer: accepted (no error), the HTTP status, error, task."""

    accepted: bool
    status: int | None
    error: Exception | None = None
    task: Task | None = None
    elapsed_ms: float = 0.0
    #: The gRPC status code of the answer, on the gRPC binding (None elsewhere).
    grpc_status: str | None = None

    def describe(self) -> str:
        """The answer as a phrase for failure messages."""
        how = f"gRPC {self.grpc_status}" if self.grpc_status is not None else f"HTTP {self.status}"
        if self.accepted:
            state = self.task.status.state.value if self.task is not None else "no task"
            return f"{how}, success (task {state})"
        if isinstance(self.error, A2AError):
            return (
                f"{how}, {type(self.error).__name__} (code {self.error.code}): {self.error.message}"
            )
        return f"{how}, {type(self.error).__name__}: {self.error}"


def uris(values: list[str]) -> tuple[str, ...]:
    """The comma-separated URIs of some header values."""
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def activated(request: httpx.Request) -> bool:
    """Did the request activate hitl-prompt/v1 (either activation header)?"""
    values = request.headers.get_list(HEADER_EXTENSIONS) + request.headers.get_list(
        HEADER_EXTENSIONS_V03
    )
    return any(v.strip() == EXTENSION_URI for value in values for v in value.split(","))
