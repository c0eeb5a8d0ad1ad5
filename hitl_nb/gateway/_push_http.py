"""``POST {push base}push/<registration id>``: where agents deliver push notifications.

A plain tornado handler, deliberately neither a Jupyter nor a hub one: the caller is an
agent, which has no Jupyter or hub token or cookie. It is authenticated by the
per-registration secret instead (:meth:`hitl_nb.gateway._push.PushDesk.check`); there is
no XSRF check because
no cookie is trusted here. The body is read in pieces and dropped past the size cap,
so an oversize notification costs no more memory than the cap. Answers are short JSON
objects; refusals say what was wrong (4xx) and change nothing.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import tornado.web

from hitl_nb.errors import reason_phrase
from hitl_nb.gateway._push import PUSH_PATH, PushDesk, Refused, push_reply
from hitl_nb.gateway._store import StoreUnavailable

__all__ = ["PushHandler", "push_handlers"]

log = logging.getLogger("hitl_nb.gateway")


@tornado.web.stream_request_body
class PushHandler(tornado.web.RequestHandler):
    """Receives one notification per POST."""

    def initialize(self, desk: PushDesk) -> None:
        """Tornado hook: receive the push desk."""
        self.desk = desk
        self._chunks: list[bytes] = []
        self._size = 0

    def check_xsrf_cookie(self) -> None:
        """No XSRF check: nothing here trusts a cookie (the token authenticates)."""

    def prepare(self) -> None:
        """Refuse a declared oversize body before reading it."""
        declared = self.request.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > self.desk.max_bytes:
            self._answer(
                413, f"the notification is {declared} bytes; the limit is {self.desk.max_bytes}"
            )

    def data_received(self, chunk: bytes) -> None:
        """Keep the body up to one byte past the cap (the rest is dropped)."""
        room = self.desk.max_bytes + 1 - self._size
        if room > 0:
            self._chunks.append(chunk[:room])
        self._size += len(chunk)

    async def post(self, reg_id: str) -> None:
        """One notification: 200 when recorded, else a 4xx saying why."""
        if self._size > self.desk.max_bytes:
            self._answer(413, f"the notification is over the limit of {self.desk.max_bytes} bytes")
            return
        try:
            got = await self.desk.receive(reg_id, self.request.headers, b"".join(self._chunks))
        except Refused as exc:
            log.warning("hitl-nb gateway: push for %s refused: %s", reg_id[:64], exc.message)
            self._answer(exc.status, exc.message)
            return
        except StoreUnavailable as exc:
            # The agent retries a notification it could not deliver (A2A §4.3.3).
            self._answer(503, f"not recorded: {exc.where} cannot be reached; send it again")
            return
        self._answer(200, f"recorded ({got.kind})")

    def _refuse_method(self, *args: Any) -> None:
        self.set_header("Allow", "POST")
        self._answer(405, "only POST: this address receives A2A push notifications")

    get = put = delete = patch = _refuse_method

    def _answer(self, status: int, message: str) -> None:
        if self._finished:
            return
        self.set_status(status, reason_phrase(status))
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(push_reply(status, message)))


def push_handlers(base: str, desk: PushDesk) -> list[tuple[str, type, dict[str, Any]]]:
    """The receiver's route under ``{base}push/`` (``base``: the host's mount path,
    ``{base_url}hitl/`` or the service prefix)."""
    root = base.rstrip("/") + "/" + PUSH_PATH
    return [(rf"{root}/([^/]{{1,256}})/?", PushHandler, {"desk": desk})]
