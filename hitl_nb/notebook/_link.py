"""A client and the loop its coroutines run on, as the notebook uses them.

The client options a notebook call takes (``Conversation.start(url, ..., **options)``,
``Inbox(client_options=...)``) are checked here, before anything connects: an option
the client does not take is refused, naming the call and the options it takes, and
``timeout=`` (seconds, as httpx users write it) is each request's time limit.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import inspect
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

from hitl_nb.client import HitlClient, HttpLimits, SyncHitlClient

from ._worker import shared_loop

__all__ = ["Link", "checked_options"]

T = TypeVar("T")


class Link:
    """An async :class:`~hitl_nb.client.HitlClient` plus a way to run its coroutines.

    From a URL: a client of its own on the notebook's shared loop (closed by
    :meth:`close`). From a :class:`~hitl_nb.client.SyncHitlClient`: that client's async
    client and private loop (left open: it belongs to the caller). ``client_options``
    go to the client; ``call_timeout`` bounds each blocking call, as for
    :class:`~hitl_nb.client.SyncHitlClient`.
    """

    def __init__(
        self, agent: Any, client_options: Mapping[str, Any] | None = None, *, call: str = "Link"
    ) -> None:
        if isinstance(agent, SyncHitlClient):
            if client_options:
                raise TypeError(
                    f"{call}(): client options {sorted(client_options)} only apply when the "
                    "agent is a URL; this SyncHitlClient is already configured"
                )
            self.sync: SyncHitlClient = agent
            self.own = False
        else:
            options = checked_options(call, client_options or {})
            # A client of its own whose calls run on the notebook's one shared thread.
            self.sync = SyncHitlClient.on_shared_loop(shared_loop(), agent, **options)
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


def _option_names() -> list[str]:
    """The options a notebook's own client takes: :class:`~hitl_nb.client.HitlClient`'s,
    its ``call_timeout`` and ``timeout``."""
    own = [
        name
        for name, p in inspect.signature(HitlClient).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    return sorted({*own, "call_timeout", "timeout"})


def checked_options(call: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` as the client takes them, or a ``TypeError`` naming ``call`` and the
    options it takes. ``timeout`` (seconds, as in httpx) becomes each request's limit
    (``HttpLimits.timeout``, the connect limit at most that)."""
    known = _option_names()
    unknown = sorted(set(options) - set(known))
    if unknown:
        names = ", ".join(repr(n) for n in unknown)
        raise TypeError(
            f"{call}() got {'an unexpected option' if len(unknown) == 1 else 'unexpected options'} "
            f"{names}; the client options it takes are: {', '.join(known)}"
        )
    out = dict(options)
    if "timeout" not in out:
        return out
    timeout = out.pop("timeout")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise TypeError(
            f"{call}(): timeout is the seconds each request may take (a positive number), "
            f"not {timeout!r}"
        )
    if "limits" in out:
        raise TypeError(
            f"{call}(): give either timeout= or limits=HttpLimits(timeout=...), not both"
        )
    seconds = float(timeout)
    limits = HttpLimits()
    out["limits"] = dataclasses.replace(
        limits, timeout=seconds, connect_timeout=min(limits.connect_timeout, seconds)
    )
    return out
