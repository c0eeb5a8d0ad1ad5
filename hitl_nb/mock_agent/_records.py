"""A task's record in the mock agent, and its JSON form for the durable store.

The record is the task (as A2A shows it) plus what the script needs: the scenario and
its steps, the answers so far, the open prompt (envelope and deadline bookkeeping), the
outbox and the task's push-notification configurations (:class:`PushEntry`). The JSON
form keeps everything but the outbox (stored event by event) and the steps (rebuilt from
the scenario and its options). A :class:`Plan` is what a new task will be, decided before
the task book opens it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from hitl_nb.a2a import (
    CODEC_V1,
    A2AVersion,
    PushConfig,
    Task,
    decode_push_config,
    encode_push_config,
)
from hitl_nb.mock_agent._outbox import Outbox
from hitl_nb.mock_agent._scenarios import DeadlinePolicy, Step
from hitl_nb.spec import parse_rfc3339

__all__ = [
    "OpenPrompt",
    "Plan",
    "PushEntry",
    "TaskRecord",
    "record_from_json",
    "record_to_json",
]


class Plan(NamedTuple):
    """What a new task will be, decided before it exists: the scenario's name, the
    options of the first message, the steps they give."""

    scenario: str
    options: dict[str, Any]
    steps: list[Step]


@dataclass
class PushEntry:
    """One push-notification configuration of a task, as the agent keeps it.

    ``version``: the wire version of the client that created it (what a notification
    looks like: a 1.0 StreamResponse or a 0.3 Task); ``activated``: whether that
    request activated hitl-prompt/v1 (§Activation: else notifications carry no
    envelope).
    """

    config: PushConfig
    version: A2AVersion
    activated: bool

    def to_json(self) -> dict[str, Any]:
        """The entry as JSON for the durable store (credentials included)."""
        return {
            "config": encode_push_config(self.config, "1.0"),
            "version": self.version,
            "activated": self.activated,
        }

    @classmethod
    def from_json(cls, blob: Mapping[str, Any]) -> PushEntry:
        """An entry read back from :meth:`to_json`."""
        version: A2AVersion = "0.3" if blob.get("version") == "0.3" else "1.0"
        config = decode_push_config(blob["config"], "1.0")
        return cls(config, version, bool(blob.get("activated")))


@dataclass
class OpenPrompt:
    """The prompt a task waits on: its envelope JSON and deadline bookkeeping."""

    prompt_id: str
    envelope: dict[str, Any]
    on_deadline: DeadlinePolicy = "keep-open"
    timed_out: bool = False

    @property
    def deadline_at(self) -> datetime | None:
        """The deadline as an aware datetime, or None."""
        text = self.envelope.get("deadline")
        return parse_rfc3339(text) if text else None


@dataclass
class TaskRecord:
    """A task plus what the script needs: scenario, steps, answers, open prompt, outbox.

    ``pending`` counts scheduled transitions (blocking sends wait for zero),
    ``committed`` is the last outbox id written to the store, ``prompt_rows`` the
    prompt-id changes not yet written.
    """

    task: Task
    scenario: str
    options: dict[str, Any]
    steps: list[Step]
    step_index: int = 0
    answers: list[dict[str, Any]] = field(default_factory=list)
    prompt: OpenPrompt | None = None
    last_answered: str | None = None
    outbox: Outbox = field(default_factory=Outbox)
    pending: int = 0
    waiters: list[asyncio.Future[None]] = field(default_factory=list)
    committed: int = 0
    prompt_rows: list[tuple[str, str, str]] = field(default_factory=list)
    timer: asyncio.TimerHandle | None = None
    push: dict[str, PushEntry] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """The task id."""
        return self.task.id


def record_to_json(rec: TaskRecord) -> dict[str, Any]:
    """The record as JSON for :meth:`~hitl_nb.mock_agent._store.TaskStore.commit`."""
    p = rec.prompt
    prompt = None
    if p is not None:
        prompt = {
            "prompt_id": p.prompt_id,
            "envelope": p.envelope,
            "on_deadline": p.on_deadline,
            "timed_out": p.timed_out,
        }
    return {
        "id": rec.id,
        "task": CODEC_V1.encode_task(rec.task),
        "scenario": rec.scenario,
        "options": rec.options,
        "step_index": rec.step_index,
        "answers": rec.answers,
        "last_answered": rec.last_answered,
        "prompt": prompt,
        "push": [entry.to_json() for entry in rec.push.values()],
    }


def record_from_json(blob: Mapping[str, Any], outbox: Outbox, steps: list[Step]) -> TaskRecord:
    """Rebuild a record from its JSON, its outbox and the steps of its scenario."""
    p = blob.get("prompt")
    return TaskRecord(
        task=CODEC_V1.decode_task(blob["task"]),
        scenario=blob["scenario"],
        options=dict(blob.get("options") or {}),
        steps=steps,
        step_index=int(blob["step_index"]),
        answers=list(blob.get("answers") or []),
        prompt=None
        if p is None
        else OpenPrompt(p["prompt_id"], p["envelope"], p["on_deadline"], p["timed_out"]),
        last_answered=blob.get("last_answered"),
        outbox=outbox,
        committed=outbox.last_id,
        push={
            entry.config.id or "": entry
            for entry in (PushEntry.from_json(b) for b in blob.get("push") or [])
        },
    )
