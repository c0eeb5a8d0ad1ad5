"""hitl_nb.agent's two agents beside a bare a2a-sdk agent and the mock agent, same run.

Run by hand from the repository root::

    python benchmarks/bench_agent.py [--trials 200] [--imports 9] [--baseline DIR]

Eight agents, each in its own process, each asking "Approve?" at once on a new task and
completing when answered ``{"approve": true}``; all driven by the same lean client
(``_rawhttp``: JSON-RPC 1.0, keep-alive, the extension activated):

- ``ask``: an a2a-sdk executor with ``await ask(...)`` (``_hitl_bench_agents.py``);
- ``graph``: a LangGraph graph, ``interrupt()`` in its one node, ``serve_graph``; and the
  same with ``grace=0`` (WORKING shown before the graph resumes, so LangGraph's own
  check of an answer can no longer be a 422: see ``hitl_nb.agent.langgraph``);
- ``sdk``: a bare a2a-sdk agent emitting the envelope by hand, no checks
  (``_sdk_bench_agent.py``, as in bench_resume.py);
- ``sdk + langgraph``: the same bare agent running the ``graph`` agent's graph by hand
  (``_sdk_bench_agent.py --graph``: the interrupt's envelope out as is, WORKING before
  the graph resumes, as ``grace=0``): what LangGraph itself costs an a2a-sdk agent, so
  that ``graph`` beside it is what hitl-nb costs;
- ``pydantic-ai``: a Pydantic AI agent (a ``FunctionModel``, no model service) whose one
  tool asks for approval, ``serve_agent``; and ``sdk + pydantic-ai``, the same agent run
  by the bare a2a-sdk agent, the confirmation done by hand (``--pydantic-ai``): the
  deferred call's envelope out by hand, the history kept, the run resumed with
  ``ToolApproved``;
- ``openai-agents``: an OpenAI Agents SDK agent (a ``Model`` of the benchmark's, no model
  service, tracing off) whose one tool ``needs_approval``, ``serve_agent``; and
  ``sdk + openai-agents``, the same agent run by the bare a2a-sdk agent, approved by hand
  (``--openai-agents``): the interruption's envelope out by hand, the ``RunState`` kept as
  JSON, read back, ``state.approve(item)``, the run resumed;
- ``adk``: an ADK agent (a ``BaseLlm`` of the benchmark's, no model service) whose one
  tool has ``require_confirmation=True``, ``hitl_nb.agent.adk.serve_agent``; and
  ``sdk + adk``, the same agent's runner driven by the bare a2a-sdk agent, the
  confirmation done by hand (``--adk``): the ``adk_request_confirmation`` call's
  envelope out by hand, the answer sent back as ADK's ``ToolConfirmation`` function
  response after WORKING; both answered ``{"confirmed": true}``;
- ``agent-framework``: a Microsoft Agent Framework agent (a chat client of the
  benchmark's, no model service) whose one tool has ``approval_mode="always_require"``,
  ``hitl_nb.agent.agent_framework.serve_agent``; and ``sdk + agent-framework``, the same
  agent run by the bare a2a-sdk agent, approved by hand (``--agent-framework``): the
  approval request's envelope out by hand, the ``AgentSession`` kept as ``to_dict()``
  JSON, read back, the request's ``function_approval_response`` sent, the run resumed;
- ``mock``: ``hitl-nb mock-agent``.

Three figures per agent:

1. **answer to working (CF-4)**: a subscriber holds ``SubscribeToTask`` open on a task
   waiting on its prompt; t0 right before a valid answer is sent, t1 when the subscriber
   sees a status leaving INPUT_REQUIRED (bench_resume.py's ``resume_once``).
2. **ask to prompt seen**: t0 right before ``SendStreamingMessage`` opens a new task,
   t1 when that stream delivers the INPUT_REQUIRED status carrying the envelope. Every
   agent asks as soon as it runs, so this is the request's way in, the ask and the
   event's way out to a streaming client.
3. **CPU per trial**: the agent process's user and system CPU time over the measured
   trials (its kernel counters), divided by the trials: what the latencies cost, and
   less shaken than they are by other work on the machine.

The agents take turns trial by trial (round robin), so machine noise hits all alike;
target: ``ask`` and ``graph`` p95 at most 1.2x ``sdk``'s. ``--baseline DIR`` adds the
``ask`` and ``graph`` agents of another checkout of hitl-nb (an older commit, say:
``git worktree add DIR COMMIT``) to the same rounds, for before/after figures;
``--agents pydantic-ai,sdk + pydantic-ai`` runs only those (and ``sdk``;
``--agents "adk,sdk + adk"`` likewise). LangGraph's share and the imports are skipped
with ``--no-extras``. Then
LangGraph's own share (the same graph run in process, no A2A around it; also on a SQLite
checkpointer, with LangGraph's default durability and with ``"exit"``), and the import time of
``hitl_nb.agent`` in fresh interpreters, beside the SDK modules an agent imports anyway.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._rawhttp import RawConnection  # noqa: E402
from benchmarks._signals import end_on_sigterm  # noqa: E402
from benchmarks.bench_resume import HEADERS, Client, agent_process, pct, rpc  # noqa: E402
from hitl_nb.a2a._sse import SSEParser  # noqa: E402
from hitl_nb.spec import EXTENSION_URI  # noqa: E402

PY = sys.executable
AGENTS = {
    "ask": [PY, str(ROOT / "benchmarks" / "_hitl_bench_agents.py"), "--kind", "ask"],
    "graph": [PY, str(ROOT / "benchmarks" / "_hitl_bench_agents.py"), "--kind", "graph"],
    "graph, grace 0": [
        PY,
        str(ROOT / "benchmarks" / "_hitl_bench_agents.py"),
        "--kind",
        "graph",
        "--grace",
        "0",
    ],
    "sdk": [PY, str(ROOT / "benchmarks" / "_sdk_bench_agent.py")],
    "sdk + langgraph": [PY, str(ROOT / "benchmarks" / "_sdk_bench_agent.py"), "--graph"],
    "pydantic-ai": [
        PY,
        str(ROOT / "benchmarks" / "_hitl_bench_agents.py"),
        "--kind",
        "pydantic-ai",
    ],
    "sdk + pydantic-ai": [
        PY,
        str(ROOT / "benchmarks" / "_sdk_bench_agent.py"),
        "--pydantic-ai",
    ],
    "openai-agents": [
        PY,
        str(ROOT / "benchmarks" / "_hitl_bench_agents.py"),
        "--kind",
        "openai-agents",
    ],
    "sdk + openai-agents": [
        PY,
        str(ROOT / "benchmarks" / "_sdk_bench_agent.py"),
        "--openai-agents",
    ],
    "adk": [PY, str(ROOT / "benchmarks" / "_hitl_bench_agents.py"), "--kind", "adk"],
    "sdk + adk": [PY, str(ROOT / "benchmarks" / "_sdk_bench_agent.py"), "--adk"],
    "agent-framework": [
        PY,
        str(ROOT / "benchmarks" / "_hitl_bench_agents.py"),
        "--kind",
        "agent-framework",
    ],
    "sdk + agent-framework": [
        PY,
        str(ROOT / "benchmarks" / "_sdk_bench_agent.py"),
        "--agent-framework",
    ],
    "mock": [PY, "-m", "hitl_nb.cli", "mock-agent"],
}
#: What an agent's prompt takes, where it is not ``{"approve": true}`` (an ADK
#: confirmation asks ``confirmed``).
PAYLOADS = {"adk": {"confirmed": True}, "sdk + adk": {"confirmed": True}}


def baseline_agents(checkout: Path) -> dict[str, list[str]]:
    """The ``ask`` and ``graph`` agents served by another checkout's hitl_nb."""
    script = str(ROOT / "benchmarks" / "_hitl_bench_agents.py")
    where = ["--checkout", str(checkout.resolve())]
    return {
        f"ask @ {checkout.name}": [PY, script, "--kind", "ask", *where],
        f"graph @ {checkout.name}": [PY, script, "--kind", "graph", *where],
    }


async def prompt_seen(conn: RawConnection) -> float:
    """Seconds from a new task's SendStreamingMessage to its prompt on that stream."""
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "approval"}]}
    parser = SSEParser()
    seen: float | None = None
    t0 = time.perf_counter()
    async for chunk in conn.post_stream(rpc("SendStreamingMessage", {"message": message}), HEADERS):
        for ev in parser.feed(chunk):
            result = json.loads(ev.data)["result"]
            status = (result.get("statusUpdate") or result.get("task") or {}).get("status", {})
            meta = (status.get("message") or {}).get("metadata") or {}
            if seen is None and EXTENSION_URI in meta:
                seen = time.perf_counter()
    assert seen is not None, "no prompt on the stream"
    return seen - t0


class Driver:
    """One agent's clients: a CF-4 client and a streaming connection."""

    def __init__(self, url: str, payload: dict[str, Any] | None = None) -> None:
        self.client = Client(url, payload)
        self.stream = RawConnection(url)
        self.cf4: list[float | None] = []
        self.seen: list[float] = []

    async def trial(self) -> None:
        self.seen.append(await prompt_seen(self.stream))
        task_id, prompt_id = await self.client.open_prompt()
        seconds, accepted = await self.client.resume_once(task_id, prompt_id)
        assert accepted == [True]
        self.cf4.append(seconds)

    async def close(self) -> None:
        await self.client.close()
        await self.stream.close()


def stats(values: list[float | None]) -> dict[str, float]:
    ms = [v * 1000 for v in values if v is not None]
    return {
        "n": len(ms),
        "timeouts": len(values) - len(ms),
        "p50": statistics.median(ms),
        "p95": pct(ms, 95),
        "max": max(ms),
    }


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(agents: dict[str, tuple[str, int]], trials: int) -> dict[str, dict[str, Any]]:
    drivers = {name: Driver(url + "/", PAYLOADS.get(name)) for name, (url, _) in agents.items()}
    for _ in range(10):  # warm-up: connections, caches, first compiles
        for d in drivers.values():
            await d.trial()
    for d in drivers.values():
        d.cf4.clear()
        d.seen.clear()
    cpu = {name: cpu_seconds(pid) for name, (_, pid) in agents.items()}
    for _ in range(trials):
        for d in drivers.values():
            await d.trial()
    out: dict[str, dict[str, Any]] = {
        name: {
            "cf4": stats(d.cf4),
            "seen": stats(list(d.seen)),
            "cpu per trial ms": (cpu_seconds(agents[name][1]) - cpu[name]) / trials * 1000,
        }
        for name, d in drivers.items()
    }
    for d in drivers.values():
        await d.close()
    return out


async def graph_alone(trials: int) -> dict[str, dict[str, float]]:
    """LangGraph's own share: the bench graph run in this process, no A2A around it,
    from a new thread's input to its interrupt read back (``aget_state``), and from
    ``Command(resume=...)`` to the end; on its in-memory checkpointer, and on a SQLite
    one (langgraph-checkpoint-sqlite) with LangGraph's default durability and with
    ``durability="exit"`` (checkpoints written once, when a run stops), in turns."""
    import tempfile

    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from langgraph.types import Command

    from benchmarks._hitl_bench_agents import graph

    times: dict[str, list[float | None]] = {}
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "checkpoints.sqlite")
        async with AsyncSqliteSaver.from_conn_string(path) as saver:
            ways = {
                "": (graph(), None),
                "SQLite, ": (graph().copy({"checkpointer": saver}), None),
                'SQLite, durability="exit", ': (graph().copy({"checkpointer": saver}), "exit"),
            }
            for i in range(trials + 10):
                for name, (compiled, durability) in ways.items():
                    config = {"configurable": {"thread_id": f"{name}{i}"}}
                    t0 = time.perf_counter()
                    async for _ in compiled.astream(
                        {}, config, stream_mode="updates", durability=durability
                    ):
                        pass
                    (pending,) = (await compiled.aget_state(config)).interrupts
                    t1 = time.perf_counter()
                    command: Command[Any] = Command(resume={pending.id: {"approve": True}})
                    async for _ in compiled.astream(
                        command, config, stream_mode="updates", durability=durability
                    ):
                        pass
                    t2 = time.perf_counter()
                    if i >= 10:  # after the warm-up
                        times.setdefault(f"{name}to interrupt", []).append(t1 - t0)
                        times.setdefault(f"{name}resume to end", []).append(t2 - t1)
    return {name: stats(values) for name, values in times.items()}


def import_times(runs: int) -> dict[str, float]:
    """Median seconds of each import, each in a fresh interpreter (alternating)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    stmts = {
        "import hitl_nb.agent": "import hitl_nb.agent",
        "from hitl_nb.agent import HitlExtension, ask": (
            "from hitl_nb.agent import HitlExtension, ask"
        ),
        "the SDK server modules an agent imports": (
            "import a2a.server.request_handlers, a2a.server.routes, a2a.server.tasks"
        ),
        "from hitl_nb.agent.langgraph import serve_graph": (
            "from hitl_nb.agent.langgraph import serve_graph"
        ),
        "import langgraph.graph": "import langgraph.graph, langgraph.types",
    }
    times: dict[str, list[float]] = {k: [] for k in stmts}
    code = "import time; t = time.perf_counter(); {}; print(time.perf_counter() - t)"
    for _ in range(runs):
        for name, stmt in stmts.items():
            done = subprocess.run(
                [PY, "-c", code.format(stmt)], capture_output=True, text=True, env=env, check=True
            )
            times[name].append(float(done.stdout))
    return {k: statistics.median(v) for k, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--imports", type=int, default=9)
    parser.add_argument("--baseline", type=Path, help="another checkout of hitl-nb to compare")
    parser.add_argument(
        "--agents", help="only these agents, comma-separated (sdk is always run: the base)"
    )
    parser.add_argument(
        "--no-extras", action="store_true", help="skip LangGraph alone and the import times"
    )
    args = parser.parse_args(argv)
    agents = dict(AGENTS)
    if args.agents:
        wanted = {"sdk", *(a.strip() for a in args.agents.split(","))}
        agents = {name: cmd for name, cmd in agents.items() if name in wanted}
    if args.baseline is not None:
        agents.update(baseline_agents(args.baseline))
    load = os.getloadavg()
    with ExitStack() as stack:
        running = {name: stack.enter_context(agent_process(cmd)) for name, cmd in agents.items()}
        results: dict[str, Any] = asyncio.run(measure(running, args.trials))
    extras = not args.no_extras
    results["langgraph alone"] = asyncio.run(graph_alone(args.trials)) if extras else {}
    results["imports"] = import_times(args.imports) if extras else {}
    results["load"] = {"before": load, "after": os.getloadavg()}
    sdk = results["sdk"]
    for key, title in (("cf4", "answer to working (CF-4)"), ("seen", "ask to prompt seen")):
        print(f"{title}, {args.trials} trials (ms)        p50      p95      max   p95 / sdk")
        for name in agents:
            r = results[name][key]
            ratio = r["p95"] / sdk[key]["p95"]
            print(
                f"  {name:<34}{r['p50']:8.2f} {r['p95']:8.2f} {r['max']:8.2f} {ratio:9.2f}"
                + (f"  ({r['timeouts']} timeouts)" if r["timeouts"] else "")
            )
    bridges = (
        ("graph", "sdk + langgraph"),
        ("pydantic-ai", "sdk + pydantic-ai"),
        ("openai-agents", "sdk + openai-agents"),
        ("adk", "sdk + adk"),
        ("agent-framework", "sdk + agent-framework"),
    )
    for bridge, peer in bridges:
        if bridge in agents and peer in agents:
            ratios = [
                f"{key} {results[bridge][key]['p95'] / results[peer][key]['p95']:.2f}"
                for key in ("cf4", "seen")
            ]
            print(f"  p95 {bridge} / {peer}: " + ", ".join(ratios))
    print("the agent process's CPU time per trial (both requests and a stream, ms)  / sdk")
    for name in agents:
        cpu = results[name]["cpu per trial ms"]
        print(f"  {name:<34}{cpu:8.2f} {cpu / sdk['cpu per trial ms']:9.2f}")
    if extras:
        print("LangGraph alone, in process, the same graph (ms)      p50      p95")
        for name, r in results["langgraph alone"].items():
            print(f"  {name:<50}{r['p50']:8.2f} {r['p95']:8.2f}")
        print(f"imports, median of {args.imports} fresh interpreters (ms)")
        for name, seconds in results["imports"].items():
            print(f"  {name:<52}{seconds * 1000:8.1f}")
    print("load average before / after: {} / {}".format(*(results["load"].values())))
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "bench_agent.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    end_on_sigterm()
    raise SystemExit(main())
