"""The hub service against the single-server gateway: a prompt from alice to bob, and
the memory an open prompt costs.

    python benchmarks/bench_hub.py [--rounds 40] [--prompts 300]

Starts a real JupyterHub (tests/helpers/hub.py: the npm proxy, DummyAuthenticator, the
hitl service as ``configure(c)`` writes it) and, as the peer in the same run, a Jupyter
server with the extension whose IdentityProvider names alice and bob (both on one
server: the only way they share a gateway there). A mock agent runs in this process.

1. **alice's registration to the prompt in bob's inbox.** ``--rounds`` times: a task
   asks at the agent; alice registers it (``POST api/tasks`` with her token); bob's
   listing (``GET api/prompts?responder=me`` with his, what his ``Inbox`` asks) is read
   until it shows the prompt. Median and p95 of registration start to bob's first
   listing that shows it, on the hub service and on the single-server gateway. Then the
   same through the notebook's ``Inbox`` in this process as bob (its first look), which
   adds the Inbox's own work; an Inbox that is already open finds a new prompt at its
   next look, ``poll_interval`` later (5 s by default), which is left out here.
2. **Memory per open prompt.** ``--prompts`` tasks registered (each with one open
   prompt, each watched); the service's resident memory (VmRSS, read from /proc) before
   and after, divided by the number of prompts; the same for the Jupyter server.

Figures are for this machine at the moment they are taken (two shared cores): compare
the two columns of one run, not runs of different days.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._signals import end_on_sigterm  # noqa: E402
from hitl_nb.client import GatewayInfo, HitlClient  # noqa: E402
from hitl_nb.mock_agent import MockAgent  # noqa: E402
from tests.helpers.hub import running_hub  # noqa: E402
from tests.helpers.jupyter_process import jupyter_server  # noqa: E402
from tests.helpers.jupyter_users import auth  # noqa: E402


def rss_kib(pid: int) -> int:
    """The resident memory of a process, KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


async def _asking(url: str, n: int) -> list[str]:
    async with HitlClient(url) as client:
        tasks = [await client.send({"scenario": "approval"}) for _ in range(n)]
    return [str(t.id) for t in tasks]  # type: ignore[union-attr]


def tasks_at(agent: MockAgent, n: int) -> list[str]:
    """``n`` tasks of the agent, each asking its first prompt."""
    return asyncio.run(_asking(agent.url, n))


class Gateway:
    """One gateway's API with alice's and bob's credentials."""

    def __init__(self, api: str, alice: dict[str, str], bob: dict[str, str]) -> None:
        self.api = api
        self.alice = httpx.Client(headers=alice, timeout=60)
        self.bob = httpx.Client(headers=bob, timeout=60)

    def register(self, agent_url: str, task_id: str) -> dict:
        r = self.alice.post(self.api + "tasks", json={"agent_url": agent_url, "task_id": task_id})
        assert r.status_code == 201, r.text
        return dict(r.json())

    def bob_sees(self, task_id: str) -> bool:
        r = self.bob.get(self.api + "prompts", params={"responder": "me"})
        return any(p["task_id"] == task_id for p in r.json()["prompts"])


def to_bobs_listing(gw: Gateway, agent: MockAgent, rounds: int) -> list[float]:
    times = []
    for task_id in tasks_at(agent, rounds):
        t0 = time.perf_counter()
        gw.register(agent.url, task_id)
        while not gw.bob_sees(task_id):
            time.sleep(0.005)
        times.append(time.perf_counter() - t0)
    return times


def to_bobs_inbox(gw: Gateway, info: GatewayInfo, agent: MockAgent, rounds: int) -> list[float]:
    from hitl_nb.notebook import Inbox

    times = []
    for task_id in tasks_at(agent, rounds):
        t0 = time.perf_counter()
        gw.register(agent.url, task_id)
        with Inbox(gateway=info, responder="me", poll_interval=60) as inbox:
            assert any(i.task_id == task_id for i in inbox.items)
        times.append(time.perf_counter() - t0)
    return times


def per_prompt(gw: Gateway, agent: MockAgent, pid: Callable[[], int], n: int) -> float:
    before = rss_kib(pid())
    for task_id in tasks_at(agent, n):
        gw.register(agent.url, task_id)
    time.sleep(5)  # the watchers' first look and push set-up, then a quiet moment
    return (rss_kib(pid()) - before) * 1024 / n


def line(name: str, values: list[float]) -> str:
    ms = 1000
    return (
        f"  {name:34s} median {statistics.median(values) * ms:7.1f} ms   "
        f"p95 {p95(values) * ms:7.1f} ms   ({len(values)} rounds)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--prompts", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d, MockAgent() as agent:
        tmp = Path(d)
        # Watched tasks are read every 10 s on both sides (the server's default).
        with running_hub(tmp / "hub", poll_interval=10.0) as hub:
            alice = {"Authorization": f"token {hub.user_token('alice')}"}
            bob = {"Authorization": f"token {hub.user_token('bob')}"}
            on_hub = Gateway(hub.service + "api/", alice, bob)
            info = GatewayInfo(hub.service, hub.user_token("bob"), "bench", hub.service + "api/")
            tasks_at(agent, 3)  # warm the agent
            hub_listing = to_bobs_listing(on_hub, agent, args.rounds)
            hub_inbox = to_bobs_inbox(on_hub, info, agent, args.rounds)
            hub_bytes = per_prompt(on_hub, agent, hub.service_pid, args.prompts)
        (tmp / "server").mkdir()
        slow = {"HitlServer": {"poll_interval": 10.0}}
        with jupyter_server(tmp / "server", ready_headers=auth("alice"), extra_config=slow) as url:
            server = Gateway(url + "hitl/api/", auth("alice"), auth("bob"))
            sinfo = GatewayInfo(url, "bob-token", "bench")
            server_listing = to_bobs_listing(server, agent, args.rounds)
            server_inbox = to_bobs_inbox(server, sinfo, agent, args.rounds)
            server_pid = _server_pid(tmp / "server")
            server_bytes = per_prompt(server, agent, lambda: server_pid, args.prompts)
    print("alice registers a task; bob (his own token) lists the prompt it asks")
    print(line("hub service: bob's GET prompts", hub_listing))
    print(line("single server: bob's GET prompts", server_listing))
    print(line("hub service: bob's Inbox()", hub_inbox))
    print(line("single server: bob's Inbox()", server_inbox))
    print(f"memory per open prompt ({args.prompts} tasks registered, each watched)")
    print(f"  hub service                        {hub_bytes:8.0f} bytes (VmRSS difference)")
    print(f"  single-server gateway              {server_bytes:8.0f} bytes (VmRSS difference)")


def _server_pid(root: Path) -> int:
    """The Jupyter server's pid, from its info file in the runtime folder."""
    import json

    (info,) = (root / "runtime").glob("jpserver-*.json")
    return int(json.loads(info.read_text())["pid"])


if __name__ == "__main__":
    end_on_sigterm()
    main()
