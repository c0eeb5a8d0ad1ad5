"""An ASGI app served by uvicorn on a thread of its own: an agent next to a notebook.

A server on the kernel's own event loop cannot be reached by a synchronous request from
that kernel (PITFALLS), so :func:`serve` gives the agent its own thread and loop, like
the bundled mock agent. The ``on_start`` coroutines run on that loop before it listens
(what must be opened on the loop that uses it, such as a LangGraph checkpointer on
aiosqlite); it listens on 127.0.0.1 (port 0: a free one) until :meth:`Served.stop`, then
runs the ``on_stop`` coroutines on its loop (the SDK request handler's ``aclose``,
:meth:`HitlExtension.aclose <hitl_nb.agent.HitlExtension.aclose>`) so nothing is left
pending.

A :class:`GrpcListener` serves the agent on gRPC too, on the same loop: it is bound
first (a card must list its URL before the app is made), given its servicer, and handed
to :func:`serve`, which starts it with the HTTP server and stops it with it.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

__all__ = ["GrpcListener", "Served", "serve"]

#: Seconds open calls and streams are given when a server stops, then cut.
_GRACE = 2


class GrpcListener:
    """A ``grpc.aio`` server bound on ``host``:``port`` (0: a free port), not started yet:
    its ``url`` (``grpc://127.0.0.1:PORT``) is known, so a card can list it. Give it its
    servicer with :meth:`add_a2a`, then pass it to :func:`serve` (``grpc=``), which starts
    and stops it on the agent's loop. ``interceptors`` go in front of every call
    (:meth:`HitlExtension.grpc_interceptor <hitl_nb.agent.HitlExtension.grpc_interceptor>`);
    ``max_message`` bounds each message received or sent (bytes). Needs ``hitl-nb[grpc]``.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        interceptors: Iterable[Any] = (),
        max_message: int = 4 * 1024 * 1024,
    ) -> None:
        # grpc.aio ties a server to the loop it is made on: the loop the agent is served
        # on, made here and run for the binding on a thread of its own (the caller may be
        # on a running loop of its own, a kernel's), then handed to the agent's thread.
        self.loop = asyncio.new_event_loop()
        options = [
            ("grpc.max_receive_message_length", max_message),
            ("grpc.max_send_message_length", max_message),
        ]

        async def bind() -> tuple[Any, int]:
            import grpc.aio

            server = grpc.aio.server(interceptors=list(interceptors), options=options)
            return server, server.add_insecure_port(f"{host}:{port}")

        made: list[Any] = []

        def on_loop() -> None:
            try:
                made.append(self.loop.run_until_complete(bind()))
            except BaseException as exc:  # raised below, on the caller's thread
                made.append(exc)

        binder = threading.Thread(target=on_loop, name="hitl-nb-grpc-bind", daemon=True)
        binder.start()
        binder.join()
        if not made or isinstance(made[0], BaseException):
            self.loop.close()
            raise OSError(f"cannot listen for gRPC on {host}:{port}: {made[:1]!r}")
        self.server, bound = made[0]
        if not bound:
            self.loop.close()
            raise OSError(f"cannot listen for gRPC on {host}:{port}")
        shown = f"[{host}]" if ":" in host else host
        #: The address to list in a card's GRPC interface.
        self.url = f"grpc://{shown}:{bound}"

    def add_a2a(self, servicer: Any) -> None:
        """Serve ``servicer`` (a2a-sdk's ``GrpcHandler``) as ``lf.a2a.v1.A2AService``."""
        from a2a.types import a2a_pb2_grpc

        a2a_pb2_grpc.add_A2AServiceServicer_to_server(servicer, self.server)  # type: ignore[no-untyped-call]

    def close(self) -> None:
        """Give the loop up without serving (when the agent does not start)."""
        if not self.loop.is_closed():
            self.loop.close()

    def __repr__(self) -> str:
        return f"<GrpcListener {self.url}>"


class Served:
    """A running server: ``url``, ``stop()``; a context manager."""

    def __init__(
        self,
        app: Any,
        sock: socket.socket,
        on_stop: Iterable[Callable[[], Awaitable[Any]]],
        on_start: Iterable[Callable[[], Awaitable[Any]]] = (),
        grpc: GrpcListener | None = None,
    ) -> None:
        import uvicorn

        self._sock = sock
        bound_host, bound_port = self._sock.getsockname()[:2]
        #: The base URL, e.g. ``http://127.0.0.1:39481``.
        self.url = f"http://{bound_host}:{bound_port}"
        #: The gRPC address (``grpc://127.0.0.1:PORT``), or None when not served on gRPC.
        self.grpc_url = grpc.url if grpc is not None else None
        self._grpc = grpc
        self._loop = grpc.loop if grpc is not None else asyncio.new_event_loop()
        # Open streams (a task followed by SSE) are cut after 2 s rather than waited for.
        config = uvicorn.Config(
            app, log_level="warning", lifespan="off", timeout_graceful_shutdown=_GRACE
        )
        self._server = uvicorn.Server(config)
        self._on_start = list(on_start)
        self._on_stop = list(on_stop)
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="hitl-nb-agent", daemon=True)
        self._thread.start()
        self._started.wait(30)
        if self._error is not None or not self._server.started:
            self.stop()
            raise RuntimeError(f"the agent did not start: {self._error!r}")

    def _run(self) -> None:
        try:
            _run_on(self._loop, self._serve())
        except BaseException as exc:  # reported by the constructor
            self._error = exc
        finally:
            self._started.set()

    async def _serve(self) -> None:
        try:
            for start in self._on_start:
                await start()
            if self._grpc is not None:
                await self._grpc.server.start()
            watcher = asyncio.ensure_future(self._server.serve(sockets=[self._sock]))
            while not self._server.started and not watcher.done():
                await asyncio.sleep(0.005)
            self._started.set()
            await watcher
        finally:
            if self._grpc is not None:
                await self._grpc.server.stop(_GRACE)
            for stop in self._on_stop:
                await stop()

    def stop(self) -> None:
        """Stop serving (open streams are closed) and wait for the thread to end."""
        self._server.should_exit = True
        self._thread.join(30)
        self._sock.close()

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<Served {self.url}>"


def _run_on(loop: asyncio.AbstractEventLoop, main: Awaitable[None]) -> None:
    """``asyncio.run(main)`` on a loop made beforehand: what is left when ``main`` ends
    (sse-starlette's shutdown watcher...) is cancelled, then the loop is closed."""
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(main)
    finally:
        try:
            left = asyncio.all_tasks(loop)
            for task in left:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def serve(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    sock: socket.socket | None = None,
    on_stop: Iterable[Callable[[], Awaitable[Any]]] = (),
    on_start: Iterable[Callable[[], Awaitable[Any]]] = (),
    grpc: GrpcListener | None = None,
) -> Served:
    """Serve ``app`` on a thread of its own; returns once it listens (``.url``).

    ``sock``: a listening socket to serve on instead of ``host`` and ``port`` (bind it
    first when the app must know its own URL, as an agent card does); ``on_start`` and
    ``on_stop``: coroutines run on the server's loop before it listens and after it stops;
    ``grpc``: a :class:`GrpcListener` served alongside, on the same loop (``.grpc_url``).
    """
    return Served(app, sock or socket.create_server((host, port)), on_stop, on_start, grpc)
