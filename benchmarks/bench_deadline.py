"""Deadline to policy action: how long after a prompt's deadline its registration's
policy acts (hitl_nb/gateway/_deadline_desk.py), for each of the four policies.

Run by hand from the repository root::

    python benchmarks/bench_deadline.py [--trials 20] [--policy all|remind|escalate|default|cancel]
                                        [--db URL]

A real gateway (SQLite by default; ``--db postgresql://...`` for PostgreSQL) on one
loop and the mock agent in its own thread; each trial starts a task whose prompt has a
2 s deadline, registers it with the policy, and measures, against the deadline the
envelope states (both wall clock):

- ``default``, ``cancel``: the time of the action's audit entry (the answer accepted by
  the agent, the task cancelled);
- ``escalate`` (``before`` 0: at the deadline itself, to a team channel): the time of
  its audit entry (the notes written), and the time the message reached a webhook
  receiver on 127.0.0.1 (a Slack-compatible incoming webhook; the only team channel,
  so each message is an escalation). Only this run has notifications on;
- ``remind``: the time the prompt is seen closed, polled every 10 ms (it writes no
  audit entry of its own), so this figure is up to 10 ms late.

Trials overlap (one started every 0.25 s) as a hub's do. Target: p95 <= 1 s past the
deadline.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hitl_nb.client import HitlClient  # noqa: E402
from hitl_nb.gateway import AgentPool, Caller, Gateway, GatewaySettings, Notifier  # noqa: E402
from hitl_nb.gateway._db_url import open_store  # noqa: E402
from hitl_nb.mock_agent import MockAgent  # noqa: E402
from tests.helpers.tiny_server import Conn, Request, serve  # noqa: E402

ALICE = Caller("alice", "Alice")
#: The team channel escalations go to (named by a host no agent here has).
CHANNEL = "ops.example.org"
POLICIES: dict[str, dict[str, Any]] = {
    "remind": {"policy": "remind"},
    "escalate": {"policy": "escalate", "channel": CHANNEL, "before": 0},
    "default": {"policy": "default", "answer": {"approve": False}},
    "cancel": {"policy": "cancel"},
}
_REGISTRATION = re.compile(r"hitl-registration=([0-9a-f]+)")


async def start_task(url: str, scenario: str, **options: Any) -> Any:
    async with HitlClient(url) as client:
        return await client.send({"scenario": scenario, **options})


async def _acted(gw: Gateway, reg_id: str, prompt_id: str, policy: str) -> float:
    """When the policy acted (see the module docstring), by the wall clock."""
    while True:
        if policy == "remind":
            row = await gw.store.prompt(reg_id, prompt_id)
            if row is not None and row.closed is not None:
                return time.time()
            await asyncio.sleep(0.01)
            continue
        entries = [e for e in await gw.store.audit([reg_id]) if e.display]
        if entries:
            return entries[0].at
        await asyncio.sleep(0.02)


async def _trial(
    gw: Gateway, agent_url: str, policy: str, deadlines: dict[str, float]
) -> tuple[str, float]:
    task = await start_task(agent_url, "deadline", deadline_seconds=2)
    _, reg = await gw.register(ALICE, agent_url, task.id, POLICIES[policy])
    prompt_id = reg["prompts"][0]["prompt_id"]
    row = await gw.store.prompt(reg["id"], prompt_id)
    assert row is not None and row.deadline is not None
    deadlines[reg["id"]] = row.deadline
    return reg["id"], await _acted(gw, reg["id"], prompt_id, policy) - row.deadline


def _notifier(gw: Gateway) -> Notifier:
    link = "https://hub.example.org/"
    return Notifier(gw.settings, gw.store, lambda: link, hub=True, owner=gw.replica)


async def _run(
    trials: int, policy: str, db: str | None, hook_url: str | None
) -> tuple[list[float], dict[str, float]]:
    folder = Path(tempfile.mkdtemp(prefix="bench-deadline-"))
    store = open_store(db, folder)
    notify: Callable[[Gateway], Notifier] | None = None
    more: dict[str, Any] = {}
    if policy == "escalate":
        assert hook_url is not None
        more = {"notify_team_webhooks": {CHANNEL: hook_url}, "notify_every": 0.0}
        notify = _notifier
    settings = GatewaySettings(watch=False, show_all=False, **more)
    gw = Gateway(store, AgentPool([], 5.0), settings, notify=notify)
    await gw.start()
    deadlines: dict[str, float] = {}
    try:
        with MockAgent() as agent:
            jobs = []
            for _ in range(trials):
                jobs.append(asyncio.ensure_future(_trial(gw, agent.url, policy, deadlines)))
                await asyncio.sleep(0.25)
            late = [lateness for _, lateness in await asyncio.gather(*jobs)]
            if policy == "escalate":
                await asyncio.sleep(1.0)  # the last messages on their way
            return late, deadlines
    finally:
        await gw.close()


def _figures(what: str, late: list[float]) -> str:
    late = sorted(late)
    p95 = late[min(len(late) - 1, round(0.95 * (len(late) - 1)))]
    return (
        f"{what} over {len(late)} trials: median {statistics.median(late) * 1000:.0f} ms, "
        f"p95 {p95 * 1000:.0f} ms, max {late[-1] * 1000:.0f} ms (target p95 <= 1000 ms)"
    )


def main() -> None:
    """Run the trials of each policy asked and print the median and p95."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--policy", choices=["all", *POLICIES], default="all")
    parser.add_argument("--db", default=None)
    args = parser.parse_args()
    arrived: dict[str, float] = {}

    def hook(request: Request, conn: Conn) -> None:
        now = time.time()
        for reg_id in _REGISTRATION.findall(request.body.decode("utf-8", "replace")):
            arrived.setdefault(reg_id, now)
        conn.answer({"ok": True})

    chosen = list(POLICIES) if args.policy == "all" else [args.policy]
    with serve(hook) as receiver:
        for policy in chosen:
            late, deadlines = asyncio.run(
                _run(args.trials, policy, args.db, receiver.url + "/hooks/ops")
            )
            print(_figures(f"{policy}: deadline to action", late))
            if policy == "escalate":
                told = [arrived[r] - at for r, at in deadlines.items() if r in arrived]
                print(_figures("escalate: deadline to the message at the receiver", told))
                if len(told) < len(deadlines):
                    print(f"  ({len(deadlines) - len(told)} messages did not arrive)")


if __name__ == "__main__":
    main()
