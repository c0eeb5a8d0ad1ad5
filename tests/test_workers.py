"""How many pytest-xdist workers ``-n auto`` starts (conftest.py): two a core, unless
PYTEST_XDIST_AUTO_NUM_WORKERS says otherwise, as pytest-xdist documents."""

import os

import pytest


def test_two_workers_a_core_unless_the_environment_says(
    pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = getattr(pytestconfig.hook, "pytest_xdist_auto_num_workers", None)
    if hook is None:
        pytest.skip("pytest-xdist is not loaded (-p no:xdist)")
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    assert hook(config=pytestconfig) == 2 * cores
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    assert hook(config=pytestconfig) == 3
