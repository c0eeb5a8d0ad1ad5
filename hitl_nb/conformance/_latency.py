"""CF-4: resume latency. t0 right before the answer is sent, t1 when a stream shows the
task leaving INPUT_REQUIRED; the verdict is the 95th percentile against 1000 ms (AC-4).
"""

from __future__ import annotations

import asyncio
import math
import time
from contextlib import aclosing
from typing import Any

from hitl_nb.client import StatusEvent, TaskEvent
from hitl_nb.errors import A2AError

from ._context import CheckContext
from ._records import Prompted
from ._session import left

__all__ = ["cf4", "percentile"]

S_ACCEPT = "§Response Envelope / Acceptance and rejection"


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank ``q`` percentile (0 < q <= 100) of ``values``."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


async def _resume_time(
    ctx: CheckContext, p: Prompted, payload: dict[str, Any]
) -> tuple[float, str]:
    """Send a valid answer and time until a stream shows the task leaving INPUT_REQUIRED."""
    s = ctx.session
    assert s.client is not None
    metadata = s.response_message(p, p.prompt_id, payload)
    t0 = time.perf_counter()
    if s.streaming():
        events = s.client.stream(
            f"Response to prompt {p.prompt_id}",
            task_id=p.task_id,
            context_id=p.context_id,
            metadata=metadata,
        )
        async with aclosing(events):
            async for event in events:
                if isinstance(event, (TaskEvent, StatusEvent)) and event.task_id == p.task_id:
                    status = event.task.status if isinstance(event, TaskEvent) else event.status
                    s.observe(p.task_id, status, "CF-4 answer stream")
                    if left(status, p.prompt_id):
                        return (time.perf_counter() - t0) * 1000, "stream"
    else:
        answer = await s.answer(p, payload)
        if not answer.accepted:
            raise answer.error or RuntimeError("answer refused")
    # The stream closed without showing the change (or there is none): poll the task.
    while True:
        task = await s.get_task(p.task_id)
        if left(task.status, p.prompt_id):
            return (time.perf_counter() - t0) * 1000, "GetTask"
        await asyncio.sleep(0.005)


async def cf4(ctx: CheckContext) -> None:
    """CF-4: resume latency <= 1 second (AC-4), p95 over the trials."""
    trials, budget = ctx.settings.trials, ctx.settings.latency_budget_ms
    timeout = ctx.settings.resume_timeout
    if trials < 20:
        ctx.note(f"{trials} trials: the spec asks for at least 20")
    times: list[float] = []
    ways: set[str] = set()
    for trial in range(1, trials + 1):
        ctx.step(1)
        p = await ctx.drive(f"CF-4 trial {trial}")
        payload = ctx.valid_payload(p)
        ctx.step(2)
        ctx.step(3)
        try:
            ms, way = await asyncio.wait_for(_resume_time(ctx, p, payload), timeout)
        except asyncio.TimeoutError:
            ctx.result.metrics["trials_ms"] = [round(t, 3) for t in times]
            ctx.require(
                False,
                f"the task out of INPUT_REQUIRED within {budget:g} ms of sending (trial {trial})",
                f"still INPUT_REQUIRED {timeout:g} s after the response was sent "
                f"(task {p.task_id}); stopped after {trial} trial(s)",
            )
        except A2AError as exc:
            ctx.require(False, "the valid response accepted", f"trial {trial}: {exc!r}", S_ACCEPT)
        times.append(ms)
        ways.add(way)
    p50, p95, worst = percentile(times, 50), percentile(times, 95), max(times)
    ctx.result.metrics.update(
        trials=len(times),
        p50_ms=round(p50, 3),
        p95_ms=round(p95, 3),
        max_ms=round(worst, 3),
        budget_ms=budget,
        trials_ms=[round(t, 3) for t in times],
        observed_by=sorted(ways),
        summary=f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {worst:.1f} ms over "
        f"{len(times)} trials (budget {budget:g} ms)",
    )
    if "GetTask" in ways:
        ctx.note("some transitions were observed by polling GetTask: the answer stream closed")
    ctx.step(4)
    ctx.require(
        p95 <= budget,
        f"95th percentile of t1 - t0 <= {budget:g} ms",
        f"p95 {p95:.1f} ms (p50 {p50:.1f} ms, max {worst:.1f} ms, {len(times)} trials)",
    )
