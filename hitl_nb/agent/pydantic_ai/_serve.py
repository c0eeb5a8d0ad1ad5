"""``serve_agent``: a Pydantic AI agent as a running A2A agent, in one call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from .._app import agent_app
from .._extension import HitlExtension
from .._pauses import PauseStore
from .._serve import Served
from ._executor import DeferredExecutor, Result, default_result

__all__ = ["serve_agent"]


def serve_agent(
    agent: Any,
    *,
    name: str = "Pydantic AI agent",
    description: str = "A Pydantic AI agent whose tools ask people (hitl-prompt/v1)",
    task_store: Any = None,
    pauses: PauseStore | None = None,
    deps: Any = None,
    result: Result = default_result,
    host: str = "127.0.0.1",
    port: int = 0,
    on_stop: Iterable[Callable[[], Awaitable[Any]]] = (),
    grpc_port: int | None = None,
) -> Served:
    """Serve ``agent`` as an A2A agent on a thread of its own: JSON-RPC at ``/``,
    HTTP+JSON at ``/rest``, the card at ``/.well-known/agent-card.json``, hitl-prompt/v1
    declared. Returns once it listens: ``.url``, ``.stop()``. ``grpc_port``: serve
    A2A 1.0 on gRPC too, on that port of ``host`` (0: a free one; ``.grpc_url``;
    ``hitl-nb[grpc]``); the card then lists the GRPC interface after the JSON ones.

    ``task_store``: the SDK's (default: in memory); ``pauses``: where a run waiting on
    people is kept (default: in memory). With a database task store and
    :class:`~hitl_nb.agent.pydantic_ai.SqlitePauses`, a prompt outlives a restart of the
    process. ``deps``, ``result``: see
    :class:`~hitl_nb.agent.pydantic_ai.DeferredExecutor`; ``on_stop``: coroutines run on
    the server's loop when it stops (a database store's ``engine.dispose``)."""

    def executor_for(hitl: HitlExtension) -> DeferredExecutor:
        return DeferredExecutor(agent, hitl, pauses=pauses, deps=deps, result=result)

    return agent_app(
        executor_for,
        name=name,
        description=description,
        task_store=task_store,
        host=host,
        port=port,
        grpc_port=grpc_port,
        on_stop=on_stop,
    )
