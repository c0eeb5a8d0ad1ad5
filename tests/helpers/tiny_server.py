"""A tiny scriptable HTTP/1.1 server for hostile-agent tests.

Each test gives a handler ``(Request, Conn) -> None`` that writes whatever bytes it
wants: a wrong content type, a truncated body, a 50 MB event, a stream cut mid-event,
silence. The server runs in its own thread on 127.0.0.1, port 0; every connection is
closed after one request (``Connection: close``). ``stop()`` also wakes handlers that
are stalling (they wait on ``conn.stopped``).
"""

from __future__ import annotations

import json
import socket
import socketserver
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Request:
    """One parsed request."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The body as JSON (None when empty)."""
        return json.loads(self.body) if self.body else None

    def header(self, name: str) -> str | None:
        """A header value, case-insensitive."""
        return self.headers.get(name.lower())


@dataclass
class Conn:
    """The client connection a handler writes to."""

    sock: socket.socket
    stopped: threading.Event
    sent_headers: bool = field(default=False)

    def send(self, data: bytes) -> bool:
        """Write bytes; False when the client has gone."""
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            return False

    def head(self, status: int = 200, content_type: str = "application/json", **extra: str) -> None:
        """Status line and headers of a close-delimited answer (no Content-Length)."""
        lines = [f"HTTP/1.1 {status} X", f"Content-Type: {content_type}", "Connection: close"]
        lines += [f"{k.replace('_', '-')}: {v}" for k, v in extra.items()]
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode())

    def answer(
        self, body: Any, status: int = 200, content_type: str = "application/json", **extra: str
    ) -> None:
        """A whole answer with Content-Length; ``body`` is bytes or JSON-able."""
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        lines = [
            f"HTTP/1.1 {status} X",
            f"Content-Type: {content_type}",
            f"Content-Length: {len(raw)}",
            "Connection: close",
        ]
        lines += [f"{k.replace('_', '-')}: {v}" for k, v in extra.items()]
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode() + raw)

    def cut(self) -> None:
        """Drop the connection abruptly (RST)."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass


Handler = Callable[[Request, Conn], None]


class _TCPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class TinyServer:
    """Serve ``handler`` on 127.0.0.1 (port 0) in a thread; ``requests`` records calls."""

    def __init__(self, handler: Handler, port: int = 0) -> None:
        self.handler = handler
        self.requests: list[Request] = []
        self.stopped = threading.Event()
        outer = self

        class _Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                request = _read_request(self.request)
                if request is None:
                    return
                outer.requests.append(request)
                conn = Conn(self.request, outer.stopped)
                try:
                    outer.handler(request, conn)
                except Exception as exc:  # a broken test handler: answer 500, say why
                    conn.answer({"error": repr(exc)}, 500)

        self._server = _TCPServer(("127.0.0.1", port), _Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:40123``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> TinyServer:
        """Start serving."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake stalled handlers, close the socket."""
        self.stopped.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


@contextmanager
def serve(handler: Handler) -> Iterator[TinyServer]:
    """``with serve(handler) as server:`` -- started, and stopped afterwards."""
    server = TinyServer(handler).start()
    try:
        yield server
    finally:
        server.stop()


def _read_request(sock: socket.socket) -> Request | None:
    sock.settimeout(10)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            rest += chunk
    except (OSError, ValueError):
        return None
    return Request(method, path, headers, rest[:length])
