"""One kept HTTP/1.1 connection for the gateway's requests to agents
(hitl_nb/gateway/_lane.py), against agents that behave and agents that do not: real
servers on 127.0.0.1, each a few lines of asyncio speaking raw bytes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from hitl_nb.gateway._lane import Lane
from tests.helpers.until import until_async

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]


def _answer(body: bytes, *, extra: bytes = b"") -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + extra
        + b"Content-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )


async def _request(reader: asyncio.StreamReader) -> bytes:
    """One request as the server reads it (its head, then its body by Content-Length)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head + (await reader.readexactly(length) if length else b"")


def _run(handler: Handler, test: Callable[[str, list[int]], Awaitable[None]]) -> None:
    """Serve ``handler`` (given each connection's number) and run ``test`` against it
    with the server's URL and the list of connections it accepted."""

    async def go() -> None:
        accepted: list[int] = []
        open_writers: list[asyncio.StreamWriter] = []

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted.append(len(accepted))
            open_writers.append(writer)
            try:
                await handler(reader, writer, accepted[-1])
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            await test(f"http://127.0.0.1:{port}", accepted)
        finally:
            for writer in open_writers:
                writer.close()
            server.close()
            await server.wait_closed()

    asyncio.run(go())


def _client(lane: Lane, **timeout: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=lane, timeout=httpx.Timeout(10.0, **timeout))


def _lane() -> Lane:
    return Lane(httpx.create_ssl_context)


def test_requests_travel_whole_and_their_connection_is_kept() -> None:
    seen: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        while True:
            seen.append(await _request(reader))
            writer.write(_answer(b'{"n": %d}' % len(seen)))
            await writer.drain()

    async def test(url: str, accepted: list[int]) -> None:
        lane = _lane()
        async with _client(lane) as client:
            for n in (1, 2, 3):
                answer = await client.post(url + "/a2a?x=1", json={"ask": "x" * 200})
                assert answer.status_code == 200
                assert answer.json() == {"n": n}
                assert answer.reason_phrase == "OK"
                assert answer.http_version == "HTTP/1.1"
        assert accepted == [0]  # one connection for the three
        for request in seen:
            assert request.startswith(b"POST /a2a?x=1 HTTP/1.1\r\n")
            assert request.endswith(b'{"ask":"' + b"x" * 200 + b'"}')

    _run(handler, test)


def test_connection_close_or_an_agent_that_hung_up_gets_a_new_connection() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await _request(reader)
        # The first connection says it closes; the second closes without saying so.
        writer.write(_answer(b"{}", extra=b"Connection: close\r\n" if n == 0 else b""))
        await writer.drain()

    async def test(url: str, accepted: list[int]) -> None:
        lane = _lane()
        async with _client(lane) as client:
            assert (await client.get(url)).status_code == 200
            assert (await client.get(url)).status_code == 200

            # The agent hung up after its answer: once the lane has seen it, the next
            # request is not sent on the dead connection.
            async def hung_up_seen() -> bool:
                return lane._conn is None or not lane._conn.reusable

            await until_async(hung_up_seen, 30, "the lane seeing the agent hang up")
            assert (await client.get(url)).status_code == 200
        assert accepted == [0, 1, 2]

    _run(handler, test)


def test_an_answer_given_up_before_its_end_closes_the_connection() -> None:
    big = b"[" + b"0," * 600_000 + b"0]"  # more than the socket is read ahead

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        while True:
            await _request(reader)
            writer.write(_answer(big))
            await writer.drain()

    async def test(url: str, accepted: list[int]) -> None:
        lane = _lane()
        async with _client(lane) as client:
            async with client.stream("GET", url) as answer:
                async for _chunk in answer.aiter_raw():
                    break  # the rest is never read
            whole = await client.get(url)  # a new connection, the lane free again
            assert whole.content == big  # read in full, paused and resumed on the way
            again = await client.get(url)
            assert again.content == big
        assert accepted == [0, 1]  # the full read kept its connection

    _run(handler, test)


@pytest.mark.parametrize(
    ("reply", "error", "words"),
    [
        (b"", httpx.RemoteProtocolError, "without sending a response"),
        (b"garbage\r\n\r\n", httpx.RemoteProtocolError, None),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}", httpx.RemoteProtocolError, None),
    ],
    ids=["hung-up", "not-http", "body-cut-short"],
)
def test_an_agent_that_breaks_http_is_an_httpx_error_and_frees_the_lane(
    reply: bytes, error: type[Exception], words: str | None
) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await _request(reader)
        if n == 0:
            writer.write(reply)
            await writer.drain()
            return  # and hang up
        writer.write(_answer(b"{}"))
        await writer.drain()

    async def test(url: str, accepted: list[int]) -> None:
        lane = _lane()
        async with _client(lane) as client:
            with pytest.raises(error, match=words):
                answer = await client.get(url)
                await answer.aread()
            assert (await client.get(url)).status_code == 200
        assert accepted == [0, 1]

    _run(handler, test)


def test_an_agent_that_never_answers_times_out_and_a_busy_lane_is_waited_for_in_bounds() -> None:
    answer_now = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while True:
            await _request(reader)
            if n == 0:
                await reader.read()  # never answers: waits for the client to hang up
                return
            if n == 1:
                await answer_now.wait()
            writer.write(_answer(b"{}"))
            await writer.drain()

    async def test(url: str, accepted: list[int]) -> None:
        lane = _lane()
        async with _client(lane, read=0.3) as client:
            with pytest.raises(httpx.ReadTimeout):
                await client.get(url)
        async with _client(lane, pool=0.3) as client:
            slow = asyncio.ensure_future(client.get(url))  # holds the lane (connection 1)

            async def slow_arrived() -> bool:
                return len(accepted) == 2

            await until_async(slow_arrived, 30, "the slow request at the agent")
            with pytest.raises(httpx.PoolTimeout):
                await client.get(url)
            answer_now.set()
            assert (await slow).status_code == 200
            assert (await client.get(url)).status_code == 200  # on connection 1, kept
        assert accepted == [0, 1]

    _run(handler, test)


def test_a_refused_connection_is_a_connect_error() -> None:
    async def go() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()  # nothing listens there any more
        async with _client(_lane()) as client:
            with pytest.raises(httpx.ConnectError):
                await client.get(f"http://127.0.0.1:{port}/")
            with pytest.raises(httpx.UnsupportedProtocol):
                await client.get("ftp://127.0.0.1/")

    asyncio.run(go())
