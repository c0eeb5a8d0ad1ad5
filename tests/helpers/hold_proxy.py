"""A TCP proxy in front of an agent that can hold one answer to the agent in the air.

For the tests of a gateway killed in the middle of a forward. Arm it with
:meth:`HoldProxy.hold_next`: the next request whose bytes carry ``marker`` (an answer
message carries ``hitl_response_for``) is either passed on to the agent with the
agent's reply swallowed (``deliver=True``: the answer landed, its sender never hears),
or not passed on at all (``deliver=False``: it never landed). Either way the sender
waits on a connection that never answers, until it dies. One request per arming; every
other byte goes through as it is (event streams too). The agent's card names the proxy
(the Host header is the proxy's), so every request of the gateway comes this way.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress


class HoldProxy:
    """Forward 127.0.0.1:<free port> to ``upstream``; see the module docstring."""

    def __init__(self, upstream: tuple[str, int], marker: bytes = b"hitl_response_for") -> None:
        self.upstream = upstream
        self.marker = marker
        self._armed: bool | None = None  # None: not armed; else deliver or not
        self.held = threading.Event()
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

    def hold_next(self, *, deliver: bool) -> None:
        """Hold the next request carrying the marker (see the module docstring)."""
        with self._lock:
            self._armed = deliver
            self.held.clear()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            try:
                upstream = socket.create_connection(self.upstream)
            except OSError:
                _close(client)
                continue
            swallow = threading.Event()
            with self._lock:
                self._sockets += [client, upstream]
            threading.Thread(target=self._up, args=(client, upstream, swallow), daemon=True).start()
            threading.Thread(
                target=self._down, args=(upstream, client, swallow), daemon=True
            ).start()

    def _up(self, client: socket.socket, upstream: socket.socket, swallow: threading.Event) -> None:
        try:
            while data := client.recv(65536):
                if swallow.is_set():
                    continue  # a held connection: nothing more goes through
                with self._lock:
                    deliver = self._armed if self.marker in data else None
                    if deliver is not None:
                        self._armed = None
                if deliver is not None:
                    swallow.set()
                    if deliver:
                        upstream.sendall(data)
                    self.held.set()
                    continue
                upstream.sendall(data)
        except OSError:
            pass
        _close(upstream)

    def _down(
        self, upstream: socket.socket, client: socket.socket, swallow: threading.Event
    ) -> None:
        try:
            while data := upstream.recv(65536):
                if not swallow.is_set():
                    client.sendall(data)
        except OSError:
            pass
        if not swallow.is_set():
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
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with suppress(OSError):
        sock.close()


@contextmanager
def hold_proxy(upstream_url: str) -> Iterator[HoldProxy]:
    """A :class:`HoldProxy` in front of ``http://host:port``, closed afterwards."""
    host, port = upstream_url.removeprefix("http://").rstrip("/").rsplit(":", 1)
    proxy = HoldProxy((host, int(port)))
    try:
        yield proxy
    finally:
        proxy.close()
