"""Resume latency (hitl-prompt/v1 CF-4) over gRPC and over JSON-RPC: one agent, one run.

Run by hand from the repository root (needs ``hitl-nb[grpc]``)::

    python benchmarks/bench_grpc.py [--trials 100]

One a2a-sdk agent (``_sdk_bench_agent.py``'s executor, one ``DefaultRequestHandler``)
serves both bindings from one process: JSON-RPC through uvicorn, gRPC through the SDK's
``GrpcHandler`` on ``grpc.aio``, on the same event loop. The client side is
:class:`~hitl_nb.client.HitlClient` for each binding, so the figure is what a notebook
sees. Each trial drives a task to INPUT_REQUIRED, opens ``SubscribeToTask`` and reads
the snapshot; t0 is taken right before ``respond()``, t1 when the subscriber sees the
task leave INPUT_REQUIRED. Trials alternate between the bindings, so both see the same
machine. Prints median, p95 and max per binding and the p95 ratio gRPC / JSON-RPC.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hitl_nb.a2a import TaskState  # noqa: E402
from hitl_nb.client import HitlClient, PromptEvent, prompt_of  # noqa: E402
from hitl_nb.spec import EXTENSION_URI  # noqa: E402


def card(rpc_url: str, grpc_url: str) -> dict[str, Any]:
    """The card listing both interfaces."""
    return {
        "name": "bench",
        "description": "one agent, two bindings",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": rpc_url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": grpc_url, "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        ],
        "capabilities": {
            "streaming": True,
            "extensions": [{"uri": EXTENSION_URI, "required": False, "params": {}}],
        },
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "approve", "name": "approve", "description": "asks", "tags": ["hitl"]}],
    }


async def _serve() -> None:
    import grpc.aio
    import uvicorn
    from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
    from a2a.server.routes import create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import a2a_pb2_grpc
    from starlette.applications import Starlette

    from benchmarks._sdk_bench_agent import ApprovalExecutor
    from hitl_nb.a2a import to_proto

    sock = socket.create_server(("127.0.0.1", 0))
    rpc_url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    grpc_url = f"grpc://127.0.0.1:{port}"
    handler = DefaultRequestHandler(
        agent_executor=ApprovalExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=to_proto("AgentCard", card(rpc_url, grpc_url)),
    )
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    await server.start()
    app = Starlette(routes=create_jsonrpc_routes(handler, "/"))
    config = uvicorn.Config(app, log_level="error", lifespan="off")
    print(f"listening on {rpc_url} {grpc_url}", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


async def _trial(client: HitlClient) -> float:
    task = await client.send("approve?")
    prompt = prompt_of(task)
    assert isinstance(prompt, PromptEvent), task
    seen_snapshot = asyncio.Event()
    left = asyncio.Event()
    t1 = 0.0

    binding = await client._ready()  # the raw subscription: the client's own ends at a wait

    async def watch() -> None:
        nonlocal t1
        async for _id, event, _raw in binding.subscribe(prompt.task_id):
            status = getattr(event, "status", None)
            state = getattr(status, "state", None)
            if state is TaskState.INPUT_REQUIRED:
                seen_snapshot.set()
            elif state is not None and seen_snapshot.is_set():
                t1 = time.perf_counter()
                left.set()
                return

    watcher = asyncio.create_task(watch())
    await asyncio.wait_for(seen_snapshot.wait(), 10)
    t0 = time.perf_counter()
    await client.respond(
        prompt.task_id, prompt.prompt_id, {"approve": True}, prompt=prompt.envelope
    )
    await asyncio.wait_for(left.wait(), 10)
    await watcher
    return (t1 - t0) * 1000


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(round(0.95 * len(values))) - 1)]


async def _measure(doc: dict[str, Any], trials: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"GRPC": [], "JSONRPC": []}
    async with (
        HitlClient(doc, binding="GRPC") as grpc_client,
        HitlClient(doc, binding="JSONRPC") as rpc_client,
    ):
        clients = {"GRPC": grpc_client, "JSONRPC": rpc_client}
        for _ in range(3):  # warm-up: connections, first imports
            for client in clients.values():
                await _trial(client)
        for _ in range(trials):
            for name, client in clients.items():
                times[name].append(await _trial(client))
    return times


def main() -> None:
    if "--serve" in sys.argv:
        asyncio.run(_serve())
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    args = parser.parse_args()
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "listening on" not in line:
            raise RuntimeError("the agent did not start")
        rpc_url, grpc_url = line.split()[-2:]
        times = asyncio.run(_measure(card(rpc_url, grpc_url), args.trials))
    finally:
        proc.terminate()
        proc.wait(10)
    print(f"CF-4 resume latency, {args.trials} trials per binding, same agent, same run")
    for name, values in times.items():
        print(
            f"  {name:8} median {statistics.median(values):6.2f} ms  "
            f"p95 {_p95(values):6.2f} ms  max {max(values):6.2f} ms"
        )
    print(f"  p95 ratio gRPC / JSON-RPC: {_p95(times['GRPC']) / _p95(times['JSONRPC']):.2f}")


if __name__ == "__main__":
    main()
