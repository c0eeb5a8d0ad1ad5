"""The gateway's inbox: 1,000 open prompts across 20 tasks, listed through a real server.

    python benchmarks/bench_inbox.py [--prompts 1000] [--tasks 20] [--rounds 15]

Seeds the gateway's SQLite store with ``--tasks`` registered tasks holding ``--prompts``
open prompts between them (the approval schema; half with deadlines; every fifth a
consensus:2 prompt with one answer collected), starts ``jupyter server`` with the
extension on 127.0.0.1 (watching off: the seeded agents do not exist), and times
``GET {base_url}hitl/api/prompts`` (all of them, soonest deadline first). The peer, in
the same run and the same server: ``GET api/contents`` of a folder with as many files.

The notebook's ``Inbox`` over the same server, in this process (no front end attached):
the time to show all of them (the first look and one row per prompt), a quiet look
(nothing new, nothing redrawn) and the bytes the kernel keeps per listed prompt.

Memory: the server's resident memory (VmRSS) after one listing, with the seeded store and
with an empty one; the difference divided by the number of prompts is the memory per
open prompt (timers, caches, the listing's garbage), next to the SQLite bytes per prompt.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._signals import end_on_sigterm  # noqa: E402
from hitl_nb.gateway import AgentPool, Caller, Gateway, GatewaySettings  # noqa: E402
from hitl_nb.gateway._sqlite import SQLiteStore  # noqa: E402
from hitl_nb.gateway._store import Registration  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {"approve": {"type": "boolean"}, "comment": {"type": "string"}},
    "required": ["approve"],
    "additionalProperties": False,
}
TOKEN = "bench-token"


def seed(state: Path, prompts: int, tasks: int) -> None:
    asyncio.run(_seed(state, prompts, tasks))


async def _seed(state: Path, prompts: int, tasks: int) -> None:
    store = SQLiteStore(state / "gateway.sqlite")
    now = time.time()
    regs = []
    for t in range(tasks):
        reg = Registration(
            uuid.uuid4().hex, f"http://agent-{t % 4}.invalid:8000", f"task-{t}", "bench", now
        )
        regs.append(await store.add_registration(reg))
    for i in range(prompts):
        reg = regs[i % tasks]
        pid = str(uuid.uuid4())
        responders = ["consensus:2"] if i % 5 == 0 else ["any"]
        deadline = now + 3600 + i if i % 2 == 0 else None
        envelope = {
            "prompt_id": pid,
            "prompt": f"Approve change {i}?",
            "response_schema": SCHEMA,
            "allowed_responders": responders,
        }
        if deadline is not None:
            envelope["deadline"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(deadline))
        await store.see_prompt(reg.id, pid, None, envelope, deadline)
        if i % 5 == 0:
            await store.cast_ballot(reg.id, pid, "carol", '{"approve":true}')
    await store.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(tmp: Path, state: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    config = tmp / "config"
    config.mkdir(exist_ok=True)
    (config / "jupyter_server_config.json").write_text(
        json.dumps(
            {
                "ServerApp": {
                    "jpserver_extensions": {
                        "hitl_nb.server": True,
                        "jupyterlab": False,
                        "jupyter_lsp": False,
                        "notebook_shim": False,
                        "jupyter_server_terminals": False,
                    },
                    "ip": "127.0.0.1",
                    "port": port,
                    "port_retries": 0,
                    "open_browser": False,
                    "root_dir": str(tmp),
                    "allow_root": True,
                },
                "IdentityProvider": {"token": TOKEN},
                "HitlServer": {"state_dir": str(state), "watch": False, "mock_agent": False},
            }
        )
    )
    env = dict(os.environ)
    env["JUPYTER_CONFIG_DIR"] = str(config)
    env["JUPYTER_DATA_DIR"] = str(tmp / "data")
    env["JUPYTER_RUNTIME_DIR"] = str(tmp / "runtime")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    for _ in range(600):
        try:
            if httpx.get(url + "api/status", headers=auth(), timeout=2).status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not start")


def auth() -> dict[str, str]:
    return {"Authorization": f"token {TOKEN}"}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def timed(client: httpx.Client, url: str, rounds: int) -> tuple[list[float], httpx.Response]:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        r = client.get(url)
        times.append(time.perf_counter() - t0)
        r.raise_for_status()
    return times, r


@dataclass
class Run:
    """One server's figures."""

    inbox: list[float]
    contents: list[float]
    rss_kib: int
    listed: int
    size: int


@dataclass
class Widget:
    """The notebook's Inbox over the same server: shown, looked at again, kept."""

    first: list[float]
    quiet: list[float]
    bytes_per_prompt: float
    rows: int


def inbox_widget(url: str, prompts: int, rounds: int) -> Widget:
    """Time ``Inbox(limit=prompts)`` (first look + one row per prompt) and a quiet
    refresh() (nothing new: nothing redrawn); what the kernel keeps per listed prompt."""
    import gc
    import tracemalloc

    from hitl_nb.client import GatewayInfo
    from hitl_nb.notebook import Inbox

    info = GatewayInfo(url, TOKEN, "bench")
    first, quiet = [], []
    Inbox(gateway=info, limit=1, poll_interval=3600).close()  # imports, the shared loop
    kept, rows = 0.0, 0
    for i in range(rounds):
        gc.collect()
        if i == 0:
            tracemalloc.start()
            before = tracemalloc.take_snapshot()
        t0 = time.perf_counter()
        inbox = Inbox(gateway=info, limit=prompts, poll_interval=3600)
        first.append(time.perf_counter() - t0)
        rows = len(inbox.list.children)
        t0 = time.perf_counter()
        inbox.refresh()
        quiet.append(time.perf_counter() - t0)
        if i == 0:
            gc.collect()
            after = tracemalloc.take_snapshot()
            kept = sum(s.size_diff for s in after.compare_to(before, "filename")) / prompts
            tracemalloc.stop()
        inbox.close()
        for row in inbox.list.children:
            row.close()
        del inbox
    return Widget(first, quiet, kept, rows)


def run_server(tmp: Path, state: Path, rounds: int, widget: int = 0) -> tuple[Run, Widget | None]:
    proc, url = start(tmp, state)
    try:
        with httpx.Client(headers=auth(), timeout=60) as client:
            inbox, answer = timed(client, url + "hitl/api/prompts?limit=5000", rounds)
            contents, _ = timed(client, url + "api/contents/files", rounds)
            rss = rss_kib(proc.pid)
        shown = inbox_widget(url, widget, 3) if widget else None
        run = Run(inbox, contents, rss, len(answer.json()["prompts"]), len(answer.content))
        return run, shown
    finally:
        proc.terminate()
        proc.wait(30)


def in_process(state: Path, prompts: int) -> tuple[float, float]:
    """(median seconds of Gateway.inbox(), bytes the gateway keeps per open prompt)."""
    import gc
    import tracemalloc

    async def go() -> tuple[float, float]:
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        gw = Gateway(
            SQLiteStore(state / "gateway.sqlite"), AgentPool([], 5.0), GatewaySettings(watch=False)
        )
        await gw.start()  # arms a deadline timer per prompt that has a deadline
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            listing = await gw.inbox(Caller("alice", "Alice"), limit=5000)
            times.append(time.perf_counter() - t0)
            assert listing["total"] == prompts
            del listing
        gc.collect()
        after = tracemalloc.take_snapshot()
        kept = sum(s.size_diff for s in after.compare_to(before, "filename"))
        tracemalloc.stop()
        await gw.close()
        return statistics.median(times), kept / prompts

    return asyncio.run(go())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=1000)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        (tmp / "files").mkdir()
        for i in range(args.prompts):
            (tmp / "files" / f"note-{i}.txt").write_text("x")
        full, empty = tmp / "state-full", tmp / "state-empty"
        full.mkdir()
        empty.mkdir()
        seed(full, args.prompts, args.tasks)
        asyncio.run(SQLiteStore(empty / "gateway.sqlite").close())
        listing_s, kept = in_process(full, args.prompts)
        full_run, widget = run_server(tmp, full, args.rounds, widget=args.prompts)
        empty_run, _ = run_server(tmp, empty, args.rounds)
        db_bytes = (full / "gateway.sqlite").stat().st_size
        db_bytes -= (empty / "gateway.sqlite").stat().st_size
    inbox = statistics.median(full_run.inbox)
    peer = statistics.median(full_run.contents)
    per_prompt = (full_run.rss_kib - empty_run.rss_kib) * 1024 / args.prompts
    ms = 1000
    print(f"{args.prompts} open prompts across {args.tasks} tasks, {args.rounds} rounds each")
    print(
        f"  GET hitl/api/prompts      median {inbox * ms:8.1f} ms   worst "
        f"{max(full_run.inbox) * ms:8.1f} ms   ({full_run.listed} listed, "
        f"{full_run.size // 1024} KiB)"
    )
    print(f"  GET api/contents (peer)   median {peer * ms:8.1f} ms   ({args.prompts} files)")
    print(f"  ratio inbox / peer        {inbox / peer:8.2f}")
    print(
        f"  server RSS                {full_run.rss_kib} KiB with the prompts, "
        f"{empty_run.rss_kib} KiB with an empty store"
    )
    print(f"  memory per open prompt    {per_prompt:8.0f} bytes (RSS difference / prompts)")
    print(f"  SQLite per open prompt    {db_bytes / args.prompts:8.0f} bytes")
    print(
        f"  in process: Gateway.inbox() median {listing_s * ms:.1f} ms; the gateway keeps "
        f"{kept:.0f} bytes per open prompt (tracemalloc, after start() and 5 listings)"
    )
    if widget is not None:
        shown, again = statistics.median(widget.first), statistics.median(widget.quiet)
        print(
            f"  notebook Inbox(limit={args.prompts}): shown in median {shown * ms:.1f} ms "
            f"(worst {max(widget.first) * ms:.1f} ms, {widget.rows} rows; ratio to the "
            f"GET alone {shown / inbox:.2f}); a quiet look {again * ms:.1f} ms; the "
            f"kernel keeps {widget.bytes_per_prompt:.0f} bytes per listed prompt "
            "(tracemalloc; no front end attached)"
        )


if __name__ == "__main__":
    end_on_sigterm()
    main()
