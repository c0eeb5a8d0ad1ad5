"""Ports for the servers tests start, never the same one twice at once.

Binding port 0 and closing the socket gives a port that is free at that instant, but a
test hands it to a process that binds it seconds later (a hub's proxy, a Jupyter server).
In between, another worker of the run may be handed the same port (pytest-xdist runs
several workers, each starting hubs), or an outgoing connection may take it as its local
port, since port 0 and outgoing connections share the kernel's ephemeral range. A hub
whose proxy port another hub's proxy holds talks to that proxy (and gets 403).

So ports come from below the ephemeral range, where the kernel never puts an outgoing
connection, handed out in turn across every process of the machine through a counter
in a locked file: a port comes round again only after the whole range has been handed
out, and it is checked free when it is handed out.
"""

from __future__ import annotations

import fcntl
import os
import socket
import tempfile
from pathlib import Path

_LOWEST = 20000


def _counter() -> Path:
    """The machine's counter file (``HITL_NB_TEST_PORTS``: another one, for this module's
    own tests, which must not wind back the run's)."""
    default = Path(tempfile.gettempdir()) / "hitl-nb-test-ports"
    return Path(os.environ.get("HITL_NB_TEST_PORTS") or default)


def _ephemeral_start() -> int:
    """The lowest port the kernel gives outgoing connections and port 0 (Linux: its
    ``ip_local_port_range``; elsewhere the IANA range's start)."""
    try:
        low = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0]
        return int(low)
    except (OSError, ValueError, IndexError):
        return 49152


def _is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port() -> int:
    """A port nobody listens on, that no other caller on this machine is handed until
    every other port of the range has been."""
    high = _ephemeral_start()
    if high - _LOWEST < 1000:  # an unusual range: fall back on the kernel's choice
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return int(s.getsockname()[1])
    size = high - _LOWEST
    fd = os.open(_counter(), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        text = os.read(fd, 32).decode("ascii", "replace").strip()
        turn = int(text) if text.isdigit() else 0
        for step in range(size):
            port = _LOWEST + (turn + step) % size
            if _is_free(port):
                os.lseek(fd, 0, os.SEEK_SET)
                os.ftruncate(fd, 0)
                os.write(fd, str((turn + step + 1) % size).encode("ascii"))
                return port
        raise OSError(f"no free port between {_LOWEST} and {high}")
    finally:
        os.close(fd)  # closing the file releases the lock
