"""``POST {prefix}slack/interactions``: where a Slack app's clicks arrive.

A plain tornado handler, neither a Jupyter nor a hub one: Slack calls it, with no
token or cookie of the host's; it is authenticated by Slack's request signature
instead (:class:`~hitl_nb.gateway._slack_desk.SlackDesk`), and no XSRF check applies
because no cookie is trusted. The body is read in pieces and dropped past the cap
(1 MB: 413). The answer comes at once: 200 (empty) when taken, or a 4xx with a short
JSON body saying what was wrong; the answer to the prompt is given after it.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import tornado.web

from hitl_nb.errors import reason_phrase
from hitl_nb.gateway._gateway import Gateway
from hitl_nb.gateway._slack_clicks import SlackClerk
from hitl_nb.gateway._slack_desk import SlackDesk
from hitl_nb.gateway._store import StoreUnavailable

__all__ = ["SLACK_PATH", "SlackInteractions", "slack_handlers"]

log = logging.getLogger("hitl_nb.gateway")

#: The route under the host's mount (``{base_url}hitl/``, the service's prefix).
SLACK_PATH = "slack/interactions"


@tornado.web.stream_request_body
class SlackInteractions(tornado.web.RequestHandler):
    """Receives one interaction per POST."""

    def initialize(self, desk: SlackDesk) -> None:
        """Tornado hook: receive the desk."""
        self.desk = desk
        self._chunks: list[bytes] = []
        self._size = 0

    def check_xsrf_cookie(self) -> None:
        """No XSRF check: nothing here trusts a cookie (Slack's signature authenticates)."""

    def prepare(self) -> None:
        """Refuse a declared oversize body before reading it."""
        declared = self.request.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > self.desk.max_bytes:
            self._answer(413, {"error": f"the request is over {self.desk.max_bytes} bytes"})

    def data_received(self, chunk: bytes) -> None:
        """Keep the body up to one byte past the cap (the rest is dropped)."""
        room = self.desk.max_bytes + 1 - self._size
        if room > 0:
            self._chunks.append(chunk[:room])
        self._size += len(chunk)

    async def post(self) -> None:
        """One interaction (see :meth:`SlackDesk.receive`)."""
        if self._size > self.desk.max_bytes:
            self._answer(413, {"error": f"the request is over {self.desk.max_bytes} bytes"})
            return
        try:
            status, body = await self.desk.receive(self.request.headers, b"".join(self._chunks))
        except StoreUnavailable as exc:
            self._answer(503, {"error": f"not taken: {exc.where} cannot be reached"})
            return
        self._answer(status, body)

    def _refuse_method(self, *args: Any) -> None:
        self.set_header("Allow", "POST")
        self._answer(405, {"error": "only POST: this address takes a Slack app's interactions"})

    get = put = delete = patch = _refuse_method

    def _answer(self, status: int, body: dict[str, Any] | None) -> None:
        if self._finished:
            return
        self.set_status(status, reason_phrase(status))
        if body is None:
            self.finish()
            return
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))


def slack_handlers(base: str, gateway: Gateway) -> list[tuple[str, type, dict[str, Any]]]:
    """The interaction route under ``base`` when the gateway's notifier has a Slack
    app (none otherwise); its clerk answers the clicks this host takes, and those a
    stopped replica left (from the gateway's replica rounds)."""
    slack = gateway.notify.slack if gateway.notify is not None else None
    if slack is None:
        return []
    clerk = SlackClerk(gateway, slack.api, slack.people, slack.board)
    desk = SlackDesk(gateway, slack.secret, clerk)
    return [(base.rstrip("/") + "/" + SLACK_PATH, SlackInteractions, {"desk": desk})]
