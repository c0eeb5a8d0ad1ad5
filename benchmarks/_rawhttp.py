"""Benchmark-only: a tiny HTTP/1.1 keep-alive client on asyncio streams.

httpx costs a few milliseconds of client CPU per request, which on a small machine
shows up in the measured resume latency (t1 is taken when the client's loop gets to the
event). This client does the minimum (Content-Length and chunked bodies, TCP_NODELAY),
so the figures describe the agents rather than the client. Same client for both agents.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit


class RawConnection:
    """One keep-alive connection to ``http://host:port``."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.path = parts.path or "/"
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def _ensure(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._reader is None or self._writer is None or self._writer.is_closing():
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
            sock = self._writer.get_extra_info("socket")
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self._reader, self._writer

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except OSError:
                pass
        self._reader = self._writer = None

    async def _send(self, body: Any, headers: dict[str, str]) -> asyncio.StreamReader:
        reader, writer = await self._ensure()
        data = json.dumps(body, separators=(",", ":")).encode()
        head = [
            f"POST {self.path} HTTP/1.1",
            f"Host: {self.host}:{self.port}",
            "Content-Type: application/json",
            f"Content-Length: {len(data)}",
            *(f"{k}: {v}" for k, v in headers.items()),
        ]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        await writer.drain()
        return reader

    async def _head(self, reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
        raw = await reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        return status, headers

    async def _chunks(
        self, reader: asyncio.StreamReader, headers: dict[str, str]
    ) -> AsyncIterator[bytes]:
        if "content-length" in headers:
            yield await reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await reader.readuntil(b"\r\n")
                    break
                yield await reader.readexactly(size)
                await reader.readexactly(2)
        else:
            while chunk := await reader.read(65536):
                yield chunk
        if headers.get("connection", "").lower() == "close":
            await self.close()

    async def post_json(self, body: Any, headers: dict[str, str]) -> Any:
        """POST JSON, return the decoded JSON response."""
        reader = await self._send(body, headers)
        _, head = await self._head(reader)
        data = b"".join([c async for c in self._chunks(reader, head)])
        return json.loads(data)

    async def post_stream(self, body: Any, headers: dict[str, str]) -> AsyncIterator[bytes]:
        """POST JSON and yield the response body's bytes as they arrive."""
        reader = await self._send(body, headers)
        _, head = await self._head(reader)
        async for chunk in self._chunks(reader, head):
            yield chunk
