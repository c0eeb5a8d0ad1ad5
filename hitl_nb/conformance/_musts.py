"""Further checks: MUSTs of hitl-prompt/v1 stated outside §Conformance (EXT-*).

They judge the card, the activation rules and every envelope the agent emitted during
the run; when the run saw too few prompts (``--only EXT-UNIQUE``) they drive more.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import timedelta
from typing import Any

from hitl_nb._json import dumps_compact
from hitl_nb.a2a import Message, Task
from hitl_nb.client import MessageEvent, StatusEvent, TaskEvent
from hitl_nb.errors import PromptConflict
from hitl_nb.spec import EXTENSION_URI, check_prompt
from hitl_nb.validation import MAX_SCHEMA_BYTES

from ._cf import S_ACCEPT, expect_rejection
from ._context import CheckContext
from ._records import Seen, Sighting
from ._session import left

__all__ = [
    "card_declaration",
    "echo",
    "no_activation",
    "schema_size",
    "strict",
    "unique_ids",
    "unknown_id",
]

# An envelope is judged against the clock when it was first seen, less this grace for
# the time between emission and receipt (§Prompt Envelope: deadline in the future).
_CLOCK_GRACE = timedelta(seconds=1)


def _first_sightings(sightings: list[Sighting]) -> list[Sighting]:
    """Each distinct envelope of each task once, at its first sighting, on INPUT_REQUIRED."""
    out: dict[tuple[str, str], Sighting] = {}
    for x in sightings:
        if x.state.value != "input_required":
            continue
        key = (x.task_id, json.dumps(x.raw, sort_keys=True, default=str))
        out.setdefault(key, x)
    return list(out.values())


def _limit(ctx: CheckContext, items: list[str], expected: str, section: str | None = None) -> None:
    for text in items[:5]:
        ctx.expect(False, expected, text, section)
    if len(items) > 5:
        ctx.expect(False, expected, f"... and {len(items) - 5} more like these", section)


async def card_declaration(ctx: CheckContext) -> None:
    """EXT-CARD: the card declares the extension, ``required: false``, ``params: {}``."""
    raw = ctx.session.card_raw
    ctx.step(1)
    caps: Any = raw.get("capabilities")
    caps = caps if isinstance(caps, dict) else {}
    exts: Any = caps.get("extensions")
    exts = exts if isinstance(exts, list) else []
    entry = next((e for e in exts if isinstance(e, dict) and e.get("uri") == EXTENSION_URI), None)
    listed = [e.get("uri") for e in exts if isinstance(e, dict)]
    ctx.require(
        entry is not None,
        f"capabilities.extensions[] listing {EXTENSION_URI}",
        f"extensions {listed}",
    )
    assert entry is not None
    ctx.step(2)
    ctx.expect(
        "required" in entry and entry["required"] is False,
        '"required": false written out',
        f'"required": {json.dumps(entry["required"])}'
        if "required" in entry
        else "no required member (SDKs that drop proto3 defaults leave it out)",
    )
    ctx.step(3)
    ctx.expect(
        "params" in entry and entry["params"] == {},
        '"params": {} written out (this version defines no parameters)',
        f'"params": {json.dumps(entry["params"])[:200]}'
        if "params" in entry
        else "no params member",
        "§Activation / params schema",
    )


async def unknown_id(ctx: CheckContext) -> None:
    """EXT-UNKNOWN-ID: an answer naming a prompt_id the agent never issued gets 409."""
    s = ctx.session
    ctx.step(1)
    p = await ctx.drive("EXT-UNKNOWN-ID")
    ctx.step(2)
    stranger = str(uuid.uuid4())
    answer = await s.answer(p, ctx.valid_payload(p), prompt_id=stranger)
    ctx.step(3)
    expect_rejection(ctx, answer, PromptConflict)
    ctx.step(4)
    task = await s.get_task(p.task_id)
    ctx.require(
        not left(task.status, p.prompt_id),
        f"the task still INPUT_REQUIRED on its own prompt {p.prompt_id}",
        f"state {task.status.state.value} after the answer to unknown prompt {stranger}",
        S_ACCEPT,
    )


def _leaks(where: str, message: Message | None) -> list[str]:
    meta = message.metadata if message is not None else None
    if isinstance(meta, dict) and EXTENSION_URI in meta:
        env = meta[EXTENSION_URI]
        pid = env.get("prompt_id") if isinstance(env, dict) else None
        return [f"an envelope in {where} (prompt_id {pid!r})"]
    return []


def _task_leaks(task: Task, where: str) -> list[str]:
    out = _leaks(f"{where}: status.message.metadata", task.status.message)
    for i, m in enumerate(task.history):
        out += _leaks(f"{where}: history[{i}].metadata", m)
    return out


async def no_activation(ctx: CheckContext) -> None:
    """EXT-NO-ACTIVATION: no envelope to a client that did not activate the extension."""
    s = ctx.session
    assert s.client is not None and s.client.card is not None
    ctx.step(1)
    plain = s.make_client(s.client.card, activate=False)
    content = await s.driver.first_message("EXT-NO-ACTIVATION")
    leaks: list[str] = []
    task_id: str | None = None
    state = "no task"

    async def drive() -> None:
        nonlocal task_id, state
        if not s.streaming():
            result = await plain.send(content)
            if isinstance(result, Task):
                task_id, state = result.id, result.status.state.value
                leaks.extend(_task_leaks(result, "SendMessage result"))
            return
        async for ev in plain.stream(content):
            if isinstance(ev, TaskEvent):
                task_id, state = ev.task_id, ev.state.value
                leaks.extend(_task_leaks(ev.task, f"stream event {ev.event_id or ''}".strip()))
            elif isinstance(ev, StatusEvent):
                task_id, state = ev.task_id, ev.state.value
                leaks.extend(_leaks(f"{state} status update {ev.event_id or ''}", ev.message))
            elif isinstance(ev, MessageEvent):
                leaks.extend(_leaks("a streamed message", ev.message))

    try:
        try:
            await asyncio.wait_for(drive(), ctx.settings.drive_timeout)
        except asyncio.TimeoutError:
            ctx.note(f"the task had not paused after {ctx.settings.drive_timeout:g} s")
        ctx.step(2)
        if task_id is not None:
            task = await plain.get_task(task_id)
            leaks += _task_leaks(task, "GetTask")
            state = task.status.state.value
    finally:
        await plain.aclose()  # its gRPC channel; an HTTP pool it shares stays open
    ctx.note(f"without activation the task reached {state}")
    _limit(ctx, leaks, "no prompt envelope without activation")


async def echo(ctx: CheckContext) -> None:
    """EXT-ECHO: every answer to an activated request echoes the URI in A2A-Extensions."""
    s = ctx.session
    ctx.step(1)
    if not any(x.activated for x in s.seen):
        await s.ensure_prompts(1, "EXT-ECHO")
    activated = [x for x in s.seen if x.activated]
    ctx.require(
        bool(activated),
        "at least one recorded answer to an activated request",
        "none recorded: nothing to judge",
    )
    ctx.step(2)
    missing = [x for x in activated if not x.echoes(s.version)]
    if s.grpc:
        header = "a2a-extensions metadata"
    else:
        header = "A2A-Extensions header" + (" (or X-A2A-Extensions)" if s.version == "0.3" else "")
    ctx.note(f"{len(activated)} answers to activated requests inspected")
    if missing:
        x = missing[0]
        ctx.expect(
            False,
            f"{EXTENSION_URI} in the {header} of every answer to an activated request",
            f"{len(missing)} of {len(activated)} answers without it, e.g. {x.method} {x.url} "
            f"-> {_status_text(x)} with {header}: {', '.join(x.echoed + x.echoed_v03) or 'none'}",
        )


def _status_text(x: Seen) -> str:
    return f"gRPC {x.grpc_status or 'no status'}" if x.method == "GRPC" else f"HTTP {x.status}"


async def strict(ctx: CheckContext) -> None:
    """EXT-STRICT: every envelope the agent emitted passes the strict check."""
    s = ctx.session
    ctx.step(1)
    await s.ensure_prompts(1, "EXT-STRICT")
    envelopes = _first_sightings(s.sightings)
    ctx.note(f"{len(envelopes)} distinct envelope(s) checked")
    ctx.step(2)
    problems: list[str] = []
    for x in envelopes:
        for f in check_prompt(x.raw, mode="strict", now=x.at - _CLOCK_GRACE):
            if f.severity == "error":
                problems.append(f"task {x.task_id}: {f.pointer or '/'}: {f.message} [{f.section}]")
            else:
                ctx.warn(f"task {x.task_id}: {f.pointer or '/'}: {f.message} [{f.section}]")
    _limit(ctx, problems, "an envelope that passes every MUST of the field requirements")


async def unique_ids(ctx: CheckContext) -> None:
    """EXT-UNIQUE: prompt_ids are unique across prompts (S-5)."""
    s = ctx.session
    ctx.step(1)
    await s.ensure_prompts(2, "EXT-UNIQUE")
    tasks_of: dict[Any, list[str]] = {}
    order: dict[str, list[Any]] = {}
    for x in s.sightings:
        if x.state.value != "input_required" or not isinstance(x.prompt_id, str):
            continue
        owners = tasks_of.setdefault(x.prompt_id, [])
        if x.task_id not in owners:
            owners.append(x.task_id)
        seq = order.setdefault(x.task_id, [])
        if not seq or seq[-1] != x.prompt_id:
            seq.append(x.prompt_id)
    ctx.note(f"{len(tasks_of)} prompt_id(s) over {len(order)} task(s)")
    ctx.step(2)
    shared = [
        f"prompt_id {pid} on {len(owners)} tasks ({', '.join(owners[:3])})"
        for pid, owners in tasks_of.items()
        if len(owners) > 1
    ]
    again = [
        f"task {tid}: prompt_id {pid} issued again for a later prompt"
        for tid, seq in order.items()
        for pid in {p for p in seq if seq.count(p) > 1}
    ]
    _limit(ctx, shared + again, "a distinct prompt_id for every prompt")


async def schema_size(ctx: CheckContext) -> None:
    """EXT-SCHEMA-SIZE: no response_schema over 64 KiB serialized (S-2)."""
    s = ctx.session
    ctx.step(1)
    await s.ensure_prompts(1, "EXT-SCHEMA-SIZE")
    sizes: list[tuple[Sighting, int]] = []
    for x in _first_sightings(s.sightings):
        schema = x.raw.get("response_schema") if isinstance(x.raw, dict) else None
        if schema is not None:
            sizes.append((x, len(dumps_compact(schema).encode("utf-8"))))
    if sizes:
        ctx.note(f"largest response_schema: {max(n for _, n in sizes)} bytes")
    ctx.step(2)
    over = [
        f"task {x.task_id}: response_schema of {n} bytes (limit {MAX_SCHEMA_BYTES})"
        for x, n in sizes
        if n > MAX_SCHEMA_BYTES
    ]
    _limit(ctx, over, "a response_schema of at most 64 KiB (compact UTF-8 JSON)")
