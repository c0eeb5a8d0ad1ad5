"""An ASGI app served by uvicorn on a thread of its own: an agent next to a notebook.

A server on the kernel's own event loop cannot be reached by a synchronous request from
that kernel (PITFALLS), so :func:`serve` gives the agent its own thread and loop, like
the bundled mock agent. The ``on_start`` coroutines run on that loop before it listens
(what must be opened on the loop that uses it, such as a LangGraph checkpointer on
aiosqlite); it listens on 127.0.0.1 (port 0: a free one) until :meth:`Served.stop`, then
runs the ``on_stop`` coroutines on its loop (the SDK request handler's ``aclose``,
:meth:`HitlExtension.aclose <hitl_nb.agent.HitlExtension.aclose>`) so nothing is left
pending.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

__all__ = ["Served", "serve"]


class Served:
    """A running server: ``url``, ``stop()``; a context manager."""

    def __init__(
        self,
        app: Any,
        sock: socket.socket,
        on_stop: Iterable[Callable[[], Awaitable[Any]]],
        on_start: Iterable[Callable[[], Awaitable[Any]]] = (),
    ) -> None:
        import uvicorn

        self._sock = sock
        bound_host, bound_port = self._sock.getsockname()[:2]
        #: The base URL, e.g. ``http://127.0.0.1:39481``.
        self.url = f"http://{bound_host}:{bound_port}"
        # Open streams (a task followed by SSE) are cut after 2 s rather than waited for.
        config = uvicorn.Config(
            app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2
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
            # asyncio.run cancels what is left (sse-starlette's shutdown watcher...).
            asyncio.run(self._serve())
        except BaseException as exc:  # reported by the constructor
            self._error = exc
        finally:
            self._started.set()

    async def _serve(self) -> None:
        try:
            for start in self._on_start:
                await start()
            watcher = asyncio.ensure_future(self._server.serve(sockets=[self._sock]))
            while not self._server.started and not watcher.done():
                await asyncio.sleep(0.005)
            self._started.set()
            await watcher
        finally:
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


def serve(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    sock: socket.socket | None = None,
    on_stop: Iterable[Callable[[], Awaitable[Any]]] = (),
    on_start: Iterable[Callable[[], Awaitable[Any]]] = (),
) -> Served:
    """Serve ``app`` on a thread of its own; returns once it listens (``.url``).

    ``sock``: a listening socket to serve on instead of ``host`` and ``port`` (bind it
    first when the app must know its own URL, as an agent card does); ``on_start`` and
    ``on_stop``: coroutines run on the server's loop before it listens and after it stops.
    """
    return Served(app, sock or socket.create_server((host, port)), on_stop, on_start)
