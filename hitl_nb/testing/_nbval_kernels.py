"""nbval's kernels on Unix sockets, so a server started beside them cannot take their ports.

nbval starts each notebook's kernel on five TCP ports that jupyter_client chooses by
binding port 0 and closing the socket; the kernel binds them a second or more later. A
server that a test (or a parallel worker's test) starts on port 0 in between can take one
of them, and the kernel dies: "Kernel died before replying to kernel_info". nbval has no
setting for the transport, so its kernel manager is swapped for one whose kernels listen
on Unix sockets (jupyter_client's ``ipc`` transport) in a folder of this process's own,
where nothing else can take their place. ``pytest --hitl-nbval`` does this on POSIX
systems; hitl-nb's own suite does it for every nbval run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid

import pytest

__all__ = ["kernels_on_unix_sockets"]


def kernels_on_unix_sockets(config: pytest.Config) -> bool:
    """Make the kernels nbval starts for this pytest run listen on Unix sockets, until
    ``config`` is cleaned up. False, and nothing changed, where that cannot be done: not
    a POSIX system, nbval not installed, or an nbval that no longer starts its kernels
    with jupyter_client's ``KernelManager``. True when done (or done already)."""
    if os.name != "posix":
        return False
    try:
        import nbval.kernel  # type: ignore[import-untyped]
        from jupyter_client.manager import KernelManager
        from traitlets import default
    except ImportError:
        return False
    current = getattr(nbval.kernel, "KernelManager", None)
    if hasattr(current, "hitl_replaces"):
        return True
    if current is not KernelManager:
        return False
    # Short: a Unix socket's path has at most 104 bytes (macOS) or 107 (Linux).
    folder = tempfile.mkdtemp(prefix="hitl-nb-kernels-")

    class UnixSocketKernelManager(KernelManager):
        #: The manager nbval had, put back when the run ends.
        hitl_replaces = KernelManager

        @default("transport")
        def _default_transport(self) -> str:
            return "ipc"

        @default("ip")
        def _default_ip(self) -> str:  # the sockets' path, "-<port>" appended to it
            return os.path.join(folder, uuid.uuid4().hex[:12])

    nbval.kernel.KernelManager = UnixSocketKernelManager

    def undo() -> None:
        nbval.kernel.KernelManager = KernelManager
        shutil.rmtree(folder, ignore_errors=True)

    config.add_cleanup(undo)
    return True
