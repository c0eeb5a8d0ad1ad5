"""``serve_graph``: a compiled graph as a running A2A agent, in one call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from langgraph.types import Durability

from .._app import agent_app
from .._extension import HitlExtension
from .._serve import Served
from ._executor import (
    Checkpointer,
    GraphExecutor,
    Inputs,
    Result,
    default_inputs,
    default_result,
)

__all__ = ["serve_graph"]


def serve_graph(
    graph: Any,
    *,
    name: str = "LangGraph agent",
    description: str = "A LangGraph graph that asks people (hitl-prompt/v1)",
    inputs: Inputs = default_inputs,
    result: Result = default_result,
    task_store: Any = None,
    checkpointer: Checkpointer | None = None,
    grace: float = 0.5,
    durability: Durability | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    on_stop: Iterable[Callable[[], Awaitable[Any]]] = (),
    grpc_port: int | None = None,
) -> Served:
    """Serve ``graph`` as an A2A agent on a thread of its own: JSON-RPC at ``/``,
    HTTP+JSON at ``/rest``, the card at ``/.well-known/agent-card.json``, hitl-prompt/v1
    declared. Returns once it listens: ``.url``, ``.stop()``. ``grpc_port``: serve
    A2A 1.0 on gRPC too, on that port of ``host`` (0: a free one; ``.grpc_url``;
    ``hitl-nb[grpc]``); the card then lists the GRPC interface after the JSON ones.

    ``task_store``: the SDK's (default: in memory). The graph is compiled with a
    checkpointer, or ``checkpointer`` opens one on the server's own loop, e.g.
    ``lambda: AsyncSqliteSaver.from_conn_string("checkpoints.sqlite")``: with a database
    task store, a prompt then outlives a restart of the process. ``inputs``, ``result``,
    ``grace`` and ``durability``: see :class:`~hitl_nb.agent.langgraph.GraphExecutor`;
    ``on_stop``: coroutines run on the server's loop when it stops (a database store's
    ``engine.dispose``)."""
    made: list[GraphExecutor] = []

    def executor_for(hitl: HitlExtension) -> GraphExecutor:
        made.append(
            GraphExecutor(
                graph,
                hitl,
                inputs=inputs,
                result=result,
                grace=grace,
                checkpointer=checkpointer,
                durability=durability,
            )
        )
        return made[0]

    async def start() -> None:
        await made[0].start()

    async def stop() -> None:
        await made[0].aclose()

    return agent_app(
        executor_for,
        name=name,
        description=description,
        task_store=task_store,
        host=host,
        port=port,
        grpc_port=grpc_port,
        on_start=[start],
        on_stop=[stop, *on_stop],
    )
