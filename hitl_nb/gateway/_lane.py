"""One kept HTTP/1.1 connection, one request at a time: a lane of the gateway's requests
to agents (:class:`~hitl_nb.gateway._agents.AgentPool` keeps a few of them).

Why not httpcore's pool of one connection, which a lane was: a lane serves one request at
a time on one connection, and needs none of what a shared pool pays for on every request
(its bookkeeping, its events, an anyio cancel scope around each read and write, the
request's head and its body sent apart). On the hub service that machinery was about half
of the CPU time of forwarding an answer (``benchmarks/bench_scale.py``). Here h11 reads
and writes HTTP/1.1, an asyncio protocol carries the bytes, the request goes out in one
write, and a timeout is one timer for as long as a wait lasts.

What a caller sees stays httpx's: a request's ``timeout`` extension is obeyed (``pool``
for the lane, ``connect``, ``read`` for each wait for bytes, ``write`` for a send the
socket cannot take at once), failures are httpx's exceptions (``ConnectError``,
``ConnectTimeout``, ``PoolTimeout``, ``ReadTimeout``, ``WriteTimeout``, ``ReadError``,
``RemoteProtocolError``), https is verified with httpx's default context. A kept
connection is used again only when its last exchange ended cleanly and the agent has not
closed it since; an answer not read to its end closes it.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Callable
from typing import Any, cast

import h11
import httpx

__all__ = ["Lane"]

#: Bytes read ahead of the reader before the socket is paused (an answer's body is read
#: at the pace its reader takes it).
_READ_AHEAD = 256 * 1024
_DEFAULT_PORTS = {b"http": 80, b"https": 443}
Origin = tuple[bytes, bytes, int]


class _Wire(asyncio.Protocol):
    """The socket's side: bytes received and waits for them, each bounded by a timer."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._chunks: list[bytes] = []
        self._buffered = 0
        self._paused = False
        self.eof = False
        self.lost: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._writable: asyncio.Future[None] | None = None

    # -- asyncio's calls ------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A TCP connection's transport (not always an asyncio.Transport subclass: uvloop's
        # is its own class with the same methods).
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self._chunks.append(data)
        self._buffered += len(data)
        if self._buffered > _READ_AHEAD and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.lost = exc
        self._wake()
        writable, self._writable = self._writable, None
        if writable is not None and not writable.done():
            writable.set_result(None)

    def pause_writing(self) -> None:
        if self._writable is None:
            self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        writable, self._writable = self._writable, None
        if writable is not None and not writable.done():
            writable.set_result(None)

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- the lane's calls -----------------------------------------------------------

    @property
    def idle_and_open(self) -> bool:
        """Nothing arrived since the last exchange and the peer did not close: fit to
        carry the next request."""
        transport = self.transport
        return (
            not self.eof
            and not self._chunks
            and transport is not None
            and not transport.is_closing()
        )

    async def read(self, timeout: float | None) -> bytes:
        """The bytes received so far (waiting up to ``timeout`` for some); b"" at the end."""
        if not self._chunks and not self.eof:
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            await _bounded(waiter, timeout, httpx.ReadTimeout)
        if not self._chunks:
            if self.lost is not None:
                raise httpx.ReadError(str(self.lost) or type(self.lost).__name__)
            return b""
        data = b"".join(self._chunks)
        self._chunks.clear()
        self._buffered = 0
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return data

    async def write(self, data: bytes, timeout: float | None) -> None:
        """Send ``data`` in one write; wait (up to ``timeout``) only when the socket's
        buffer is full."""
        transport = self.transport
        if transport is None or transport.is_closing():
            raise httpx.WriteError("the connection was closed")
        transport.write(data)
        if self._writable is not None:
            await _bounded(asyncio.shield(self._writable), timeout, httpx.WriteTimeout)

    def close(self) -> None:
        """Close the socket (at once: nothing of it is used again)."""
        if self.transport is not None:
            self.transport.abort()


async def _bounded(
    waiter: asyncio.Future[None], timeout: float | None, error: type[httpx.TimeoutException]
) -> None:
    """Wait for ``waiter``; ``error`` after ``timeout`` seconds (one timer, no task)."""
    if timeout is None:
        await waiter
        return
    timed_out = False

    def expire() -> None:
        nonlocal timed_out
        if not waiter.done():
            timed_out = True
            waiter.cancel()

    timer = asyncio.get_running_loop().call_later(timeout, expire)
    try:
        await waiter
    except asyncio.CancelledError:
        if timed_out:
            raise error(f"no answer within {timeout:g} s") from None
        raise
    finally:
        timer.cancel()


class _Connection:
    """One connection to one origin: the socket and h11's state of it."""

    def __init__(self, origin: Origin, wire: _Wire) -> None:
        self.origin = origin
        self.wire = wire
        self.h11 = h11.Connection(h11.CLIENT)

    @property
    def reusable(self) -> bool:
        return self.h11.our_state is h11.IDLE and self.wire.idle_and_open

    async def next_event(self, timeout: float | None) -> Any:
        """h11's next event, reading from the socket as long as it needs data."""
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpx.RemoteProtocolError(str(exc)) from exc
            if event is not h11.NEED_DATA:
                return event
            data = await self.wire.read(timeout)
            if not data and self.h11.their_state is h11.SEND_RESPONSE:
                raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
            self.h11.receive_data(data)


async def _connect(
    origin: Origin, timeout: float | None, tls: Callable[[], ssl.SSLContext]
) -> _Connection:
    scheme, host, port = origin
    wire = _Wire()
    loop = asyncio.get_running_loop()
    name = host.decode("ascii")
    secure = scheme == b"https"
    try:
        made = loop.create_connection(
            lambda: wire,
            name,
            port,
            ssl=tls() if secure else None,
            server_hostname=name if secure else None,
        )
        await asyncio.wait_for(made, timeout)
    except asyncio.TimeoutError:
        raise httpx.ConnectTimeout(f"no connection within {timeout:g} s") from None
    except OSError as exc:  # refused, unreachable, no such host, TLS (ssl.SSLError)
        raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
    return _Connection(origin, wire)


class Lane(httpx.AsyncBaseTransport):
    """An httpx transport holding one kept connection (to one origin at a time) and
    serving one request at a time; others wait their turn (up to the ``pool`` timeout).
    ``tls``: the TLS context for https (made when first needed)."""

    def __init__(self, tls: Callable[[], ssl.SSLContext]) -> None:
        self._tls = tls
        self._turn = asyncio.Lock()
        self._conn: _Connection | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` on this lane's connection (made anew when needed)."""
        timeouts = request.extensions.get("timeout", {})
        if self._turn.locked():
            try:
                await asyncio.wait_for(self._turn.acquire(), timeouts.get("pool"))
            except asyncio.TimeoutError:
                raise httpx.PoolTimeout("no free connection in time") from None
        else:
            await self._turn.acquire()
        try:
            conn = await self._connection(request.url, timeouts.get("connect"))
            response = await self._exchange(conn, request, timeouts)
        except BaseException:
            self._drop()
            self._turn.release()
            raise
        return response

    async def _connection(self, url: httpx.URL, timeout: float | None) -> _Connection:
        scheme = url.raw_scheme
        if scheme not in _DEFAULT_PORTS:
            raise httpx.UnsupportedProtocol(f"unsupported scheme {url.scheme!r}")
        origin = (scheme, url.raw_host, url.port or _DEFAULT_PORTS[scheme])
        conn = self._conn
        if conn is not None and conn.origin == origin and conn.reusable:
            return conn
        self._drop()
        self._conn = await _connect(origin, timeout, self._tls)
        return self._conn

    async def _exchange(
        self, conn: _Connection, request: httpx.Request, timeouts: dict[str, Any]
    ) -> httpx.Response:
        body = await request.aread()
        head = h11.Request(
            method=request.method, target=request.url.raw_path, headers=request.headers.raw
        )
        out = conn.h11.send(head) or b""
        if body:
            out += conn.h11.send(h11.Data(data=body)) or b""
        out += conn.h11.send(h11.EndOfMessage()) or b""
        await conn.wire.write(out, timeouts.get("write"))  # head and body: one write
        read_timeout = timeouts.get("read")
        while True:
            event = await conn.next_event(read_timeout)
            if isinstance(event, h11.Response):
                break
            if not isinstance(event, h11.InformationalResponse):
                raise httpx.RemoteProtocolError(f"unexpected {type(event).__name__} from the agent")
        return httpx.Response(
            event.status_code,
            headers=event.headers.raw_items(),
            stream=_Body(self, conn, read_timeout),
            extensions={
                "http_version": b"HTTP/" + event.http_version,
                "reason_phrase": event.reason,
            },
        )

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.wire.close()

    def _done(self, conn: _Connection, ended: bool) -> None:
        """The answer's body was read to its end (``ended``) or given up: keep the
        connection for the next request when both sides are done, then free the lane."""
        try:
            if ended and conn.h11.our_state is h11.DONE and conn.h11.their_state is h11.DONE:
                conn.h11.start_next_cycle()
            elif conn is self._conn:
                self._drop()
        finally:
            self._turn.release()

    async def aclose(self) -> None:
        """Close the kept connection."""
        self._drop()


class _Body(httpx.AsyncByteStream):
    """An answer's body, read from the lane's connection as its reader asks; closing it
    frees the lane (exactly once)."""

    def __init__(self, lane: Lane, conn: _Connection, timeout: float | None) -> None:
        self._lane = lane
        self._conn = conn
        self._timeout = timeout
        self._ended = False
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._closed:
            raise httpx.StreamClosed()
        try:
            while True:
                event = await self._conn.next_event(self._timeout)
                if isinstance(event, h11.Data):
                    yield bytes(event.data)
                elif isinstance(event, h11.EndOfMessage):
                    self._ended = True
                    return
                else:
                    raise httpx.RemoteProtocolError(
                        f"unexpected {type(event).__name__} in the agent's answer"
                    )
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._lane._done(self._conn, self._ended)
