"""The suite's one way to wait: what it returns, and what it says when it gives up."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from tests.helpers.until import until, until_async


def test_returns_the_first_truthy_value() -> None:
    tries = itertools.count()
    assert until(lambda: next(tries) >= 3 and "ready", timeout=5, interval=0) == "ready"


def test_gives_up_naming_the_wait_the_last_value_and_the_detail() -> None:
    with pytest.raises(AssertionError) as failed:
        until(lambda: [], timeout=0.05, what="the list to fill", detail=lambda: "log tail")
    message = str(failed.value)
    assert message.startswith("gave up waiting for the list to fill after 0.05 s")
    assert "(last seen: [])" in message and message.endswith("\nlog tail")


def test_ignored_errors_count_as_not_yet_and_others_go_up_at_once() -> None:
    tries = itertools.count()

    def flaky() -> str:
        if next(tries) < 2:
            raise ConnectionError("refused")
        return "up"

    assert until(flaky, timeout=5, interval=0, ignore=ConnectionError) == "up"

    def refused() -> None:
        raise ConnectionError("refused")

    with pytest.raises(AssertionError, match=r"last seen: ConnectionError\('refused'\)"):
        until(refused, timeout=0.05, ignore=ConnectionError)
    with pytest.raises(KeyError):
        until(lambda: {}["missing"], timeout=5, ignore=ConnectionError)


def test_the_async_wait_says_the_same() -> None:
    async def never() -> int:
        return 0

    async def soon() -> str:
        await asyncio.sleep(0)
        return "done"

    assert asyncio.run(until_async(soon, timeout=5)) == "done"
    with pytest.raises(AssertionError, match=r"gave up waiting for zero after .* \(last seen: 0\)"):
        asyncio.run(until_async(never, timeout=0.05, what="zero"))
