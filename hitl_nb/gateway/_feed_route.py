"""``GET api/feed``, once for both hosts: the feed (:mod:`._feed`) as server-sent events.

A host authenticates the request (the Jupyter server's login, or the hub's word), makes
the :class:`~hitl_nb.gateway._views.Caller`, and hands its tornado handler to a
:class:`FeedStream`, which serves the rest:

- ``GET api/feed``: the open prompts the caller may answer (JupyterLab's prompts panel);
- ``GET api/feed?registered=mine``: the open prompts of the tasks the caller registered,
  whoever may answer them (a kernel hears at once what became of its cards' prompts,
  even one for someone else). S-3 is unchanged: a registrant sees their task's prompts
  (:func:`~hitl_nb.gateway._views.shown_to`), never anyone's answer.

Both with the same events; 400 for another ``registered``, 503 when the feed has as
many followers as it takes.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import tornado.web
from tornado.iostream import StreamClosedError

from hitl_nb.errors import reason_phrase
from hitl_nb.gateway._feed import PromptFeed, serve_feed
from hitl_nb.gateway._views import Caller

__all__ = ["FeedStream"]

#: The one value ``registered`` takes.
MINE = "mine"


class FeedStream:
    """One ``GET api/feed`` request's feed: :meth:`serve` it from the handler's ``get``,
    :meth:`close` it from the handler's ``on_connection_close``."""

    def __init__(self) -> None:
        self._serving: asyncio.Future[None] | None = None

    @staticmethod
    def _refuse(handler: tornado.web.RequestHandler, status: int, message: str) -> None:
        handler.set_status(status, reason_phrase(status))
        handler.set_header("Content-Type", "application/json")
        handler.finish(json.dumps({"error": status, "message": message}))

    async def serve(
        self, handler: tornado.web.RequestHandler, feed: PromptFeed, caller: Caller
    ) -> None:
        """Serve the feed to ``caller`` until the client goes away."""
        registered: Any = handler.get_query_argument("registered", None)
        if registered not in (None, MINE):
            self._refuse(
                handler,
                400,
                f"registered may only be {MINE!r} (the tasks you registered), "
                f"not {str(registered)[:100]!r}",
            )
            return
        if feed.full:
            self._refuse(handler, 503, "the feed has as many followers as it takes")
            return
        handler.set_header("Content-Type", "text/event-stream; charset=utf-8")
        handler.set_header("Cache-Control", "no-store")
        handler.set_header("X-Accel-Buffering", "no")  # proxies pass each event at once
        changes = feed.follow(caller, registered=registered == MINE)
        self._serving = asyncio.ensure_future(serve_feed(changes, handler.write, handler.flush))
        try:
            await self._serving
        except (asyncio.CancelledError, StreamClosedError):
            pass  # the client went away

    def close(self) -> None:
        """The client went away: stop following."""
        if self._serving is not None:
            self._serving.cancel()
