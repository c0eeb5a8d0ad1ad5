"""The scenarios of hitl-prompt/v1 §Conformance, CF-1 .. CF-7, step by step.

Step numbers are the spec's; their texts live in the table of
:mod:`hitl_nb.conformance._checks`.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from hitl_nb.errors import A2AError, PromptConflict, ResponseInvalid
from hitl_nb.spec import (
    EXTENSION_URI,
    bundled_schema,
    check_prompt,
    find_envelope,
)

from ._context import CheckContext
from ._records import Answer, Prompted
from ._report import CheckResult
from ._session import left

__all__ = ["UI_TERMS", "cf1", "cf2", "cf3", "cf5", "cf6", "cf7", "expect_rejection"]

S_ACCEPT = "§Response Envelope / Acceptance and rejection"

#: The gRPC status codes that carry hitl-prompt/v1's HTTP statuses. The extension names
#: HTTP statuses only; on gRPC (A2A 1.0 §10.6) the error is named by the reason of the
#: status' ErrorInfo detail, and its code is the one google/rpc/code.proto maps to that
#: HTTP status: 409 Conflict is ABORTED (or ALREADY_EXISTS); 422 has no code of its own,
#: and INVALID_ARGUMENT is the code of a request whose content is refused.
GRPC_CODES: dict[int, tuple[str, ...]] = {
    409: ("ABORTED", "ALREADY_EXISTS"),
    422: ("INVALID_ARGUMENT",),
}


def expect_rejection(ctx: CheckContext, answer: Answer, cls: type[A2AError]) -> None:
    """The answer was refused with ``cls``: its HTTP status (HTTP+JSON), its JSON-RPC code,
    or its gRPC status code and ErrorInfo reason (gRPC), with the message the spec's mapping
    names (a different message only warns)."""
    status, code, message = cls.http_status, cls.code, cls.default_message
    if ctx.grpc:
        codes = GRPC_CODES.get(status, ())
        wanted = f"gRPC {' or '.join(codes)}, reason {cls.reason} ({status} / {message})"
    elif ctx.rest:
        wanted = f"HTTP {status} / {message}"
    else:
        wanted = f"JSON-RPC error {code} / {message}"
    ctx.require(not answer.accepted, f"a rejection: {wanted}", f"accepted ({answer.describe()})")
    ctx.require(isinstance(answer.error, cls), f"a rejection: {wanted}", answer.describe())
    if ctx.grpc:
        ctx.require(
            answer.grpc_status in codes,
            f"gRPC status {' or '.join(codes)}",
            answer.describe(),
        )
    elif ctx.rest:
        ctx.require(answer.status == status, f"HTTP status {status}", answer.describe())
    elif isinstance(answer.error, A2AError) and answer.error.message != message:
        ctx.warn(
            f"the JSON-RPC error message is {answer.error.message!r}; the spec's mapping "
            f"names {message!r} (the code {code} is right)"
        )


async def accepted_and_resumed(ctx: CheckContext, p: Prompted, answer: Answer) -> None:
    """The answer succeeded and the task left INPUT_REQUIRED within the transition timeout."""
    ctx.require(answer.accepted, "the response accepted (success)", answer.describe(), S_ACCEPT)
    wait = ctx.settings.transition_timeout
    task = await ctx.session.wait_left(p.task_id, p.prompt_id, wait)
    ctx.require(
        task is not None,
        f"the task out of INPUT_REQUIRED within {wait:g} s of the accepted response",
        f"task {p.task_id} still INPUT_REQUIRED on prompt {p.prompt_id} after {wait:g} s",
        S_ACCEPT,
    )


# -- CF-1 .. CF-3 ---------------------------------------------------------------------------


async def cf1(ctx: CheckContext) -> None:
    """CF-1: prompt_id correlation (AC-1)."""
    s = ctx.session
    ctx.step(1)
    how = s.activation_headers_name + ("" if s.grpc else " header")
    ctx.note(f"activated with the {how} on every request")
    ctx.step(2)
    p = await ctx.drive("CF-1")
    ctx.step(3)
    bad = [
        f
        for f in check_prompt(p.raw, mode="strict")
        if f.pointer == "/prompt_id" and f.severity == "error"
    ]
    ctx.require(
        not bad,
        "a prompt_id that is an RFC 4122 UUID",
        f"prompt_id {p.raw.get('prompt_id')!r}: {bad[0].message}" if bad else "",
        "§Prompt Envelope / Field requirements",
    )
    ctx.step(4)
    valid = ctx.valid_payload(p)
    first = await s.answer(p, valid)
    ctx.step(5)
    await accepted_and_resumed(ctx, p, first)
    ctx.step(6)
    second = await s.answer(p, valid)
    ctx.step(7)
    expect_rejection(ctx, second, PromptConflict)


async def cf2(ctx: CheckContext) -> None:
    """CF-2: schema-valid response accepted (AC-2)."""
    s = ctx.session
    ctx.step(1)
    p = await ctx.drive("CF-2")
    ctx.require(
        p.response_schema.get("type") == "object",
        'a response_schema declaring type "object"',
        f"type {p.response_schema.get('type')!r}",
        "§Prompt Envelope / Field requirements",
    )
    ctx.step(2)
    answer = await s.answer(p, ctx.valid_payload(p))
    ctx.step(3)
    if ctx.grpc:
        ok, wanted = answer.accepted and answer.grpc_status == "OK", "gRPC status OK"
    else:
        ok = answer.accepted and answer.status == 200
        wanted = "HTTP 200 OK" + ("" if ctx.rest else " with a JSON-RPC result")
    ctx.require(ok, wanted, answer.describe(), S_ACCEPT)
    ctx.step(4)
    await accepted_and_resumed(ctx, p, answer)


async def cf3(ctx: CheckContext) -> None:
    """CF-3: schema-invalid response gets 422 (AC-3)."""
    s = ctx.session
    ctx.step(1)
    p = await ctx.drive("CF-3")
    ctx.step(2)
    invalid, how = ctx.invalid_payload(p)
    ctx.note(f"invalid payload: {how}: {json.dumps(invalid)[:200]}")
    answer = await s.answer(p, invalid)
    ctx.step(3)
    expect_rejection(ctx, answer, ResponseInvalid)
    assert isinstance(answer.error, ResponseInvalid)
    error = answer.error
    # Read wherever a real agent puts them; a carriage other than the array is a
    # warning, unless there is no validation_errors member at all (the MUST).
    no_array = [d for d in error.deviations if d.startswith("no validation_errors array")]
    ctx.require(
        bool(error.validation_errors) and not no_array,
        "a validation_errors array with at least one entry in the error",
        (no_array[0] if no_array else "no validation_errors")
        + f" ({answer.describe()}; error data: {json.dumps(error.data)[:300]})",
        S_ACCEPT,
    )
    for deviation in error.deviations:
        ctx.warn(deviation)
    ctx.step(4)
    task = await s.get_task(p.task_id)
    ctx.require(
        not left(task.status, p.prompt_id),
        f"the task still INPUT_REQUIRED on prompt {p.prompt_id}",
        f"state {task.status.state.value}" + _open_prompt_text(find_envelope(_meta(task.status))),
        S_ACCEPT,
    )
    ctx.step(5)
    retry = await s.answer(p, ctx.valid_payload(p))
    await accepted_and_resumed(ctx, p, retry)


def _meta(status: Any) -> Any:
    return status.message.metadata if status.message is not None else None


def _open_prompt_text(raw: Any) -> str:
    pid = raw.get("prompt_id") if isinstance(raw, dict) else None
    return f" with prompt {pid}" if pid else " without a prompt envelope"


# -- CF-5 --------------------------------------------------------------------------------

#: Words that would tie an envelope to a UI, a delivery channel or an identity directory.
UI_TERMS = frozenset(
    "ui widget widgets display render layout form html markdown button screen color colour "
    "channel delivery deliver slack email sms webhook notify notification push teams "
    "user username user_id userid directory ldap identity idp assignee recipient".split()
)
_OBLIGATION = re.compile(
    r"\b(?:MUST|SHALL|REQUIRED)\b(?! NOT)[^.]{0,40}?\b(?:display|present|show|render)", re.I
)


def ui_members(names: Any) -> list[str]:
    """The member names that name a UI, channel or identity concept."""
    out = []
    for name in names:
        words = re.split(r"[^a-z0-9]+", str(name).lower())
        if UI_TERMS.intersection(words) or str(name).lower() in UI_TERMS:
            out.append(str(name))
    return out


def _texts(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [
            t
            for k, v in node.items()
            for t in ([v] if k in ("description", "title") and isinstance(v, str) else _texts(v))
        ]
    if isinstance(node, list):
        return [t for v in node for t in _texts(v)]
    return []


async def cf5(ctx: CheckContext) -> None:
    """CF-5: transport-only, no UI assumptions (AC-5)."""
    s = ctx.session
    ctx.step(1)
    schema = bundled_schema("envelope")
    members = list(schema.get("properties", {}))
    ctx.require(bool(members), "an envelope schema with properties", "none")
    if not s.prompt_tasks():
        await ctx.drive("CF-5")
    emitted = {json.dumps(x.raw, sort_keys=True): x for x in s.sightings if isinstance(x.raw, dict)}
    ctx.note(f"inspected the envelope schema and {len(emitted)} envelope(s) the agent emitted")
    ctx.step(2)
    ctx.expect(
        not ui_members(members),
        "no envelope schema member naming a UI, channel or identity directory",
        f"members {ui_members(members)}",
    )
    for sighting in emitted.values():
        extra = [k for k in sighting.raw if k not in members]
        ui = ui_members(sighting.raw)
        ctx.expect(
            not extra and not ui,
            f"only the envelope's transport members ({', '.join(members)})",
            f"task {sighting.task_id}: members {extra or ui} in the emitted envelope",
        )
    ctx.step(3)
    texts = _texts(schema)
    ext = s.card.extension(EXTENSION_URI) if s.card is not None else None
    if ext is not None and ext.description:
        texts.append(ext.description)
    found = [t for t in texts if _OBLIGATION.search(t)]
    ctx.expect(
        not found,
        'no "MUST display" / "MUST present to a user" obligation on the agent',
        "; ".join(repr(t[:120]) for t in found),
    )


# -- CF-6 --------------------------------------------------------------------------------


async def cf6(ctx: CheckContext) -> None:
    """CF-6: outbox replay survives disconnect (AC-6)."""
    s = ctx.session
    wait = ctx.settings.replay_timeout
    ctx.step(1)
    ctx.require(
        s.streaming(),
        "an agent that streams (capabilities.streaming), to subscribe and replay",
        "capabilities.streaming is not true in the card",
    )
    p = await ctx.drive("CF-6")
    ctx.step(2)
    live = s.subscription(p.task_id, None)
    await live.open()
    try:
        first = await live.next(wait)
    finally:
        await live.cut()
    ctx.note(
        f"cut the SubscribeToTask {'call' if s.grpc else 'connection'} "
        + ("after its first event" if first is not None else "(the agent had closed it)")
    )
    ctx.step(3)
    replay = s.subscription(p.task_id, p.before_id)
    if s.grpc:
        how = "a new SubscribeToTask call (gRPC numbers no events: the task snapshot it opens with)"
    elif p.before_id:
        how = f"Last-Event-ID {p.before_id}"
    else:
        how = "a resubscription (no event ids)"
    await replay.open()
    seen: list[str] = []
    found: Any = None
    try:
        while found is None:
            item = await replay.next(wait)
            if item is None:
                break
            _, event = item
            status = getattr(event, "status", None)
            if status is None:
                seen.append(type(event).__name__)
                continue
            s.observe(p.task_id, status, "CF-6 replay")
            raw = find_envelope(_meta(status))
            seen.append(status.state.value + (" with envelope" if raw is not None else ""))
            if raw is not None or status.state.value == "input_required":
                found = raw if raw is not None else False
    except asyncio.TimeoutError:
        seen.append(f"silence for {wait:g} s")
    finally:
        await replay.cut()
    ctx.require(
        isinstance(found, dict),
        f"the prompt envelope replayed after reconnecting ({how})",
        "events: " + (", ".join(seen) or "none"),
        "§Outbox / Replay",
    )
    ctx.step(4)
    ctx.require(
        found.get("prompt_id") == p.prompt_id,
        f"the replayed prompt_id {p.prompt_id}",
        f"prompt_id {found.get('prompt_id')!r}",
        "§Outbox / Replay",
    )
    ctx.require(
        found.get("response_schema") == p.response_schema,
        "the replayed response_schema identical to the one first emitted",
        f"a different response_schema: {json.dumps(found.get('response_schema'))[:200]}",
        "§Outbox / Replay",
    )
    ctx.step(5)
    answer = await s.answer(p, ctx.valid_payload(p))
    await accepted_and_resumed(ctx, p, answer)


# -- CF-7 --------------------------------------------------------------------------------


async def cf7(ctx: CheckContext) -> None:
    """CF-7: the harness, configured with the extension URI, reports CF-1..CF-6 green."""
    ctx.step(1)
    ctx.note(f"configured with {EXTENSION_URI}")
    ran = {r.id: r for r in ctx.done}
    ctx.step(2)
    for cid in ("CF-1", "CF-2", "CF-3", "CF-4", "CF-5", "CF-6"):
        r = ran.get(cid)
        ctx.expect(
            r is not None and r.passed,
            f"{cid} green",
            "not run" if r is None else _short(r),
        )


def _short(r: CheckResult) -> str:
    if r.error:
        return f"error: {r.error[:160]}"
    f = r.failures[0] if r.failures else None
    if f is None:
        return r.outcome
    return f"{r.outcome} at {f.step or 'its start'} (expected {f.expected[:120]})"
