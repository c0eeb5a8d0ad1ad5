"""Fixtures shared by test directories."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.helpers.lab import Chromium


@pytest.fixture(scope="session")
def named_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """JupyterLab as under JupyterHub, with the hitl-nb extension: people have names
    (alice, bob, carol of :mod:`tests.helpers.jupyter_users`) and the server is alice's
    (her API token in its environment, so in its kernels'). Yields its base URL (ending
    in ``/``) and its root directory (``.runtime`` holds the kernels' connection files).
    One per session: the gateway's card tests and its browser tests share it."""
    from tests.helpers import lab

    root = tmp_path_factory.mktemp("named-lab")
    owner = {"JUPYTERHUB_API_TOKEN": "alice-token", "JUPYTERHUB_USER": "alice"}
    provider = "--ServerApp.identity_provider_class=tests.helpers.jupyter_users.NamedTokens"
    with lab.jupyter_server(
        root, "jupyterlab", provider, env=owner, ready_token="alice-token"
    ) as base:
        yield base + "/", root


@pytest.fixture(scope="session")
def chromium() -> Chromium:
    """Every browser test's Chromium: ``with chromium(width, height) as context`` opens a
    Playwright browser context on the system Chromium (:class:`tests.helpers.lab.Chromium`;
    the executable and its flags are in that module). Without Chromium the test is
    skipped, except under ``CI=true``, where that is a failure. Tests that use it are
    marked ``browser`` (tests/test_tooling.py checks)."""
    from tests.helpers import lab

    if lab.CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must install Chromium (apt-get install chromium)", pytrace=False)
        pytest.skip("no system Chromium (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api")
    return lab.Chromium()
