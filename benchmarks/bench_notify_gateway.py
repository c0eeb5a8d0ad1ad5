"""Notifications through the gateway: from the agent's prompt opening to the message at
the SMTP server or the webhook receiver, the gateway's CPU per message, and a burst of
prompts beside a stream of answers, with notifications and without, in one run.

    python benchmarks/bench_notify_gateway.py [--prompts 60] [--rate 4] [--burst 2000]
                                              [--answers 150]

The gateway is the one the hub service and the server extension run (``Gateway`` on a
SQLite store, watching each registered task: the mock agent streams), in this process;
the mock agent runs in a child process, and so do the receivers (aiosmtpd and a plain
HTTP receiver, ``bench_notify.receivers``), so this process's CPU is the gateway's.

1. **Opened to arrived**, median and p95: ``--prompts`` tasks, ``--rate`` a second, each
   registered while it is still working (``start_delay_seconds``); its prompt opens at
   the agent half a second later and reaches the gateway through the task's stream.
   Even tasks ask ``specific:user<i>`` (an email to user<i>@example.org), odd ones
   ``consensus:2`` (the team channel's webhook). From the agent's own timestamp of the
   prompt (``status.timestamp`` of ``input-required``) to the receiver's clock when the
   message arrived. ``notify_every`` is 0 here so no message waits for a digest.
2. **CPU per message**: this process's CPU time for part 1, with notifications and
   again without (the same tasks, watched and recorded alike), the difference divided by
   the messages sent.
3. **The burst**: ``--burst`` tasks, each with an open prompt, registered as fast as the
   gateway takes them (prompts for ten people and the team channel), while ``--answers``
   other tasks are answered through the gateway one after another: the messages sent,
   the time from the burst's start until nothing is left to send, and the answers'
   median and p95, next to the same run without notifications.

The load average is printed with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import sys
import tempfile
import time
from datetime import datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._signals import end_on_sigterm  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_notify import load, p95, receivers, stats  # noqa: E402

from hitl_nb.client import HitlClient  # noqa: E402
from hitl_nb.gateway import AgentPool, Caller, Gateway, GatewaySettings, Notifier  # noqa: E402
from hitl_nb.gateway._sqlite import SQLiteStore  # noqa: E402

ALICE = Caller("alice", "Alice")


def agent_process(pipe: Connection) -> None:
    """A mock agent in a process of its own; its URL sent once; runs until "stop"."""
    sys.path.insert(0, str(ROOT))
    from hitl_nb.mock_agent import MockAgent

    with MockAgent() as agent:
        pipe.send(agent.url)
        pipe.recv()


def settings(smtp_port: int | None, hook: str, **more: Any) -> GatewaySettings:
    """Part 1 streams every task (``max_streams`` given); the burst streams the first 20
    (the default), the rest polled."""
    if smtp_port is None:
        return GatewaySettings(poll_interval=5.0, **more)
    return GatewaySettings(
        poll_interval=5.0,
        notify_smtp_host="127.0.0.1",
        notify_smtp_port=smtp_port,
        notify_smtp_security="none",
        notify_from="hitl@example.org",
        notify_address_template="{name}@example.org",
        notify_team_webhooks={"*": hook + "/team"},
        **more,
    )


async def gateway(folder: Path, chosen: GatewaySettings) -> Gateway:
    store = SQLiteStore(folder / f"gateway-{time.monotonic_ns()}.sqlite")
    pool = AgentPool([], 30.0, streams=chosen.max_streams)
    notify = None
    if chosen.notifying:

        def notify(gw: Gateway) -> Notifier:
            return Notifier(chosen, gw.store, lambda: "https://hub.example.org/", hub=True)

    gw = Gateway(store, pool, chosen, notify=notify)
    await gw.start()
    return gw


async def start(agent: str, i: int, delay: float = 0.0) -> str:
    options: dict[str, Any] = {"start_delay_seconds": delay} if delay else {}
    if i % 2 == 0:  # part 1: a person each; the burst: ten people
        options.update(scenario="specific", responder=f"user{i}" if delay else f"user{i % 10}")
    else:
        options.update(scenario="consensus", n=2)
    async with HitlClient(agent) as client:
        task = await client.send(options)
    return str(task.id)  # type: ignore[union-attr]


async def opened_at(agent: str, task_id: str) -> float:
    async with HitlClient(agent) as client:
        task = await client.get_task(task_id)
    stamp = task.status.timestamp
    assert stamp, "the agent gave no timestamp"
    return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()


def arrivals(pipe: Connection) -> dict[str, float]:
    pipe.send("arrivals")
    got: dict[str, float] = pipe.recv()
    return got


async def latency_run(
    folder: Path, agent: str, smtp_port: int | None, hook: str, pipe: Connection, args: Any
) -> tuple[list[float], float, int]:
    """Part 1 (and, without SMTP, its peer for the CPU figure)."""
    gw = await gateway(folder, settings(smtp_port, hook, notify_every=0.0, max_streams=10_000))
    before = len(arrivals(pipe))
    tasks = []
    cpu = time.process_time()
    for i in range(args.prompts):
        task_id = await start(agent, i, delay=0.5)
        await gw.register(ALICE, agent, task_id)
        tasks.append(task_id)
        await asyncio.sleep(1 / args.rate)
    # every prompt seen (and, with notifications, every message arrived)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        seen = len(await gw.store.open_prompts())
        got = len(arrivals(pipe)) - before
        if seen >= args.prompts and (smtp_port is None or got >= args.prompts):
            break
        await asyncio.sleep(0.1)
    used = time.process_time() - cpu
    outbox = await gw.store.outbox.states()
    await gw.close()
    sent = outbox.get("sent", 0)
    if smtp_port is None:
        return [], used, 0
    arrived = arrivals(pipe)
    # each message's key is its note's; the note names the prompt: match by registration
    notes = _keys(gw)
    latencies = []
    for task_id in tasks:
        key = notes.get(task_id)
        if key is not None and key in arrived:
            latencies.append(arrived[key] - await opened_at(agent, task_id))
    return latencies, used, sent


def _keys(gw: Gateway) -> dict[str, str]:
    """task id -> the key of its ``opened`` note (the Message-ID / Idempotency-Key)."""
    import sqlite3
    from contextlib import closing

    path = gw.store.path  # type: ignore[attr-defined]
    with closing(sqlite3.connect(path)) as db:
        rows = db.execute(
            "SELECT r.task_id, n.key FROM notify_notes n JOIN registrations r ON r.id = n.reg_id "
            "WHERE n.kind = 'opened'"
        ).fetchall()
    return {task_id: key for task_id, key in rows}


async def burst_run(
    folder: Path, agent: str, smtp_port: int | None, hook: str, pipe: Connection, args: Any
) -> tuple[list[float], int, float]:
    """Part 3: the burst beside a stream of answers; (answer times, sent, drain time)."""
    gw = await gateway(folder, settings(smtp_port, hook, notify_remind_before=0.0))
    answering = []
    for _ in range(args.answers):  # prompts to answer, registered before the burst
        async with HitlClient(agent) as client:
            task = await client.send({"scenario": "approval"})
        _, view = await gw.register(ALICE, agent, str(task.id))  # type: ignore[union-attr]
        answering.append((view["id"], view["prompts"][0]["prompt_id"]))
    burst_ids = [await start(agent, i) for i in range(args.burst)]
    before = len(arrivals(pipe)) if smtp_port is not None else 0
    began = time.monotonic()

    async def burst() -> None:
        for task_id in burst_ids:
            await gw.register(ALICE, agent, task_id)

    async def answers() -> list[float]:
        times = []
        for reg_id, prompt_id in answering:
            t0 = time.perf_counter()
            reply = await gw.answer(reg_id, prompt_id, ALICE, {"approve": True})
            times.append(time.perf_counter() - t0)
            assert reply.status == 200, reply.body
        return times

    flood = asyncio.ensure_future(burst())
    times = await answers()
    await flood
    drained = 0.0
    if smtp_port is not None:
        while (await gw.store.outbox.states()).get("pending", 0):
            await asyncio.sleep(0.1)
        drained = time.monotonic() - began
    sent = (len(arrivals(pipe)) - before) if smtp_port is not None else 0
    await gw.close()
    return times, sent, drained


async def main_async(args: Any, smtp_port: int, hook: str, agent: str, pipe: Connection) -> None:
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        if "1" in args.parts or "2" in args.parts:
            await _first_parts(folder, agent, smtp_port, hook, pipe, args)
        if "3" in args.parts:
            await _burst_part(folder, agent, smtp_port, hook, pipe, args)


async def _first_parts(
    folder: Path, agent: str, smtp_port: int, hook: str, pipe: Connection, args: Any
) -> None:
    latencies, cpu_on, sent = await latency_run(folder, agent, smtp_port, hook, pipe, args)
    email = [v for i, v in enumerate(latencies) if i % 2 == 0]
    hooks = [v for i, v in enumerate(latencies) if i % 2 == 1]
    print(f"1. opened -> SMTP accepted  {stats(email)}   [{load()}]")
    print(f"   opened -> webhook arrived {stats(hooks)}   [{load()}]")
    _, cpu_off, _ = await latency_run(folder, agent, None, hook, pipe, args)
    per = (cpu_on - cpu_off) / max(sent, 1) * 1000
    print(
        f"2. CPU: {cpu_on:.2f} s with notifications, {cpu_off:.2f} s without, "
        f"{sent} messages: {per:.2f} ms per message   [{load()}]"
    )


async def _burst_part(
    folder: Path, agent: str, smtp_port: int, hook: str, pipe: Connection, args: Any
) -> None:
    times_on: list[float] = []
    times_off: list[float] = []
    for _ in range(args.repeat):  # alternating, so both see the same machine
        off, _, _ = await burst_run(folder, agent, None, hook, pipe, args)
        on, burst_sent, drained = await burst_run(folder, agent, smtp_port, hook, pipe, args)
        times_off += off
        times_on += on
        print(
            f"3. burst of {args.burst}: {burst_sent} messages sent, drained in {drained:.1f} s "
            f"[{load()}]"
        )
    print(f"   answers during it, notifications on:  {stats(times_on)}")
    print(f"   answers during it, notifications off: {stats(times_off)}")
    print(f"   p95 ratio on/off: {p95(times_on) / p95(times_off):.2f}   [{load()}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=60)
    parser.add_argument("--rate", type=float, default=4.0)
    parser.add_argument("--burst", type=int, default=2000)
    parser.add_argument("--answers", type=int, default=150)
    parser.add_argument("--parts", default="123", help="which parts to run (default: 123)")
    parser.add_argument("--repeat", type=int, default=2, help="burst runs, each on and off")
    args = parser.parse_args()
    ctx = multiprocessing.get_context("spawn")
    mine, theirs = ctx.Pipe()
    recv = ctx.Process(target=receivers, args=(theirs,), daemon=True)
    recv.start()
    smtp_port, hook = mine.recv()
    agent_mine, agent_theirs = ctx.Pipe()
    agent = ctx.Process(target=agent_process, args=(agent_theirs,), daemon=True)
    agent.start()
    agent_url = agent_mine.recv()
    try:
        asyncio.run(main_async(args, smtp_port, hook, agent_url, mine))
    finally:
        mine.send("stop")
        agent_mine.send("stop")
        recv.join(10)
        agent.join(10)


if __name__ == "__main__":
    end_on_sigterm()
    main()
