"""How the gateway's agent requests travel (hitl_nb/gateway/_agents.py): subscriptions on
connections of their own, requests on a few kept ones."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import httpx
import pytest
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets
from tornado.web import Application, RequestHandler

from hitl_nb.gateway._agents import REQUEST_CONNECTIONS, _Lanes


def _peer_port(handler: RequestHandler) -> int:
    return int(handler.request.connection.stream.socket.getpeername()[1])  # type: ignore[union-attr]


def test_subscriptions_keep_their_own_connections_and_requests_reuse_a_few() -> None:
    async def go() -> None:
        request_ports: list[set[int]] = [set(), set()]
        stream_ports: set[int] = set()
        release = asyncio.Event()

        class Answer(RequestHandler):
            async def get(self) -> None:
                request_ports[int(self.get_argument("burst"))].add(_peer_port(self))
                await asyncio.sleep(0.01)  # in flight together
                self.write({"ok": True})

        class Events(RequestHandler):
            async def get(self) -> None:
                stream_ports.add(_peer_port(self))
                self.set_header("Content-Type", "text/event-stream")
                self.write("data: {}\n\n")
                await self.flush()
                await release.wait()

        sockets = bind_sockets(0, "127.0.0.1")
        server = HTTPServer(Application([("/answer", Answer), ("/events", Events)]))
        server.add_sockets(sockets)
        base = f"http://127.0.0.1:{sockets[0].getsockname()[1]}"
        client = httpx.AsyncClient(transport=_Lanes(3, REQUEST_CONNECTIONS), timeout=30)

        async def subscribe(opened: asyncio.Event) -> None:
            headers = {"Accept": "text/event-stream"}
            async with client.stream("GET", base + "/events", headers=headers) as events:
                async for line in events.aiter_lines():
                    if line.startswith("data:"):
                        opened.set()

        opened = [asyncio.Event() for _ in range(3)]
        streams = [asyncio.ensure_future(subscribe(e)) for e in opened]
        try:
            for event in opened:
                await asyncio.wait_for(event.wait(), 30)
            # Every subscription open (as many as the pool has room for): requests still
            # go through, on connections of their own.
            for burst in (0, 1):
                answers: list[Any] = await asyncio.gather(
                    *(client.get(f"{base}/answer?burst={burst}") for _ in range(40))
                )
                assert [a.status_code for a in answers] == [200] * 40
            assert len(stream_ports) == 3
            assert 1 <= len(request_ports[0]) <= REQUEST_CONNECTIONS
            assert not request_ports[0] & stream_ports
            # The second burst found the first one's connections open: none made anew.
            assert request_ports[1] <= request_ports[0]
        finally:
            release.set()
            await asyncio.gather(*streams, return_exceptions=True)
            await client.aclose()
            server.stop()
            await server.close_all_connections()

    asyncio.run(go())


def test_each_agent_keeps_its_connection_and_a_failed_request_gives_its_lane_back() -> None:
    async def go() -> None:
        seen: dict[int, set[int]] = {}

        class Answer(RequestHandler):
            def get(self) -> None:
                seen.setdefault(int(self.get_argument("agent")), set()).add(_peer_port(self))
                self.write({"ok": True})

        servers, bases = [], []
        for _ in range(2):
            sockets = bind_sockets(0, "127.0.0.1")
            server = HTTPServer(Application([("/answer", Answer)]))
            server.add_sockets(sockets)
            servers.append(server)
            bases.append(f"http://127.0.0.1:{sockets[0].getsockname()[1]}")
        refused = socket.socket()
        refused.bind(("127.0.0.1", 0))  # never listening: connections refused
        nowhere = f"http://127.0.0.1:{refused.getsockname()[1]}"
        lanes = _Lanes(1, REQUEST_CONNECTIONS)
        client = httpx.AsyncClient(transport=lanes, timeout=30)
        try:
            for _ in range(REQUEST_CONNECTIONS + 3):
                with pytest.raises(httpx.ConnectError):
                    await client.get(nowhere + "/answer")
            assert lanes._busy == [0] * REQUEST_CONNECTIONS  # each failure gave its lane back
            # One request after another, to one agent then the other: each agent's
            # requests go on one connection, kept (none opened again for the other).
            for i in range(20):
                answer = await client.get(f"{bases[i % 2]}/answer?agent={i % 2}")
                assert answer.status_code == 200
            assert [len(seen[agent]) for agent in (0, 1)] == [1, 1]
        finally:
            refused.close()
            await client.aclose()
            for server in servers:
                server.stop()
                await server.close_all_connections()

    asyncio.run(go())
