"""Webhooks: one POST per message, to a host someone was allowed to name.

What is posted is the target's kind's (:mod:`hitl_nb.notify._registry`): a
Slack-compatible webhook gets ``{"text": ...}`` (:mod:`hitl_nb.notify._slack`), a
signed one the message as a signed JSON document (:mod:`hitl_nb.notify._signed`), a
Teams workflow an Adaptive Card (:mod:`hitl_nb.notify._teams`). How it is posted is
this module's, the same for every kind:

Every request carries ``Idempotency-Key`` (the message's stable key: a receiver that
already has it can drop a retry). The URL is checked again before each request
(:func:`~hitl_nb.notify._targets.check_webhook_url`, against the allow-list of the moment), the
client never follows a redirect (a 3xx is a failure that retrying cannot mend), the
whole exchange is bounded by ``timeout`` seconds however slowly the receiver drips, and
the answer's body is never read. 2xx is delivered; 408, 429 and 5xx, a timeout or no
connection are retried; any other status is permanent. A webhook URL is shown in
messages and logs by its scheme and host only: its path is often its credential (httpx
logs each request's URL at INFO: a filter on its logger shows ours by scheme and host).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import Callable, Iterable

import httpx

from hitl_nb.client import http_client
from hitl_nb.errors import DeliveryFailed, NotifyRefused
from hitl_nb.notify._kind import ChannelKind, WebhookTarget
from hitl_nb.notify._messages import Message
from hitl_nb.notify._registry import Registry, default_registry
from hitl_nb.notify._signature import IDEMPOTENCY_HEADER
from hitl_nb.notify._targets import check_webhook_url, shown_url

__all__ = ["WebhookChannel"]

_RETRIED = {408, 429}
#: Set while one of our requests is sent: its URL is not to be logged whole.
_OURS: contextvars.ContextVar[bool] = contextvars.ContextVar("hitl_webhook", default=False)


class _ShownUrls(logging.Filter):
    """httpx's request lines (``HTTP Request: POST <url> ...``) of our webhooks, with
    the URL shown by scheme and host only."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _OURS.get() and isinstance(record.args, tuple) and len(record.args) > 1:
            args = list(record.args)
            args[1] = shown_url(str(args[1]))
            record.args = tuple(args)
        return True


_FILTER = _ShownUrls()


class WebhookChannel:
    """POSTs messages to webhooks (see the module docstring). ``allowed_hosts``: the
    administrator's allow-list for people's own webhooks (read at each request: pass a
    callable to follow changes); ``client``: an ``httpx.AsyncClient`` to use (it must
    not follow redirects); ``clock``: the signatures' time; ``kinds``: the channel
    kinds whose targets it posts to (default: :func:`default_registry`)."""

    def __init__(
        self,
        allowed_hosts: Iterable[str] | Callable[[], Iterable[str]] = (),
        *,
        timeout: float = 10.0,
        client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] | None = None,
        user_agent: str = "hitl-nb",
        kinds: Registry | None = None,
    ) -> None:
        if callable(allowed_hosts):
            self._allowed: Callable[[], Iterable[str]] = allowed_hosts
        else:
            fixed = list(allowed_hosts)
            self._allowed = lambda: fixed
        self.timeout = timeout
        self._own = client is None
        self._client = client or http_client(follow_redirects=False)
        if self._client.follow_redirects:
            raise NotifyRefused("a webhook client must not follow redirects")
        self._clock = clock or time.time
        self.user_agent = user_agent
        self.kinds = kinds or default_registry()
        httpx_log = logging.getLogger("httpx")
        if _FILTER not in httpx_log.filters:
            httpx_log.addFilter(_FILTER)

    def _kind(self, target: WebhookTarget) -> ChannelKind:
        try:
            kind = self.kinds.of(target)
        except NotifyRefused as exc:
            raise DeliveryFailed(str(exc), permanent=True) from None
        if kind.transport != "webhooks" or kind.render is None:
            raise DeliveryFailed(f"{kind.label} is not sent by webhook", permanent=True)
        return kind

    def request_for(self, message: Message, target: WebhookTarget) -> tuple[bytes, dict[str, str]]:
        """The body and headers of the POST for ``message``, as its kind renders it
        (no I/O)."""
        render = self._kind(target).render
        assert render is not None
        headers = {
            "Content-Type": "application/json",
            "User-Agent": self.user_agent,
            IDEMPOTENCY_HEADER: message.key,
        }
        body, own = render(message, target, self._clock())
        headers.update(own)
        return body, headers

    async def deliver(self, message: Message, target: WebhookTarget) -> None:
        """POST ``message`` to ``target``; :class:`~hitl_nb.errors.DeliveryFailed`
        unless it answered 2xx."""
        self._kind(target)
        where = shown_url(target.url)
        try:
            check_webhook_url(target.url, self._allowed(), admin=target.admin)
        except NotifyRefused as exc:
            raise DeliveryFailed(f"not sent to {where}: {exc}", permanent=True) from None
        try:
            body, headers = self.request_for(message, target)
        except NotifyRefused as exc:  # a signing secret is missing
            raise DeliveryFailed(f"not sent to {where}: {exc}") from None
        try:
            status, location = await asyncio.wait_for(
                self._post(target.url, body, headers), self.timeout
            )
        except asyncio.TimeoutError:
            raise DeliveryFailed(f"{where} did not answer within {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise DeliveryFailed(f"{where} could not be reached ({type(exc).__name__})") from None
        if 200 <= status < 300:
            return
        if 300 <= status < 400:
            raise DeliveryFailed(
                f"{where} answered {status}, a redirect{location}; redirects are not followed",
                permanent=True,
            )
        permanent = 400 <= status < 500 and status not in _RETRIED
        raise DeliveryFailed(f"{where} answered {status}", permanent=permanent)

    async def _post(self, url: str, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
        request = self._client.build_request("POST", url, content=body, headers=headers)
        ours = _OURS.set(True)
        try:
            response = await self._client.send(request, stream=True, follow_redirects=False)
        finally:
            _OURS.reset(ours)
        try:
            location = response.headers.get("location")
            shown = f" to {shown_url(location)}" if location else ""
            return response.status_code, shown
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        """Close the client, if this channel made it."""
        if self._own:
            await self._client.aclose()
