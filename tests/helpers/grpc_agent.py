"""An a2a-sdk agent served on the SDK's own gRPC server, on a thread of its own.

The SDK's ``GrpcHandler`` on a ``DefaultRequestHandler`` of ``executor``, listening on
127.0.0.1 port 0 (``grpc.aio`` on its own loop: a client in the test's loop reaches it).
:func:`grpc_card` writes the card that lists only the gRPC interface (a client is given
the card itself, as the SDK serves no card over gRPC). ``interceptors`` are put in front
of the handler (hitl_nb.agent's, or a test's own); ``servicer`` replaces the SDK's
handler and ``generic`` handlers replace both (hostile answers in raw bytes).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import grpc
import grpc.aio
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import a2a_pb2_grpc

from hitl_nb.a2a import to_proto
from hitl_nb.spec import EXTENSION_URI


def grpc_card(url: str, *, extension: bool = True, also: Sequence[dict[str, str]] = ()) -> dict:
    """A 1.0 card whose only (or first) interface is gRPC at ``url``."""
    extensions = (
        [{"uri": EXTENSION_URI, "description": "hitl", "required": False, "params": {}}]
        if extension
        else []
    )
    return {
        "name": "grpc agent",
        "description": "an a2a-sdk agent on gRPC",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            *also,
        ],
        "capabilities": {"streaming": True, "extensions": extensions},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "ask", "name": "ask", "description": "asks", "tags": ["hitl"]}],
    }


class GrpcAgent:
    """``with GrpcAgent(executor) as agent:`` -> ``agent.url`` (``grpc://127.0.0.1:PORT``)."""

    def __init__(
        self,
        executor: Any,
        *,
        interceptors: Sequence[Any] = (),
        options: Sequence[tuple[str, Any]] = (),
        handler: Any = None,
        servicer: Any = None,
        generic: Sequence[Any] = (),
    ) -> None:
        self.executor = executor
        self.interceptors = list(interceptors)
        self.options = list(options)
        self.handler = handler
        self.servicer = servicer
        self.generic = list(generic)
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: Any = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="grpc-agent", daemon=True)

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:
            self._error = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        handler = self.handler or DefaultRequestHandler(
            agent_executor=self.executor,
            task_store=InMemoryTaskStore(),
            agent_card=to_proto("AgentCard", grpc_card("grpc://127.0.0.1:0")),
        )
        server = grpc.aio.server(interceptors=self.interceptors, options=self.options)
        if self.generic:  # in place of the A2A servicer (registered methods would win)
            server.add_generic_rpc_handlers(tuple(self.generic))
        else:
            servicer = self.servicer or GrpcHandler(handler)
            a2a_pb2_grpc.add_A2AServiceServicer_to_server(servicer, server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        self._server = server
        self.url = f"grpc://127.0.0.1:{port}"
        self._ready.set()
        await self._stop.wait()
        await server.stop(grace=0.1)

    def __enter__(self) -> GrpcAgent:
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None or not self.url:
            raise RuntimeError(f"the gRPC agent did not start: {self._error!r}")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
