"""A Slack app's button, measured: from the signed click received to the agent's
answer, and to the message updated (issue 42's target: p95 <= 1 s with a local agent).

One process: the mock agent (its own thread), a gateway with a Slack app team channel
on a SQLite file, its interaction route on tornado (127.0.0.1), and the tests' fake
Slack Web API. Each round opens an approval prompt, waits for its message, then times
one signed click of "Yes": until the gateway records the agent's acceptance, and until
``chat.update`` shows the outcome. Run by hand:

    PYTHONPATH=$PWD python benchmarks/bench_slack.py [--rounds 50]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import tornado.web

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hitl_nb.client import HitlClient  # noqa: E402
from hitl_nb.gateway import (  # noqa: E402
    AgentPool,
    Caller,
    Gateway,
    GatewaySettings,
    Notifier,
    open_store,
    slack_handlers,
)
from hitl_nb.mock_agent import MockAgent  # noqa: E402
from tests.helpers.slack import SECRET, TOKEN, FakeSlack, click_body, fake_slack, sign  # noqa: E402

ALICE = Caller("alice", "Alice")


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def _until(check: Any, timeout: float = 30.0) -> Any:
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        got = await check()
        if got:
            return got
        await asyncio.sleep(0.002)
    raise TimeoutError("waited too long")


async def run(rounds: int) -> None:
    os.environ["BENCH_SLACK_TOKEN"] = TOKEN
    os.environ["BENCH_SLACK_SECRET"] = SECRET
    with fake_slack() as slack, MockAgent() as agent, tempfile.TemporaryDirectory() as tmp:
        await measure(slack, agent.url, Path(tmp), rounds)


async def measure(slack: FakeSlack, agent_url: str, folder: Path, rounds: int) -> None:
    settings = GatewaySettings(
        notify_team_webhooks={"*": {"kind": "slack-app", "channel": "C0TEAM"}},
        notify_slack_token_env="BENCH_SLACK_TOKEN",
        notify_slack_signing_secret_env="BENCH_SLACK_SECRET",
        notify_slack_api_url=slack.api_url,
        notify_slack_users={"UBOB": "bob"},
        notify_every=0.0,
        watch=False,
    )

    def notify(gw: Gateway) -> Notifier:
        return Notifier(settings, gw.store, lambda: "https://hub.example.org/", hub=True)

    gateway = Gateway(open_store(None, folder), AgentPool([], 30.0), settings, notify=notify)
    app = tornado.web.Application(slack_handlers("/", gateway))
    server = app.listen(0, address="127.0.0.1")
    port = next(iter(server._sockets.values())).getsockname()[1]
    await gateway.start()
    to_agent: list[float] = []
    to_update: list[float] = []
    try:
        async with HitlClient(agent_url) as client, httpx.AsyncClient() as http:
            for _ in range(rounds):
                task = await client.send({"scenario": "approval"})
                _, reg = await gateway.register(ALICE, agent_url, task.id)
                (prompt,) = reg["prompts"]

                async def message(reg_id: str = reg["id"]) -> Any:
                    for m in slack.called("chat.postMessage"):
                        if reg_id in str(m["blocks"]):
                            return m
                    return None

                posted = await _until(message)
                yes = next(b for b in posted["blocks"] if b["type"] == "actions")["elements"][0]
                body = click_body(yes, "UBOB", slack.response_url())
                updates = len(slack.called("chat.update"))
                start = time.perf_counter()
                answer = await http.post(
                    f"http://127.0.0.1:{port}/slack/interactions", content=body, headers=sign(body)
                )
                assert answer.status_code == 200, answer.text

                async def forwarded(pid: str = prompt["prompt_id"], rid: str = reg["id"]) -> bool:
                    fwd = await gateway.store.forward(rid, pid)
                    return fwd is not None and fwd.state == "forwarded"

                await _until(forwarded)
                to_agent.append(time.perf_counter() - start)

                async def updated(count: int = updates) -> bool:
                    return any(
                        "Answered by bob" in u["text"] for u in slack.called("chat.update")[count:]
                    )

                await _until(updated)
                to_update.append(time.perf_counter() - start)
    finally:
        server.stop()
        await gateway.close()
    for name, values in (
        ("click -> agent's answer", to_agent),
        ("click -> message updated", to_update),
    ):
        print(
            f"{name}: median {statistics.median(values) * 1000:.1f} ms, "
            f"p95 {p95(values) * 1000:.1f} ms ({len(values)} clicks)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    asyncio.run(run(parser.parse_args().rounds))


if __name__ == "__main__":
    main()
