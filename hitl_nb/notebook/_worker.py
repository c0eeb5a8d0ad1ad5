"""The notebook's one background thread, and what stops the work on it.

Every conversation started from a URL follows its task on one shared private event loop
(:class:`hitl_nb._sync.LoopThread`, thread ``hitl-nb-notebook``), never the kernel's
loop and never a thread per conversation. A conversation given a
:class:`~hitl_nb.client.SyncHitlClient` uses that client's loop instead.

Background work stops when its conversation is closed, garbage-collected (forgotten),
when the cell that started it runs again, or when a cell is interrupted (the kernel's
stop button, KeyboardInterrupt). An interrupt that arrives while the kernel is idle
never reaches Python (ipykernel ignores SIGINT between cells), so it stops nothing.
"""

from __future__ import annotations

import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from hitl_nb._sync import LoopThread

__all__ = ["Stoppable", "current_cell_id", "shared_loop", "track"]

_lock = threading.Lock()
_loop: LoopThread | None = None
#: The shared loop's threads for blocking calls (finding the kernel's gateway, its
#: synchronous client), made when first needed: a bounded number, however many cards.
BLOCKING_WORKERS = 4
BLOCKING_PREFIX = "hitl-nb-blocking"
_hooked = False


class Stoppable(Protocol):
    """What the worker can stop: a conversation."""

    def stop_following(self, reason: str) -> None:
        """Stop the background work, saying why on the card."""


#: Live conversations, and the cell each was created in.
_live: weakref.WeakSet[Any] = weakref.WeakSet()
_by_cell: dict[str, weakref.WeakSet[Any]] = {}


def shared_loop() -> LoopThread:
    """The process-wide loop thread for notebook background work (started on first use)."""
    global _loop
    with _lock:
        if _loop is None or _loop.closed:
            _loop = LoopThread(name="hitl-nb-notebook")
            _loop.loop.set_default_executor(
                ThreadPoolExecutor(BLOCKING_WORKERS, thread_name_prefix=BLOCKING_PREFIX)
            )
        return _loop


def _ipython() -> Any:
    try:
        from IPython.core.getipython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return None
    return get_ipython()


def current_cell_id() -> str | None:
    """The id of the notebook cell running now (JupyterLab and Notebook 7 send it)."""
    shell = _ipython()
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return None
    try:
        parent = kernel.get_parent()
    except Exception:  # an older kernel without get_parent(), or no request yet
        return None
    meta = parent.get("metadata") if isinstance(parent, dict) else None
    cell = meta.get("cellId") if isinstance(meta, dict) else None
    return cell if isinstance(cell, str) else None


def _pre_run_cell(info: Any) -> None:
    cell = getattr(info, "cell_id", None) or current_cell_id()
    if cell is None:
        return
    earlier = _by_cell.pop(cell, None)
    for item in list(earlier or ()):
        item.stop_following("the cell that started it ran again")


def _post_run_cell(result: Any) -> None:
    if isinstance(getattr(result, "error_in_exec", None), KeyboardInterrupt):
        for item in list(_live):
            item.stop_following("the kernel was interrupted")


def _hook() -> None:
    global _hooked
    if _hooked:
        return
    shell = _ipython()
    events = getattr(shell, "events", None)
    if events is None:
        return
    events.register("pre_run_cell", _pre_run_cell)
    events.register("post_run_cell", _post_run_cell)
    _hooked = True


def track(item: Stoppable) -> None:
    """Stop ``item``'s background work when its cell runs again or a cell is interrupted."""
    with _lock:
        _hook()
        _live.add(item)
        cell = current_cell_id()
        if cell is not None:
            _by_cell.setdefault(cell, weakref.WeakSet()).add(item)
