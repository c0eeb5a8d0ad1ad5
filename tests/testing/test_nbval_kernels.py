"""nbval's kernels on Unix sockets (hitl_nb/testing/_nbval_kernels.py)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from hitl_nb.testing._nbval_kernels import kernels_on_unix_sockets

nbval_kernel = pytest.importorskip("nbval.kernel")
pytestmark = pytest.mark.skipif(os.name != "posix", reason="Unix sockets")


class _Config:
    """What the function needs of a pytest config: somewhere to leave its cleanup."""

    def __init__(self) -> None:
        self.cleanups: list[Callable[[], None]] = []

    def add_cleanup(self, cleanup: Callable[[], None]) -> None:
        self.cleanups.append(cleanup)

    def clean(self) -> None:
        for cleanup in reversed(self.cleanups):
            cleanup()


def test_the_kernels_listen_on_unix_sockets_until_the_run_ends(plain_nbval: type) -> None:
    config = _Config()
    assert kernels_on_unix_sockets(config)  # type: ignore[arg-type]
    manager = nbval_kernel.KernelManager()
    assert manager.transport == "ipc"
    folder = Path(manager.ip).parent
    assert folder.is_dir() and len(manager.ip) < 90  # room for "-<port>" under 104 bytes
    assert nbval_kernel.KernelManager().ip != manager.ip  # each kernel its own sockets
    assert kernels_on_unix_sockets(config)  # type: ignore[arg-type]  # done already
    assert len(config.cleanups) == 1
    config.clean()
    assert nbval_kernel.KernelManager is plain_nbval
    assert not folder.exists()


def test_an_nbval_that_starts_kernels_otherwise_is_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Other:
        pass

    monkeypatch.setattr(nbval_kernel, "KernelManager", Other)
    config = _Config()
    assert not kernels_on_unix_sockets(config)  # type: ignore[arg-type]
    assert nbval_kernel.KernelManager is Other and config.cleanups == []
