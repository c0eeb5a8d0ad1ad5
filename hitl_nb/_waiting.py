"""Waiting for something a person does (a click), blocking or awaiting, the same way.

Forms, cards and conversations all wait through these two functions, so they wait
alike: ``wait(timeout=None)`` blocks, ``await wait_async(timeout=None)`` awaits;
``timeout`` is in seconds (``None``: no limit, ``0``: only what is there already); when
it passes both raise :class:`~hitl_nb.errors.WaitTimedOut` (a ``TimeoutError``).
Waiting never cancels what is awaited: wait again, or look later.

In a notebook cell a click reaches the kernel as a message its main thread handles
between cells, or while a cell *awaits* (ipykernel >= 7.4; earlier 7.x never handle it
then). So in a cell:

- ``await x.wait_async(timeout)`` waits for the click (ipykernel >= 7.4);
- ``x.wait(timeout)`` waits for what comes from the background (an answer already on
  its way, the agent's next prompt), but for something only a click can bring it raises
  :class:`~hitl_nb.errors.ClickNeeded` at once instead of blocking the kernel, which
  would never see the click (the same for ``wait_async`` on an older ipykernel).

Outside a cell (scripts, tests, other threads) both simply wait.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import TypeVar

from .errors import ClickNeeded, WaitTimedOut

__all__ = ["in_kernel_cell", "wait_async", "wait_blocking"]

T = TypeVar("T")

#: The first ipykernel that handles widget messages while a cell awaits.
AWAITING_KERNEL = (7, 4)


def in_kernel_cell() -> bool:
    """True on a kernel's main thread (a cell runs there; clicks wait for it)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    try:
        from IPython.core.getipython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return False
    return getattr(get_ipython(), "kernel", None) is not None


def _kernel_handles_clicks_while_awaiting() -> bool:
    try:
        from importlib.metadata import version

        found = tuple(int(p) for p in version("ipykernel").split(".")[:2])
    except Exception:  # not installed, or an odd version string: do not refuse
        return True
    return found >= AWAITING_KERNEL


def _timed_out(timeout: float | None) -> WaitTimedOut:
    return WaitTimedOut(f"nothing came within {timeout} s (still waiting is fine: wait again)")


def wait_blocking(
    future: Callable[[], concurrent.futures.Future[T]],
    timeout: float | None = None,
    *,
    click: str | None = None,
) -> T:
    """Block until ``future()``'s result is in; :class:`WaitTimedOut` after ``timeout`` s.

    ``future`` is called to get the future to wait on (the owner may replace it, e.g.
    after a form is opened again). ``click``: only a click can resolve the future now;
    the text says what to do instead in a cell, where blocking would never end
    (:class:`ClickNeeded` is raised then, at once).
    """
    waited = future()
    if waited.done():
        return waited.result()
    if click is not None and in_kernel_cell():
        raise ClickNeeded(
            f"a cell that blocks cannot receive the click it waits for (the kernel handles "
            f"it after the cell): {click}"
        )
    try:
        return waited.result(None if timeout is None else max(timeout, 0.0))
    except concurrent.futures.TimeoutError:
        raise _timed_out(timeout) from None


async def wait_async(
    future: Callable[[], concurrent.futures.Future[T]],
    timeout: float | None = None,
    *,
    click: str | None = None,
) -> T:
    """Await ``future()``'s result; :class:`WaitTimedOut` after ``timeout`` s.

    The future itself is shielded: a timeout or a cancelled cell leaves it pending.
    ``click`` as in :func:`wait_blocking`: in a cell of an ipykernel older than 7.4
    (which handles no click while a cell awaits) :class:`ClickNeeded` is raised at once.
    """
    waited = future()
    if waited.done():  # now, even with timeout 0 (wait_for would give up first)
        return waited.result()
    if click is not None and in_kernel_cell() and not _kernel_handles_clicks_while_awaiting():
        raise ClickNeeded(
            f"this ipykernel handles no click while a cell awaits (7.4 and later do): {click}"
        )
    try:
        return await asyncio.wait_for(
            asyncio.shield(asyncio.wrap_future(waited)),
            None if timeout is None else max(timeout, 0.0),
        )
    except asyncio.TimeoutError:  # not the builtin TimeoutError on Python 3.10
        raise _timed_out(timeout) from None
