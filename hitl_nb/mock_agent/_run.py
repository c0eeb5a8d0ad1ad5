"""Running the mock agent: in a background thread, in the foreground, or mounted.

- :class:`MockAgent` ``(...).start()`` serves on 127.0.0.1 (port 0: a free one) from its
  own thread and event loop, never the caller's: a notebook cell's synchronous request
  to a server on the kernel's own loop would deadlock. ``.url``, ``.stop()``, and
  ``with MockAgent() as agent:``.
- :func:`serve` runs it in the foreground until SIGINT/SIGTERM (``hitl-nb mock-agent``,
  :mod:`~hitl_nb.mock_agent._cli`).
- :func:`mock_agent_handlers` gives the tornado route table (:func:`routes`) under a
  prefix, to mount the agent in another tornado application (a Jupyter server, for
  instance).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import threading
from collections.abc import Iterable
from typing import Any

import tornado.web
from tornado.httpserver import HTTPServer

from hitl_nb.a2a import CardStamps
from hitl_nb.mock_agent._card import AgentCardHandler
from hitl_nb.mock_agent._core import AgentCore
from hitl_nb.mock_agent._faults import Faults
from hitl_nb.mock_agent._http import MAX_BODY_BYTES, AgentService
from hitl_nb.mock_agent._jsonrpc import JsonRpcHandler
from hitl_nb.mock_agent._push_delivery import PushSettings
from hitl_nb.mock_agent._rest import (
    ExtendedCardHandler,
    MessageSendHandler,
    MessageStreamHandler,
    NotFoundHandler,
    PushConfigHandler,
    TaskActionHandler,
    TaskHandler,
    TasksHandler,
)
from hitl_nb.mock_agent._scenarios import (
    MAX_DEADLINE_SECONDS,
    DeadlinePolicy,
    Scenario,
    ScenarioRegistry,
    deadline_policy,
)
from hitl_nb.mock_agent._store import open_task_store

__all__ = ["MockAgent", "mock_agent_handlers", "routes", "serve"]

# Tornado itself refuses bodies over this (closing the connection); below it the agent
# answers an oversize body with a clear A2A error.
_TORNADO_BODY_LIMIT = 16 * 1024 * 1024


_access = logging.getLogger("hitl_nb.mock_agent.access")


def _access_log(handler: tornado.web.RequestHandler) -> None:
    # Debug level: a notebook should not show a line per request (nor per 4xx).
    req = handler.request
    _access.debug(
        "%s %s %s %.1fms", handler.get_status(), req.method, req.uri, 1000 * req.request_time()
    )


def routes(service: AgentService) -> list[tuple[str, type, dict[str, Any]]]:
    """The route table under ``service.prefix``, ready for ``Application.add_handlers``.

    Relative to the prefix (``""`` standalone, anything when mounted)::

        GET  /.well-known/agent-card.json     the agent card (A2A §8)  (_card.py)
        POST /                                JSON-RPC 1.0 and 0.3   (_jsonrpc.py)
        POST /message:send                    HTTP+JSON (A2A §11)    (_rest.py)
        POST /message:stream
        GET  /tasks/{id}       GET /tasks
        POST /tasks/{id}:cancel
        POST /tasks/{id}:subscribe            (GET too)
        POST|GET   /tasks/{id}/pushNotificationConfigs          create, list
        GET|DELETE /tasks/{id}/pushNotificationConfigs/{cid}    get, delete
        GET  /extendedAgentCard                       ExtendedAgentCardNotConfigured
    """
    p = service.prefix.rstrip("/")
    service.prefix = p
    kw = {"service": service}
    tid = r"([^/:]+)"
    return [
        (rf"{p}/\.well-known/agent-card\.json", AgentCardHandler, {**kw, "stamps": CardStamps()}),
        (rf"{p}/?", JsonRpcHandler, kw),
        (rf"{p}/message:send", MessageSendHandler, kw),
        (rf"{p}/message:stream", MessageStreamHandler, kw),
        (rf"{p}/tasks", TasksHandler, kw),
        (rf"{p}/tasks/{tid}", TaskHandler, kw),
        (rf"{p}/tasks/{tid}:(cancel|subscribe)", TaskActionHandler, kw),
        (rf"{p}/tasks/{tid}/pushNotificationConfigs/?(?:/([^/]+))?", PushConfigHandler, kw),
        (rf"{p}/extendedAgentCard", ExtendedCardHandler, kw),
        (rf"{p}/.*", NotFoundHandler, kw),
    ]


def _faults(faults: Iterable[str] | Faults | None) -> Faults:
    return faults if isinstance(faults, Faults) else Faults.parse(faults)


def mock_agent_handlers(
    prefix: str = "",
    *,
    store: str | os.PathLike[str] | None = None,
    faults: Iterable[str] | Faults | None = None,
    scenarios: Iterable[Scenario] = (),
    deadline_seconds: float = 30.0,
    on_deadline: DeadlinePolicy = "keep-open",
    max_body: int = MAX_BODY_BYTES,
    push_notifications: bool = True,
) -> list[tuple[str, type, dict[str, Any]]]:
    """Handlers of a new mock agent under ``prefix``, for ``Application.add_handlers``.

    The agent binds to the loop of the first request it serves; use it from that
    application's loop only. ``push_notifications``: as for :class:`MockAgent`.
    """
    on_deadline = deadline_policy(on_deadline)
    fault_set = _faults(faults)
    core = AgentCore(
        scenarios=ScenarioRegistry(scenarios),
        store=open_task_store(store),
        faults=fault_set,
        deadline_seconds=deadline_seconds,
        on_deadline=on_deadline,
        push=PushSettings(enabled=push_notifications),
    )
    service = AgentService(core=core, faults=fault_set, prefix=prefix, max_body=max_body)
    return routes(service)


class MockAgent:
    """The bundled A2A agent, served from a background thread with its own event loop.

    >>> with MockAgent() as agent:                    # doctest: +SKIP
    ...     print(agent.url)                          # http://127.0.0.1:54321

    ``store``: a SQLite file path to survive restarts (default: memory). ``faults``:
    names from :data:`~hitl_nb.mock_agent._faults.FAULT_NAMES`. ``scenarios``: your own,
    added to the built-ins. ``deadline_seconds`` / ``on_deadline``: the ``deadline``
    scenario's defaults (``"keep-open"`` or ``"fail"``). ``max_body``: the request size
    cap in bytes. ``ping_interval``: seconds of silence before a stream sends ``: ping``.
    ``read_timeout``: seconds a client gets to send a request's headers, and again its
    body, before the connection is closed (a slow client holds no socket for longer).

    Push notifications (A2A §4.3): the card says ``pushNotifications: true`` and
    nothing is sent until a client configures a webhook
    (``client.create_push_config(task_id, url, token=...)``). ``push_notifications=False``
    turns them off (the methods answer -32003). A failed delivery is retried
    ``push_retries`` times, ``push_backoff`` seconds apart at first and doubling;
    ``push_timeout`` bounds each attempt.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        store: str | os.PathLike[str] | None = None,
        faults: Iterable[str] | Faults | None = None,
        scenarios: Iterable[Scenario] = (),
        deadline_seconds: float = 30.0,
        on_deadline: DeadlinePolicy = "keep-open",
        max_body: int = MAX_BODY_BYTES,
        ping_interval: float = 15.0,
        read_timeout: float = 30.0,
        push_notifications: bool = True,
        push_retries: int = 3,
        push_backoff: float = 0.25,
        push_timeout: float = 10.0,
    ) -> None:
        on_deadline = deadline_policy(on_deadline)
        if push_retries < 0 or push_backoff < 0 or push_timeout <= 0:
            raise ValueError("push_retries and push_backoff must be >= 0, push_timeout > 0")
        self.push = PushSettings(
            enabled=push_notifications,
            retries=push_retries,
            backoff=push_backoff,
            timeout=push_timeout,
        )
        if ping_interval <= 0:
            raise ValueError("ping_interval must be positive")
        if read_timeout <= 0:
            raise ValueError("read_timeout must be positive")
        if not 0 < deadline_seconds <= MAX_DEADLINE_SECONDS:
            raise ValueError(f"deadline_seconds must be positive, at most {MAX_DEADLINE_SECONDS}")
        self.host = host
        self.port = port
        self.store = store
        self.faults = _faults(faults)
        self.scenarios = ScenarioRegistry(scenarios)
        self.deadline_seconds = deadline_seconds
        self.on_deadline = on_deadline
        self.max_body = max_body
        self.ping_interval = ping_interval
        self.read_timeout = read_timeout
        self.core: AgentCore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: HTTPServer | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    def register_scenario(self, scenario: Scenario, *, replace: bool = False) -> None:
        """Add a scenario (also while running: it applies to new tasks)."""
        if self._loop is not None and self._loop.is_running():
            done = threading.Event()
            errors: list[BaseException] = []

            def add() -> None:
                try:
                    self.scenarios.register(scenario, replace=replace)
                except BaseException as exc:
                    errors.append(exc)
                done.set()

            self._loop.call_soon_threadsafe(add)
            done.wait(5)
            if errors:
                raise errors[0]
            return
        self.scenarios.register(scenario, replace=replace)

    @property
    def url(self) -> str:
        """The base URL (JSON-RPC endpoint, HTTP+JSON root; the card is below it)."""
        if not self.running:
            raise RuntimeError("the mock agent is not running: call start() first")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def card_url(self) -> str:
        """Where the agent card is served."""
        return self.url + "/.well-known/agent-card.json"

    @property
    def running(self) -> bool:
        """True between start() and stop()."""
        return self._thread is not None and self._thread.is_alive() and self._ready.is_set()

    async def _setup(self) -> None:
        loop = asyncio.get_running_loop()
        # Bind first (nothing to undo when the port is taken), then open the store.
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.create_server((self.host, self.port), family=family, backlog=128)
        sock.setblocking(False)
        try:
            self.core = AgentCore(
                scenarios=self.scenarios,
                store=open_task_store(self.store),
                faults=self.faults,
                deadline_seconds=self.deadline_seconds,
                on_deadline=self.on_deadline,
                push=self.push,
            )
        except BaseException:
            sock.close()
            raise
        self.core.attach(loop)
        service = AgentService(
            core=self.core,
            faults=self.faults,
            max_body=self.max_body,
            ping_interval=self.ping_interval,
        )
        app = tornado.web.Application(routes(service), log_function=_access_log)
        self.port = sock.getsockname()[1]
        # Tornado's defaults let a client take an hour over its headers and forever over
        # its body (slowloris); idle_connection_timeout also bounds the wait for headers.
        self._server = HTTPServer(
            app,
            max_body_size=max(_TORNADO_BODY_LIMIT, self.max_body),
            idle_connection_timeout=self.read_timeout,
            body_timeout=self.read_timeout,
        )
        self._server.add_sockets([sock])

    async def _teardown(self) -> None:
        if self._server is not None:
            self._server.stop()
        if self.core is not None:
            self.core.close()  # ends every open stream
        await asyncio.sleep(0)
        if self._server is not None:
            try:
                await asyncio.wait_for(self._server.close_all_connections(), 2.0)
            except asyncio.TimeoutError:
                pass

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            loop.run_until_complete(self._setup())
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self._teardown())
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def start(self) -> MockAgent:
        """Start serving in a background thread; returns self once the port is bound."""
        if self._thread is not None:
            raise RuntimeError("this MockAgent was already started; make a new one")
        self._thread = threading.Thread(target=self._run, name="hitl-nb-mock-agent", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            self._thread.join()
            raise self._error
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving, end open streams, close the store, join the thread."""
        thread, loop = self._thread, self._loop
        if thread is None or loop is None or not thread.is_alive():
            return
        loop.call_soon_threadsafe(loop.stop)
        if threading.current_thread() is not thread:  # stop() from a scenario: no self-join
            thread.join(timeout)

    def __enter__(self) -> MockAgent:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.url if self.running else "stopped"
        return f"<MockAgent {where} faults={self.faults.names()}>"


async def serve(agent: MockAgent, *, announce: bool = True) -> None:
    """Serve ``agent`` on the current loop until SIGINT or SIGTERM, then shut down."""
    agent._loop = asyncio.get_running_loop()
    await agent._setup()
    agent._ready.set()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    handled = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
            handled.append(sig)
        except (NotImplementedError, RuntimeError):  # no loop signal handlers here
            pass
    if announce:
        host = f"[{agent.host}]" if ":" in agent.host else agent.host
        print(f"hitl-nb mock agent listening on http://{host}:{agent.port}", flush=True)
    try:
        await stop.wait()
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
        await agent._teardown()
