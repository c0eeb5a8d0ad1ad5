"""Waiting in tests for something to come true: readiness waits, never timings (a slow
machine only makes a passing test take longer).

Every wait in the suite goes through :func:`until` or :func:`until_async`: a wait that
gives up fails as an assertion naming what it waited for and what it saw last, never
as whatever the code after a hand-written loop happens to do with a missing value.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

#: The value before the first try returns (said in the message when none did).
_NOTHING = object()


def until(
    check: Callable[[], Any],
    timeout: float = 60.0,
    what: str = "",
    *,
    interval: float = 0.02,
    ignore: type[BaseException] | tuple[type[BaseException], ...] = (),
    detail: Callable[[], str] | None = None,
) -> Any:
    """Call ``check`` until it returns something truthy, and return that.

    ``check`` is called every ``interval`` seconds for up to ``timeout`` seconds. An
    exception of a type in ``ignore`` counts as a falsy try (a server not listening
    yet); any other goes up at once (a check raises to say that waiting is pointless,
    e.g. the process it waits for has exited). Giving up fails with an
    ``AssertionError`` naming ``what``, the last value (or ignored exception) seen, and
    ``detail()`` when given (a log's tail, read only then).
    """
    deadline = time.monotonic() + timeout
    last: Any = _NOTHING
    while True:
        try:
            value = check()
        except ignore as exc:
            value = last = exc
        else:
            last = value
            if value:
                return value
        if time.monotonic() >= deadline:
            raise AssertionError(_gave_up(what or check, timeout, last, detail))
        time.sleep(interval)


async def until_async(
    check: Callable[[], Awaitable[Any]],
    timeout: float = 60.0,
    what: str = "",
    *,
    interval: float = 0.05,
    ignore: type[BaseException] | tuple[type[BaseException], ...] = (),
    detail: Callable[[], str] | None = None,
) -> Any:
    """Await ``check()`` until it gives something truthy, and return that (the same
    arguments as :func:`until`)."""
    deadline = time.monotonic() + timeout
    last: Any = _NOTHING
    while True:
        try:
            value = await check()
        except ignore as exc:
            value = last = exc
        else:
            last = value
            if value:
                return value
        if time.monotonic() >= deadline:
            raise AssertionError(_gave_up(what or check, timeout, last, detail))
        await asyncio.sleep(interval)


def _gave_up(what: object, timeout: float, last: Any, detail: Callable[[], str] | None) -> str:
    seen = "nothing" if last is _NOTHING else _short(repr(last))
    message = f"gave up waiting for {what} after {timeout:g} s (last seen: {seen})"
    if detail is not None:
        message += "\n" + detail()
    return message


def _short(text: str, limit: int = 500) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"
