"""In-process pytest runs (``pytester.runpytest_inprocess``) without side effects.

pytester removes from ``sys.modules`` every module first imported during an in-process
run. The HTTP stack imports some modules only at the first connection (httpcore's and
anyio's asyncio backends); removed and imported again later, their exception classes are
new objects that ``except httpx.HTTPError`` no longer catches, and tests that run after
the in-process run break. :func:`warm_http_stack` makes one failing connection first,
so those modules are imported before any snapshot is taken.
"""

from __future__ import annotations

import asyncio
import socket

import httpx


def warm_http_stack() -> None:
    """Import the lazily loaded parts of httpx / httpcore / anyio (one refused connect)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    async def attempt() -> None:
        async with httpx.AsyncClient() as client:
            try:
                await client.get(f"http://127.0.0.1:{port}/", timeout=2)
            except httpx.HTTPError:
                pass

    asyncio.run(attempt())
