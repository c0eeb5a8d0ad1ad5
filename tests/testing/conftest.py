"""Fixtures for the tests of hitl_nb.testing."""

from __future__ import annotations

import pytest


@pytest.fixture
def plain_nbval(monkeypatch: pytest.MonkeyPatch) -> type:
    """nbval as installed, for this test: this suite's own conftest has put its kernels
    on Unix sockets already (hitl_nb/testing/_nbval_kernels.py). The kernel manager nbval
    has then."""
    nbval_kernel = pytest.importorskip("nbval.kernel")
    swapped = nbval_kernel.KernelManager
    plain = getattr(swapped, "hitl_replaces", swapped)
    monkeypatch.setattr(nbval_kernel, "KernelManager", plain)
    return plain  # type: ignore[no-any-return]
