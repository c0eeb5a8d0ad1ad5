"""Run coroutines from synchronous code, safely inside a running Jupyter kernel.

A notebook cell already runs inside the kernel's event loop, so ``asyncio.run`` refuses
to start, and the usual workaround, ``nest_asyncio.apply()`` then ``asyncio.run()``,
silently drops the cells queued behind it on ipykernel >= 7.1 ("Run All" loses cells).
This module never patches the kernel's loop: :class:`LoopThread` owns a private event
loop on a daemon thread and the calling thread blocks on a
``concurrent.futures.Future``. The kernel's own loop is untouched, which is what keeps
queued cells alive (``tests/test_sync_kernel.py`` proves it with a real kernel).

One :class:`LoopThread` per sync facade: objects bound to a loop (an
``httpx.AsyncClient``, its connection pool) keep working across calls because every
call runs on the same private loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncIterator, Awaitable, Coroutine, Iterator
from typing import Any, TypeVar

from hitl_nb._stopping import stop_tasks

__all__ = ["LoopThread", "SyncIterator", "run_sync", "wait_event"]

T = TypeVar("T")


class LoopThread:
    """A private asyncio loop on a daemon thread; :meth:`run` blocks until a result.

    Usable as a context manager; :meth:`close` stops the loop and joins the thread.
    Calling :meth:`run` from the loop's own thread raises ``RuntimeError`` (it would
    deadlock).
    """

    def __init__(self, name: str = "hitl-nb-loop") -> None:
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._closed = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()
        self._ready.wait()

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(self._ready.set)
        try:
            self._loop.run_forever()
        finally:
            try:
                self._stop_tasks()
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
                # An async generator collected meanwhile is closed by a task the loop
                # made for it (its finalizer hook): run those too, or closing the loop
                # destroys them pending ("Task was destroyed but it is pending!").
                self._stop_tasks(grace=1.0)
            finally:
                self._loop.close()

    def _stop_tasks(self, grace: float = 0.0) -> None:
        """Stop the loop's tasks, after ``grace`` seconds to end by themselves."""
        pending = asyncio.all_tasks(self._loop)
        if pending and grace > 0:
            self._loop.run_until_complete(asyncio.wait(pending, timeout=grace))
            pending = {t for t in pending if not t.done()}
        if pending:
            # Bounded, and again for a task whose cancellation was lost.
            self._loop.run_until_complete(stop_tasks(pending, what="a LoopThread's task"))

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The private loop (for scheduling; do not run it yourself)."""
        return self._loop

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has been called."""
        return self._closed

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the private loop and return its future without waiting."""
        with self._lock:
            if self._closed:
                coro.close()
                raise RuntimeError("this LoopThread is closed")
            return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the private loop and block until it finishes.

        ``timeout`` (seconds) bounds the wait: on expiry the coroutine is cancelled and
        ``TimeoutError`` is raised. An interrupt (KeyboardInterrupt, the kernel's
        "interrupt" button) cancels the coroutine too.
        """
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("LoopThread.run() called from its own loop: use await instead")
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            if future.done():  # the coroutine itself raised TimeoutError
                raise
            future.cancel()
            raise TimeoutError(f"gave up after {timeout} s") from None
        except BaseException:
            future.cancel()
            raise

    def close(self, timeout: float = 5.0) -> None:
        """Cancel what still runs, stop the loop and join the thread (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def __enter__(self) -> LoopThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SyncIterator(Iterator[T]):
    """A blocking iterator over an async iterator that lives on a :class:`LoopThread`.

    ``close()`` (also on ``with`` exit and garbage collection) closes the async iterator
    on its loop, which closes the stream behind it.
    """

    def __init__(
        self, runner: LoopThread, aiter: AsyncIterator[T], timeout: float | None = None
    ) -> None:
        self._runner = runner
        self._aiter = aiter
        self._timeout = timeout
        self._done = False

    def __iter__(self) -> SyncIterator[T]:
        return self

    def __next__(self) -> T:
        if self._done:
            raise StopIteration
        try:
            return self._runner.run(_anext(self._aiter), self._timeout)
        except StopAsyncIteration:
            self._done = True
            raise StopIteration from None
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Close the underlying async iterator (and its connection)."""
        if self._done:
            return
        self._done = True
        aclose = getattr(self._aiter, "aclose", None)
        if aclose is not None and not self._runner.closed:
            self._runner.run(_await(aclose()), 10.0)

    def __enter__(self) -> SyncIterator[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # best effort at garbage collection
            pass


async def _anext(aiter: AsyncIterator[T]) -> T:
    return await aiter.__anext__()


async def _await(awaitable: Awaitable[T]) -> T:
    return await awaitable


def run_sync(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run one coroutine to completion from synchronous code and return its result.

    Without a running loop in this thread it uses ``asyncio.run``; inside one (a
    notebook cell) it runs the coroutine on a short-lived private loop thread instead
    of nesting loops. For repeated calls that share a client, keep a :class:`LoopThread`.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        if timeout is None:
            return asyncio.run(coro)
        try:
            return asyncio.run(asyncio.wait_for(coro, timeout))
        except asyncio.TimeoutError:
            raise TimeoutError(f"gave up after {timeout} s") from None
    with LoopThread(name="hitl-nb-run-sync") as runner:
        return runner.run(coro, timeout)


async def wait_event(event: asyncio.Event, seconds: float) -> bool:
    """Wait up to ``seconds`` for ``event``; True when it was set.

    Not ``asyncio.wait_for(event.wait(), seconds)``: before Python 3.12 that returns
    normally when a cancellation comes just after the event is set (CPython gh-86296), so a
    loop that pauses that way and is cancelled to stop never stops (its ``close()`` then
    waits forever). ``asyncio.wait`` lets the cancellation through.
    """
    waiting = asyncio.ensure_future(event.wait())
    try:
        done, _ = await asyncio.wait({waiting}, timeout=max(seconds, 0.0))
    finally:
        waiting.cancel()
    return bool(done)
