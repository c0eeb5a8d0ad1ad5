"""Waiting for something a person does (a click), blocking or awaiting, the same way.

A widget click reaches the kernel as a message its main thread handles between cells,
or while a cell *awaits* (ipykernel >= 7.4). So in a notebook cell, wait with
``await thing.wait_async(timeout)``; ``thing.wait(timeout)`` blocks the calling thread
and suits scripts, tests and other threads (and, in a cell, outcomes that arrive from
the background, like an answer already sent). Both raise :class:`TimeoutError` when the
time runs out; waiting never cancels what is awaited.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from typing import TypeVar

__all__ = ["wait_async", "wait_blocking"]

T = TypeVar("T")


def wait_blocking(
    future: Callable[[], concurrent.futures.Future[T]], timeout: float | None = None
) -> T:
    """Block until ``future()``'s result is in; ``TimeoutError`` after ``timeout`` s.

    ``future`` is called to get the future to wait on (the owner may replace it, e.g.
    after a form is opened again).
    """
    try:
        return future().result(timeout)
    except concurrent.futures.TimeoutError:
        raise TimeoutError(f"nothing came within {timeout} s") from None


async def wait_async(
    future: Callable[[], concurrent.futures.Future[T]], timeout: float | None = None
) -> T:
    """Await ``future()``'s result; ``TimeoutError`` after ``timeout`` s.

    The future itself is shielded: a timeout or a cancelled cell leaves it pending.
    """
    try:
        return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future())), timeout)
    except asyncio.TimeoutError:  # not the builtin TimeoutError on Python 3.10
        raise TimeoutError(f"nothing came within {timeout} s") from None
