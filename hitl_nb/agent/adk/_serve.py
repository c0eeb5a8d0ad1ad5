"""``serve_agent``: an ADK agent as a running A2A agent, in one call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService, InMemorySessionService

from .._app import agent_app
from .._extension import HitlExtension
from .._serve import Served
from ._confirmations import PayloadSchemas
from ._executor import ConfirmationExecutor, Result, default_result

__all__ = ["serve_agent"]


def serve_agent(
    agent: BaseAgent | Runner,
    *,
    name: str = "ADK agent",
    description: str = "An ADK agent whose tools ask people to confirm (hitl-prompt/v1)",
    task_store: Any = None,
    session_service: BaseSessionService | None = None,
    app_name: str = "hitl-nb",
    user_id: str = "a2a",
    payload_schemas: PayloadSchemas | None = None,
    result: Result = default_result,
    host: str = "127.0.0.1",
    port: int = 0,
    on_stop: Iterable[Callable[[], Awaitable[Any]]] = (),
    grpc_port: int | None = None,
) -> Served:
    """Serve ``agent`` (an ADK agent, or a ``Runner`` of your own) as an A2A agent on a
    thread of its own: JSON-RPC at ``/``, HTTP+JSON at ``/rest``, the card at
    ``/.well-known/agent-card.json``, hitl-prompt/v1 declared. Returns once it listens:
    ``.url``, ``.stop()``. ``grpc_port``: serve A2A 1.0 on gRPC too, on that port of
    ``host`` (0: a free one; ``.grpc_url``; ``hitl-nb[grpc]``); the card then lists the
    GRPC interface after the JSON ones.

    ``task_store``: the SDK's (default: in memory); ``session_service``: ADK's, for the
    runner made here (default: in memory; ``app_name`` names the sessions). With a
    database task store and ADK's ``DatabaseSessionService``, a prompt outlives a restart
    of the process. ``user_id``, ``payload_schemas``, ``result``: see
    :class:`~hitl_nb.agent.adk.ConfirmationExecutor`; ``on_stop``: coroutines run on the
    server's loop when it stops (a database store's ``engine.dispose``, the session
    service's ``close``)."""
    if isinstance(agent, Runner):
        runner = agent
    else:
        sessions = session_service if session_service is not None else InMemorySessionService()
        runner = Runner(app_name=app_name, agent=agent, session_service=sessions)

    def executor_for(hitl: HitlExtension) -> ConfirmationExecutor:
        return ConfirmationExecutor(
            runner, hitl, user_id=user_id, payload_schemas=payload_schemas, result=result
        )

    return agent_app(
        executor_for,
        name=name,
        description=description,
        task_store=task_store,
        host=host,
        port=port,
        grpc_port=grpc_port,
        on_stop=[runner.close, *on_stop],
    )
