"""Resume latency (hitl-prompt/v1 CF-4) of the mock agent, side by side with an a2a-sdk agent.

Run by hand from the repository root::

    python benchmarks/bench_resume.py [--trials 200] [--prompts 1000] [--clients 50]

Part 1, CF-4: for each trial a task is driven to INPUT_REQUIRED, a subscriber opens
``SubscribeToTask`` and reads the snapshot; t0 is taken right before a valid answer is
sent, t1 when the subscriber sees a status update leaving INPUT_REQUIRED. Both agents
run in their own process (the mock agent via ``hitl-nb mock-agent``, the other a
minimal a2a-sdk + uvicorn agent from ``_sdk_bench_agent.py``) and are driven by the same
client code (a lean asyncio HTTP/1.1 client, JSON-RPC 1.0, keep-alive).
Targets: p95 <= 5 ms, ratio <= 1.0.

Part 2, the mock agent under load: N open prompts, every one answered twice at once
by a pool of concurrent clients (each answer with its own subscriber): p95 resume,
accepted exactly once per prompt (no loss, no double acceptance), and the agent's
resident memory per open prompt.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._rawhttp import RawConnection  # noqa: E402
from benchmarks._signals import end_on_sigterm  # noqa: E402
from hitl_nb.a2a._sse import SSEParser  # noqa: E402
from hitl_nb.spec import EXTENSION_URI, RESPONSE_KEY  # noqa: E402

HEADERS = {"A2A-Version": "1.0", "A2A-Extensions": EXTENSION_URI}


@contextmanager
def agent_process(cmd: list[str]) -> Iterator[tuple[str, int]]:
    """Start an agent process that prints '... listening on URL'; yield (url, pid)."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "listening on" not in line:
            raise RuntimeError(f"agent did not start: {cmd}")
        yield line.rsplit(" ", 1)[-1].strip(), proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def rss_kib(pid: int) -> int:
    """Resident set size of a process in KiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}


#: What the benchmarks answer, unless an agent asks for another shape.
APPROVE: dict[str, Any] = {"approve": True}


def answer_body(
    task_id: str, prompt_id: str, payload: dict[str, Any] | None = None
) -> dict[str, Any]:
    answer = {"prompt_id": prompt_id, "payload": APPROVE if payload is None else payload}
    msg = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "taskId": task_id,
        "parts": [{"text": "yes"}],
        "metadata": {RESPONSE_KEY: answer},
    }
    return rpc("SendMessage", {"message": msg})


class Client:
    """One simulated orchestrator: a subscriber connection and two for answers, each
    answer carrying ``payload`` (default ``{"approve": true}``)."""

    def __init__(self, url: str, payload: dict[str, Any] | None = None) -> None:
        self.payload = payload
        self.sub = RawConnection(url)
        self.out = [RawConnection(url), RawConnection(url)]

    async def close(self) -> None:
        for conn in (self.sub, *self.out):
            await conn.close()

    async def open_prompt(self) -> tuple[str, str]:
        """Create a task; return (task id, prompt id)."""
        msg = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "approval"}]}
        res = await self.out[0].post_json(rpc("SendMessage", {"message": msg}), HEADERS)
        task = res["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
        return task["id"], task["status"]["message"]["metadata"][EXTENSION_URI]["prompt_id"]

    async def state(self, task_id: str) -> str:
        res = await self.out[0].post_json(rpc("GetTask", {"id": task_id}), HEADERS)
        return str(res["result"]["status"]["state"])

    async def resume_once(
        self, task_id: str, prompt_id: str, answers: int = 1
    ) -> tuple[float | None, list[bool]]:
        """CF-4 for one prompt: (t1 - t0 in seconds or None on timeout, answers accepted)."""
        ready = asyncio.Event()
        seen: list[float] = []

        async def subscriber() -> None:
            parser = SSEParser()
            body = rpc("SubscribeToTask", {"id": task_id})
            async for chunk in self.sub.post_stream(body, HEADERS):
                for ev in parser.feed(chunk):
                    result = json.loads(ev.data)["result"]
                    if "task" in result:
                        ready.set()
                        continue
                    state = result.get("statusUpdate", {}).get("status", {}).get("state")
                    if not seen and state and state != "TASK_STATE_INPUT_REQUIRED":
                        seen.append(time.perf_counter())
            # read to the end of the stream, so the connection can be reused

        sub = asyncio.create_task(subscriber())
        await asyncio.wait_for(ready.wait(), 10)

        async def send(conn: RawConnection) -> bool:
            body = answer_body(task_id, prompt_id, self.payload)
            return "result" in await conn.post_json(body, HEADERS)

        t0 = time.perf_counter()
        accepted = await asyncio.gather(*(send(c) for c in self.out[:answers]))
        try:
            await asyncio.wait_for(sub, 10)
        except asyncio.TimeoutError:
            await self.sub.close()
            return None, list(accepted)  # counted, not hidden: see "timeouts"
        return (seen[0] - t0 if seen else None), list(accepted)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def summary(lat: list[float | None]) -> dict[str, float]:
    ms = [v * 1000 for v in lat if v is not None]
    return {
        "n": len(ms),
        "timeouts": len(lat) - len(ms),
        "p50": statistics.median(ms),
        "p95": pct(ms, 95),
        "p99": pct(ms, 99),
        "max": max(ms),
    }


async def cf4(url: str, trials: int) -> dict[str, float]:
    client = Client(url)
    for _ in range(10):  # warm-up: connections, caches
        await client.resume_once(*await client.open_prompt())
    lat: list[float | None] = []
    for _ in range(trials):
        task_id, prompt_id = await client.open_prompt()
        seconds, accepted = await client.resume_once(task_id, prompt_id)
        assert accepted == [True]
        lat.append(seconds)
    await client.close()
    return summary(lat)


async def load(url: str, pid: int, prompts: int, clients: int) -> dict[str, Any]:
    pool = [Client(url) for _ in range(clients)]
    await pool[0].open_prompt()  # warm-up
    before = rss_kib(pid)
    per = [prompts // clients + (1 if i < prompts % clients else 0) for i in range(clients)]
    made = await asyncio.gather(*(_open_many(c, n) for c, n in zip(pool, per, strict=True)))
    opened = [item for chunk in made for item in chunk]
    after = rss_kib(pid)
    queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    for item in opened:
        queue.put_nowait(item)
    lat: list[float | None] = []
    accepted_per_prompt: list[int] = []

    async def worker(client: Client) -> None:
        while not queue.empty():
            task_id, prompt_id = queue.get_nowait()
            seconds, accepted = await client.resume_once(task_id, prompt_id, answers=2)
            lat.append(seconds)
            accepted_per_prompt.append(sum(accepted))

    started = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in pool))
    elapsed = time.perf_counter() - started
    states = [await pool[0].state(task_id) for task_id, _ in opened]
    for c in pool:
        await c.close()
    return {
        **summary(lat),
        "accepted_once": sum(1 for n in accepted_per_prompt if n == 1),
        "double": sum(1 for n in accepted_per_prompt if n > 1),
        "lost": sum(1 for n in accepted_per_prompt if n == 0)
        + sum(1 for s in states if s != "TASK_STATE_COMPLETED"),
        "kib_per_open_prompt": (after - before) / prompts,
        "answers_per_s": 2 * prompts / elapsed,
    }


async def _open_many(client: Client, n: int) -> list[tuple[str, str]]:
    return [await client.open_prompt() for _ in range(n)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--prompts", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=50)
    args = parser.parse_args(argv)
    py = sys.executable
    results: dict[str, Any] = {}
    with agent_process([py, "-m", "hitl_nb.cli", "mock-agent"]) as (url, _):
        results["mock"] = asyncio.run(cf4(url + "/", args.trials))
    with agent_process([py, str(ROOT / "benchmarks" / "_sdk_bench_agent.py")]) as (url, _):
        results["sdk"] = asyncio.run(cf4(url + "/", args.trials))
    with agent_process([py, "-m", "hitl_nb.cli", "mock-agent"]) as (url, pid):
        results["load"] = asyncio.run(load(url + "/", pid, args.prompts, args.clients))

    m, s = results["mock"], results["sdk"]
    print(
        f"CF-4 resume latency, {args.trials} trials (ms)     p50     p95     p99     max  timeouts"
    )
    for name, r in (("mock agent (tornado)", m), ("a2a-sdk + uvicorn", s)):
        print(
            f"  {name:<38}{r['p50']:7.2f} {r['p95']:7.2f} {r['p99']:7.2f} {r['max']:7.2f}"
            f"  {r['timeouts']:8d}"
        )
    ratio = m["p95"] / s["p95"]
    print(f"  p95 ratio mock / sdk: {ratio:.2f}  (target <= 1.0; mock p95 target <= 5 ms)")
    ld = results["load"]
    print(f"\nLoad: {args.prompts} open prompts, {args.clients} concurrent clients, 2 answers each")
    print(
        f"  resume p50 {ld['p50']:.2f} ms, p95 {ld['p95']:.2f} ms, p99 {ld['p99']:.2f} ms, "
        f"timeouts {ld['timeouts']}"
    )
    print(
        f"  accepted exactly once: {ld['accepted_once']}/{args.prompts}, "
        f"double: {ld['double']}, lost: {ld['lost']}"
    )
    print(f"  memory per open prompt: {ld['kib_per_open_prompt']:.1f} KiB (agent RSS delta)")
    print(f"  throughput: {ld['answers_per_s']:.0f} answers/s")
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "bench_resume.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    end_on_sigterm()
    raise SystemExit(main())
