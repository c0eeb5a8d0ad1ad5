"""Waiting in tests for something to come true: readiness waits, never timings (a slow
machine only makes a passing test take longer)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any


def until(check: Callable[[], Any], timeout: float = 60.0, what: str = "") -> Any:
    """Call ``check`` until it returns something truthy, and return that."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"gave up waiting for {what or check}"
        time.sleep(0.02)


async def until_async(
    check: Callable[[], Awaitable[Any]], timeout: float = 60.0, what: str = ""
) -> Any:
    """Await ``check()`` until it gives something truthy, and return that."""
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        assert time.monotonic() < deadline, f"gave up waiting for {what or check}"
        await asyncio.sleep(0.05)
