"""An a2a-sdk agent app with hitl-prompt/v1, wired the usual way and served.

What an agent author writes by hand (``docs/agent.md`` shows it): the card declaring the
extension, the SDK's request handler on the executor, its card, JSON-RPC and HTTP+JSON
routes, the middleware in front; :func:`agent_app` does it for an executor built from the
agent's :class:`~hitl_nb.agent.HitlExtension`. With ``grpc_port`` it serves the SDK's
gRPC servicer too, behind the extension's interceptor, and the card lists the GRPC
interface after the JSON ones.
"""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
)

from ._extension import HitlExtension
from ._serve import GrpcListener, Served, serve

__all__ = ["agent_app"]


def agent_app(
    executor_for: Callable[[HitlExtension], AgentExecutor],
    *,
    name: str,
    description: str,
    task_store: Any = None,
    host: str = "127.0.0.1",
    port: int = 0,
    on_stop: Iterable[Callable[[], Awaitable[Any]]] = (),
    on_start: Iterable[Callable[[], Awaitable[Any]]] = (),
    grpc_port: int | None = None,
) -> Served:
    """Serve the executor ``executor_for(hitl)`` as an agent (JSON-RPC at ``/``,
    HTTP+JSON at ``/rest``, 0.3 JSON-RPC too) on a thread of its own (``on_start``,
    ``on_stop``: see :func:`~hitl_nb.agent.serve`). ``grpc_port``: serve A2A 1.0 on gRPC
    too, on that port of ``host`` (0: a free one; ``.grpc_url``; ``hitl-nb[grpc]``)."""
    from starlette.applications import Starlette

    sock = socket.create_server((host, port))
    base = "http://{}:{}".format(*sock.getsockname()[:2])
    store = task_store if task_store is not None else InMemoryTaskStore()
    hitl = HitlExtension(store)
    listener = None
    interfaces = [
        AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version="1.0"),
        AgentInterface(url=base + "/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"),
    ]
    if grpc_port is not None:
        try:
            listener = GrpcListener(
                host, grpc_port, interceptors=[hitl.grpc_interceptor()], max_message=hitl.max_body
            )
        except BaseException:
            sock.close()
            raise
        interfaces.append(
            AgentInterface(url=listener.url, protocol_binding="GRPC", protocol_version="1.0")
        )
    card = hitl.declare(
        AgentCard(
            name=name,
            description=description,
            version="1.0.0",
            supported_interfaces=interfaces,
            capabilities=AgentCapabilities(streaming=True),
            default_input_modes=["text/plain", "application/json"],
            default_output_modes=["text/plain", "application/json"],
            skills=[AgentSkill(id="ask", name=name, description=description, tags=["hitl"])],
        )
    )
    handler = DefaultRequestHandler(
        agent_executor=executor_for(hitl), task_store=store, agent_card=card
    )
    routes = [
        *create_agent_card_routes(card),
        *create_rest_routes(handler, path_prefix="/rest"),
        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
    ]
    app = Starlette(routes=routes, middleware=[hitl.middleware()])
    if listener is not None:
        from a2a.server.request_handlers import GrpcHandler

        listener.add_a2a(GrpcHandler(handler))
    return serve(
        app,
        sock=sock,
        on_stop=[hitl.aclose, handler.aclose, *on_stop],
        on_start=on_start,
        grpc=listener,
    )
