"""A responder gateway's feed (``GET api/feed``), read over server-sent events.

The gateway sends a follower's list as events (:mod:`hitl_nb.gateway._feed`):
``reset`` (a snapshot follows), ``upsert`` (items), ``remove`` (keys), ``synced``
(everything since the last ``synced`` is whole), ``unavailable`` (its database cannot be
reached) and pings. :func:`read_feed` makes each run of events up to a ``synced`` one
:class:`FeedUpdate`; JupyterLab's prompts panel (the Jupyter server's relay of a hub's
feed) and a kernel's cards (:meth:`~hitl_nb.client.GatewayClient.feed`) read it so.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from hitl_nb._json import parse_json
from hitl_nb.a2a import SSEParser, aiter_events
from hitl_nb.errors import BadJSON, GatewayUnavailable

__all__ = ["MAX_FEED_EVENT", "FeedEvents", "FeedUpdate", "read_feed"]

#: The largest event read from a feed (the gateway's events are about 256 KiB).
MAX_FEED_EVENT = 4 * 1024 * 1024
#: JSON nesting read from a feed: an envelope's response_schema may nest 128 levels.
_DEPTH = 256


@dataclass(frozen=True)
class FeedUpdate:
    """What changed in the list a feed follows (the gateway's ``FeedChange``, read back).

    ``reset``: ``items`` is the whole list, else the items added or changed (each the
    gateway's JSON of one prompt: ``key``, ``registration``, ``prompt_id``, ``state``...);
    ``removed``: keys that left; ``total``: how many in all; ``problem``: the gateway's
    database could not be reached (in words; nothing else is set then).
    """

    reset: bool
    items: list[dict[str, Any]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    total: int = 0
    problem: str | None = None


class FeedEvents:
    """A feed's events up to the next ``synced``, made one :class:`FeedUpdate`."""

    def __init__(self) -> None:
        self.reset = False
        self.items: list[dict[str, Any]] = []
        self.removed: list[str] = []

    def take(self, event: str, data: str) -> FeedUpdate | None:
        """One event; the update it completes, or None. An event whose data is not a
        JSON object raises :class:`~hitl_nb.errors.GatewayUnavailable`."""
        try:
            # The event's characters, each up to 4 bytes.
            body = parse_json(data, max_bytes=4 * MAX_FEED_EVENT, max_depth=_DEPTH)
        except BadJSON:
            body = None
        if not isinstance(body, dict):
            raise GatewayUnavailable("the gateway sent an unreadable feed event")
        if event == "unavailable":
            return FeedUpdate(False, problem=str(body.get("message") or "unavailable"))
        if event == "reset":
            self.reset, self.items, self.removed = True, [], []
        elif event == "upsert":
            items = body.get("items")
            self.items += [i for i in items if _is_item(i)] if isinstance(items, list) else []
        elif event == "remove":
            keys = body.get("keys")
            self.removed += (
                [k for k in keys if isinstance(k, str)] if isinstance(keys, list) else []
            )
        elif event == "synced":
            total = body.get("total")
            update = FeedUpdate(
                self.reset,
                self.items,
                self.removed,
                total if isinstance(total, int) else len(self.items),
            )
            self.reset, self.items, self.removed = False, [], []
            return update
        return None  # an event of a later version: ignored


def _is_item(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("key"), str)
        and isinstance(item.get("registration"), str)
        and isinstance(item.get("prompt_id"), str)
    )


def _message(response: httpx.Response, body: bytes) -> str:
    try:
        data = parse_json(body, max_bytes=MAX_FEED_EVENT)
    except BadJSON:
        data = None
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return f"HTTP {response.status_code}: {data['message']}"
    return f"HTTP {response.status_code}"


async def read_feed(
    http: httpx.AsyncClient,
    url: str,
    *,
    where: str,
    max_event_size: int = MAX_FEED_EVENT,
) -> AsyncIterator[FeedUpdate]:
    """Follow the feed at ``url`` with ``http`` (its credentials and time-outs): a
    snapshot, then each change, until it ends. ``where`` names the gateway in the
    :class:`~hitl_nb.errors.GatewayUnavailable` raised when it refuses, cannot be
    reached or ends the feed."""
    try:
        async with http.stream("GET", url) as response:
            if response.status_code != 200:
                body = await response.aread()
                raise GatewayUnavailable(f"{where} refused: {_message(response, body)}")
            parser = SSEParser(max_event_size=max_event_size)
            pending = FeedEvents()
            async for event in aiter_events(response.aiter_bytes(), parser):
                update = pending.take(event.event, event.data)
                if update is not None:
                    yield update
    except httpx.HTTPError as exc:
        raise GatewayUnavailable(f"{where} could not be reached: {exc}") from exc
    raise GatewayUnavailable(f"{where} ended the feed")
