"""Tests for hitl_nb._sync: the private loop thread behind the sync facade."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

import pytest

from hitl_nb._sync import LoopThread, SyncIterator, run_sync, wait_event


async def _where() -> tuple[str, int]:
    await asyncio.sleep(0)
    return threading.current_thread().name, id(asyncio.get_running_loop())


def test_run_uses_one_private_loop_for_every_call() -> None:
    with LoopThread(name="t-loop") as runner:
        first = runner.run(_where())
        second = runner.run(_where())
    assert first == second
    assert first[0] == "t-loop"
    assert runner.closed


def test_run_propagates_exceptions() -> None:
    async def boom() -> None:
        raise KeyError("x")

    with LoopThread() as runner, pytest.raises(KeyError):
        runner.run(boom())


def test_timeout_cancels_the_coroutine() -> None:
    cancelled = threading.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with LoopThread() as runner:
        with pytest.raises(TimeoutError, match="gave up after 0.05 s"):
            runner.run(slow(), timeout=0.05)
        assert cancelled.wait(2)


def test_timeout_error_raised_by_the_coroutine_is_not_relabelled() -> None:
    async def raises_timeout() -> None:
        raise TimeoutError("own")

    with LoopThread() as runner, pytest.raises(TimeoutError, match="own"):
        runner.run(raises_timeout(), timeout=5)


def test_run_from_own_loop_is_refused() -> None:
    with LoopThread() as runner:

        async def reenter() -> str:
            coro = _where()
            try:
                runner.run(coro)
            except RuntimeError as exc:
                return str(exc)
            return "no error"

        assert "own loop" in runner.run(reenter())


def test_closed_runner_refuses_work_and_close_is_idempotent() -> None:
    runner = LoopThread()
    runner.close()
    runner.close()
    with pytest.raises(RuntimeError, match="closed"):
        runner.run(_where())


def test_close_cancels_pending_tasks() -> None:
    cancelled = threading.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    runner = LoopThread()
    runner.submit(forever())
    runner.run(asyncio.sleep(0.01))
    runner.close()
    assert cancelled.is_set()


def test_sync_iterator_iterates_and_closes_the_async_generator() -> None:
    closed = threading.Event()

    async def gen() -> AsyncIterator[int]:
        try:
            for i in range(100):
                yield i
        finally:
            closed.set()

    with LoopThread() as runner:
        it = SyncIterator(runner, gen())
        assert [next(it), next(it), next(it)] == [0, 1, 2]
        it.close()
        assert closed.is_set()
        with pytest.raises(StopIteration):
            next(it)
        assert list(SyncIterator(runner, gen())) == list(range(100))


def test_sync_iterator_error_closes_it() -> None:
    async def gen() -> AsyncIterator[int]:
        yield 1
        raise ValueError("bad event")

    with LoopThread() as runner:
        it = SyncIterator(runner, gen())
        assert next(it) == 1
        with pytest.raises(ValueError, match="bad event"):
            next(it)
        with pytest.raises(StopIteration):
            next(it)


def test_run_sync_without_and_with_a_running_loop() -> None:
    assert run_sync(asyncio.sleep(0, result=5)) == 5
    with pytest.raises(TimeoutError):
        run_sync(asyncio.sleep(5), timeout=0.02)

    async def inside_a_loop() -> str:
        # What a notebook cell does: sync code while the kernel's loop runs.
        name, _ = run_sync(_where())
        return name

    assert asyncio.run(inside_a_loop()) == "hitl-nb-run-sync"


async def _stop_just_after_a_wake(yields: int) -> bool:
    """Cancel a loop that pauses on an event, ``yields`` loop turns after the event was
    set; True when the cancellation stopped it."""
    event = asyncio.Event()

    async def pausing() -> None:
        while True:
            await wait_event(event, 60)
            event.clear()

    task = asyncio.create_task(pausing())
    for _ in range(3):
        await asyncio.sleep(0)  # it pauses now
    event.set()
    for _ in range(yields):
        await asyncio.sleep(0)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=5)
    if not done:  # the cancellation was lost: it paused again
        task.cancel()
        await asyncio.wait({task})
    return task in done and task.cancelled()


@pytest.mark.parametrize("yields", range(6))
def test_a_pause_woken_and_cancelled_at_once_still_stops(yields: int) -> None:
    # asyncio.wait_for(event.wait(), t) returns normally when the cancellation comes just
    # after the event is set, before Python 3.12: a gateway's watchers then never
    # stopped and its close() waited forever (a replica test hung in CI).
    assert asyncio.run(_stop_just_after_a_wake(yields))


def test_wait_event_says_whether_the_event_came() -> None:
    async def go() -> tuple[bool, bool]:
        event = asyncio.Event()
        asyncio.get_running_loop().call_later(0.01, event.set)
        return await wait_event(event, 30), await wait_event(asyncio.Event(), 0.01)

    assert asyncio.run(go()) == (True, False)
