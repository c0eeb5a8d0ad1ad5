"""hitl_nb._waiting: blocking and awaiting wait alike; a cell is never blocked for a click."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import pytest

from hitl_nb import _waiting
from hitl_nb._waiting import wait_async, wait_blocking
from hitl_nb.errors import ClickNeeded, HitlError, WaitTimedOut


def _later(future: concurrent.futures.Future[str], value: str, seconds: float = 0.05) -> None:
    threading.Timer(seconds, future.set_result, [value]).start()


def test_both_forms_return_the_result_and_time_out_alike() -> None:
    future: concurrent.futures.Future[str] = concurrent.futures.Future()
    with pytest.raises(WaitTimedOut) as blocked:
        wait_blocking(lambda: future, 0.01)
    with pytest.raises(WaitTimedOut) as awaited:
        asyncio.run(wait_async(lambda: future, 0.01))
    for raised in (blocked.value, awaited.value):
        assert isinstance(raised, TimeoutError) and isinstance(raised, HitlError)
        assert "within 0.01 s" in str(raised)
    assert not future.cancelled()  # giving up waiting cancels nothing
    _later(future, "done")
    assert wait_blocking(lambda: future, 5) == "done"
    assert asyncio.run(wait_async(lambda: future, 5)) == "done"
    # what is there comes back at once, even with no time at all to wait
    assert wait_blocking(lambda: future, 0) == "done"
    assert asyncio.run(wait_async(lambda: future, 0)) == "done"


def test_the_owner_may_replace_the_future() -> None:
    box = [concurrent.futures.Future()]
    box[0].cancel()
    box[0] = concurrent.futures.Future()
    _later(box[0], "second")
    assert wait_blocking(lambda: box[0], 5) == "second"


def test_in_a_cell_a_click_is_never_waited_for_by_blocking(monkeypatch) -> None:
    monkeypatch.setattr(_waiting, "in_kernel_cell", lambda: True)
    future: concurrent.futures.Future[str] = concurrent.futures.Future()
    with pytest.raises(ClickNeeded, match="await card.wait_async"):
        wait_blocking(lambda: future, None, click="await card.wait_async(timeout)")
    # what comes from the background (no click needed) is waited for
    _later(future, "from the agent")
    assert wait_blocking(lambda: future, 5) == "from the agent"
    # and a click already made is simply returned
    assert wait_blocking(lambda: future, None, click="never needed") == "from the agent"


def test_awaiting_a_click_needs_a_kernel_that_handles_it(monkeypatch) -> None:
    monkeypatch.setattr(_waiting, "in_kernel_cell", lambda: True)
    future: concurrent.futures.Future[str] = concurrent.futures.Future()
    monkeypatch.setattr(_waiting, "_kernel_handles_clicks_while_awaiting", lambda: False)
    with pytest.raises(ClickNeeded, match="7.4"):
        asyncio.run(wait_async(lambda: future, None, click="answer from code"))
    monkeypatch.setattr(_waiting, "_kernel_handles_clicks_while_awaiting", lambda: True)
    _later(future, "clicked")
    assert asyncio.run(wait_async(lambda: future, 5, click="answer from code")) == "clicked"


def test_outside_a_kernel_nothing_is_a_cell() -> None:
    assert _waiting.in_kernel_cell() is False
