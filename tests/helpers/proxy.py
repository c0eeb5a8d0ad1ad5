"""A TCP proxy that can cut an event stream after N events (close the socket mid-stream).

Put it between a client and a real agent: the agent's card names the proxy (the Host
header is the proxy's), so reconnects go through it too. ``cut_after_events = N`` arms
a one-shot cut of the next ``text/event-stream`` answer after N complete events.
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


class CutProxy:
    """Forward 127.0.0.1:port (port 0) to ``upstream``; ``requests`` holds request heads."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.cut_after_events: int | None = None
        self.cuts = 0
        self.requests: list[bytes] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self._stop = threading.Event()
        self._sockets: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """Base URL of the proxy."""
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            upstream = socket.create_connection(self.upstream)
            with self._lock:
                self._sockets += [client, upstream]
            threading.Thread(target=self._up, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._down, args=(upstream, client), daemon=True).start()

    def _up(self, client: socket.socket, upstream: socket.socket) -> None:
        try:
            while data := client.recv(65536):
                with self._lock:
                    self.requests.append(data)
                upstream.sendall(data)
        except OSError:
            pass
        _close(upstream)

    def _down(self, upstream: socket.socket, client: socket.socket) -> None:
        head = b""
        streaming = False
        limit: int | None = None
        events = 0
        try:
            while data := upstream.recv(65536):
                if not streaming and b"\r\n\r\n" not in head:
                    head += data
                    if b"\r\n\r\n" in head and b"text/event-stream" in head.lower():
                        streaming = True
                        with self._lock:
                            limit, self.cut_after_events = self.cut_after_events, None
                        body = head.split(b"\r\n\r\n", 1)[1]
                        client.sendall(head[: len(head) - len(body)])
                        data = body
                    else:
                        client.sendall(data)
                        continue
                if streaming and limit is not None:
                    for match in _EVENT_END.finditer(data):
                        events += 1
                        if events >= limit:
                            client.sendall(data[: match.end()] + data[match.end() :][:7])
                            with self._lock:
                                self.cuts += 1
                            _close(client)
                            _close(upstream)
                            return
                client.sendall(data)
        except OSError:
            pass
        _close(client)

    def close(self) -> None:
        """Stop accepting and close every connection."""
        self._stop.set()
        self._thread.join(2)
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                _close(sock)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


@contextmanager
def cut_proxy(upstream_url: str) -> Iterator[CutProxy]:
    """A proxy in front of ``http://host:port``, closed afterwards."""
    host, port = upstream_url.removeprefix("http://").rstrip("/").rsplit(":", 1)
    proxy = CutProxy((host.strip("[]"), int(port)))
    try:
        yield proxy
    finally:
        proxy.close()
