"""A scripted A2A agent on a TinyServer: the card is served, RPC methods are test code."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tests.helpers import wire
from tests.helpers.tiny_server import Conn, Request, TinyServer, serve

Method = Callable[[Request, Conn], None]


@contextmanager
def rpc_agent(
    methods: dict[str, Method],
    *,
    card: Callable[[str], dict[str, Any]] | None = None,
    rest: dict[tuple[str, str], Method] | None = None,
) -> Iterator[TinyServer]:
    """Serve a card at the well-known path and dispatch JSON-RPC ``POST /rpc`` by method
    (and REST calls by ``(method, path)``). ``server.calls`` lists the methods called."""
    holder: dict[str, TinyServer] = {}
    calls: list[str] = []

    def handle(request: Request, conn: Conn) -> None:
        server = holder["server"]
        if request.path == "/.well-known/agent-card.json":
            make = card or (lambda base: wire.card(base + "/rpc"))
            conn.answer(make(server.url))
            return
        if request.path == "/rpc":
            method = request.json()["method"]
            calls.append(method)
            if method in methods:
                methods[method](request, conn)
            else:
                conn.answer(wire.rpc_error(-32601, "Method not found", req_id=request.json()["id"]))
            return
        key = (request.method, request.path.split("?")[0])
        calls.append(f"{key[0]} {key[1]}")
        if rest and key in rest:
            rest[key](request, conn)
        else:
            conn.answer({"error": {"code": 404, "message": "no route"}}, 404)

    with serve(handle) as server:
        holder["server"] = server
        server.calls = calls  # type: ignore[attr-defined]
        yield server
