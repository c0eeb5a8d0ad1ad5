"""A client and the loop its coroutines run on, as the notebook uses them."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

from hitl_nb.client import HitlClient, SyncHitlClient

from ._worker import shared_loop

__all__ = ["Link"]

T = TypeVar("T")


class Link:
    """An async :class:`~hitl_nb.client.HitlClient` plus a way to run its coroutines.

    From a URL: a client of its own on the notebook's shared loop (closed by
    :meth:`close`). From a :class:`~hitl_nb.client.SyncHitlClient`: that client's async
    client and private loop (left open: it belongs to the caller). ``client_options``
    go to the client; ``call_timeout`` bounds each blocking call, as for
    :class:`~hitl_nb.client.SyncHitlClient`.
    """

    def __init__(self, agent: Any, client_options: dict[str, Any] | None = None) -> None:
        if isinstance(agent, SyncHitlClient):
            if client_options:
                raise TypeError(
                    f"client options {sorted(client_options)} only apply when the agent is a "
                    "URL; this SyncHitlClient is already configured"
                )
            self.sync: SyncHitlClient = agent
            self.own = False
        else:
            # A client of its own whose calls run on the notebook's one shared thread.
            self.sync = SyncHitlClient.on_shared_loop(
                shared_loop(), agent, **dict(client_options or {})
            )
            self.own = True
        self.client: HitlClient = self.sync.client
        self.call_timeout: float | None = self.sync.call_timeout
        self.closed = False

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the client's loop; returns its future at once."""
        return self.sync.submit(coro)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the client's loop and block until it ends (or ``timeout``,
        by default the ``call_timeout`` client option)."""
        timeout = self.call_timeout if timeout is None else timeout
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            if future.done():
                raise
            future.cancel()
            raise TimeoutError(f"gave up after {timeout} s") from None
        except BaseException:
            future.cancel()
            raise

    def close(self) -> None:
        """Close the connections of a client this link made (idempotent)."""
        if self.closed:
            return
        self.closed = True
        if self.own:
            try:
                self.sync.close()
            except (RuntimeError, TimeoutError):  # the loop is already gone
                pass
