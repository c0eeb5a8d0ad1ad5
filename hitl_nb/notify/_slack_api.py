"""Slack's Web API, the few methods a Slack app kind needs, and Slack's request signing.

:class:`SlackApi` calls ``chat.postMessage``, ``chat.update``, ``users.info`` (and
posts to an interaction's ``response_url``) with the bot token, read from its
:class:`~hitl_nb.notify._secrets.Secret` at each call and never logged (it travels in
the ``Authorization`` header only). Failures are
:class:`~hitl_nb.errors.DeliveryFailed`, so the outbox retries a message as it does an
email: a 429 with its ``Retry-After`` (the next try waits at least that long), 408 and
5xx, a timeout or no connection, and Slack's own ``ratelimited`` answer are retried; a
bad token, a channel the bot is not in, any other 4xx are given up for good. A message
refused is not posted, so retrying it posts it once.

:func:`slack_signature` and :func:`check_slack_signature` are Slack's request signing (v0):
``v0=`` and the hex HMAC-SHA256, keyed with the app's signing secret, of
``v0:{X-Slack-Request-Timestamp}:{the raw body}``; a timestamp more than five minutes
from our clock is refused (a replay), and the comparison is in constant time.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

import httpx

from hitl_nb.client import http_client
from hitl_nb.errors import DeliveryFailed, NotifyRefused
from hitl_nb.notify._secrets import Secret

__all__ = ["DEFAULT_API_URL", "TOLERANCE", "SlackApi", "check_slack_signature", "slack_signature"]

DEFAULT_API_URL = "https://slack.com/api/"
#: Seconds a signed request's timestamp may be from our clock.
TOLERANCE = 300.0
#: Slack's answers (``ok: false``) that retrying can mend.
_TRANSIENT = {
    "ratelimited",
    "service_unavailable",
    "internal_error",
    "fatal_error",
    "request_timeout",
}
#: Where an interaction's ``response_url`` may point besides the API's own host.
RESPONSE_HOSTS = frozenset({"hooks.slack.com"})


def slack_signature(secret: str, timestamp: str, body: bytes) -> str:
    """Slack's v0 signature of ``body`` sent at ``timestamp`` (Unix seconds, as text)."""
    base = b"v0:" + timestamp.encode("ascii") + b":" + body
    return "v0=" + hmac.new(secret.encode("utf-8"), base, hashlib.sha256).hexdigest()


def check_slack_signature(
    secret: str, headers: Mapping[str, str], body: bytes, now: float | None = None
) -> str | None:
    """Why a request is not Slack's (None: it is): ``headers`` as received (their
    ``X-Slack-Request-Timestamp`` and ``X-Slack-Signature``), ``body`` the raw bytes."""
    stamp = headers.get("X-Slack-Request-Timestamp") or ""
    given = headers.get("X-Slack-Signature") or ""
    if not stamp.isdigit() or len(stamp) > 12:
        return "no valid X-Slack-Request-Timestamp"
    now = time.time() if now is None else now
    if abs(now - int(stamp)) > TOLERANCE:
        return "the request's timestamp is more than five minutes from ours (a replay?)"
    if not given.isascii() or not hmac.compare_digest(slack_signature(secret, stamp, body), given):
        return "the request's X-Slack-Signature is not the signing secret's"
    return None


class SlackApi:
    """Slack's Web API with a bot token (see the module docstring). ``base_url``: the
    API's root (``https://slack.com/api/``; tests point it at a fake); ``client``: an
    ``httpx.AsyncClient`` to use."""

    def __init__(
        self,
        token: Secret,
        base_url: str = DEFAULT_API_URL,
        *,
        timeout: float = 10.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        parsed = httpx.URL(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.host or parsed.userinfo:
            raise NotifyRefused(f"the Slack API's URL must be an http(s) URL, got {base_url!r}")
        self.token = token
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.timeout = timeout
        self._own = client is None
        self._client = client or http_client(follow_redirects=False)

    async def call(self, method: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """``method``'s answer (``ok`` true); else :class:`~hitl_nb.errors.DeliveryFailed`."""
        try:
            token = self.token.read()
        except NotifyRefused as exc:
            raise DeliveryFailed(f"the Slack bot token: {exc}") from None
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json; charset=utf-8",
        }
        answer = await self._post(self.base_url + method, body, headers, f"Slack's {method}")
        if answer.get("ok") is not True:
            error = str(answer.get("error") or "no reason given")[:200]
            raise DeliveryFailed(
                f"Slack's {method} answered {error}", permanent=error not in _TRANSIENT
            )
        return answer

    async def respond(self, response_url: str, body: Mapping[str, Any]) -> None:
        """Post ``body`` to an interaction's ``response_url`` (only Slack's hosts, or
        the API's own: a signed request's, never another's)."""
        host = httpx.URL(response_url).host if response_url.startswith("http") else ""
        if host not in RESPONSE_HOSTS | {httpx.URL(self.base_url).host}:
            raise DeliveryFailed(f"a response_url on {host or 'no host'!r} is not Slack's")
        await self._post(response_url, body, {"Content-Type": "application/json"}, "Slack")

    async def _post(
        self, url: str, body: Mapping[str, Any], headers: dict[str, str], who: str
    ) -> dict[str, Any]:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        try:
            response = await asyncio.wait_for(
                self._client.post(url, content=data, headers=headers), self.timeout
            )
        except asyncio.TimeoutError:
            raise DeliveryFailed(f"{who} did not answer within {self.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise DeliveryFailed(f"{who} could not be reached ({type(exc).__name__})") from None
        status = response.status_code
        if status == 429 or status == 408 or status >= 500:
            raise DeliveryFailed(
                f"{who} answered {status}",
                retry_after=_seconds(response.headers.get("Retry-After")),
            )
        if not 200 <= status < 300:
            raise DeliveryFailed(f"{who} answered {status}", permanent=True)
        try:
            answer = response.json()
        except ValueError:
            return {"ok": True}  # a response_url answers "ok" as text
        return answer if isinstance(answer, dict) else {"ok": True}

    async def aclose(self) -> None:
        """Close the client, if this one made it."""
        if self._own:
            await self._client.aclose()


def _seconds(value: str | None) -> float | None:
    if value is None or not value.strip().isdigit():
        return None
    return float(min(int(value.strip()), 3600))
