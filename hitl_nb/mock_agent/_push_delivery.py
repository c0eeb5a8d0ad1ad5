"""Delivering push notifications: one POST per task update to each configured webhook.

A2A 1.0 §4.3.3 and §13.2, as this agent does them:

- the body is the update as the configuring client's version sends it: a 1.0
  ``StreamResponse`` (``application/a2a+json``), or for a 0.3 client the whole Task as
  it is now (``application/json``, 0.3 §9.5);
- headers: the configuration's ``token`` as ``X-A2A-Notification-Token`` (what the
  Python SDK sends and reads) and as ``A2A-Notification-Token`` (the Go SDK's name),
  and ``Authorization: <scheme> <credentials>`` when ``authentication`` is set;
- at least one attempt per update and webhook; a failure (no connection, timeout, HTTP
  5xx, 408 or 429) is retried ``retries`` times with exponential backoff; any other
  answer outside 2xx is final; redirects are never followed (a 3xx is a failure);
- updates to one webhook go out in order, one at a time; each webhook has its own
  worker, so a slow or dead receiver delays only its own notifications and never the
  agent (publishing only queues); a queue over ``queue_limit`` drops its oldest update;
- bodies over ``max_body`` bytes are not sent (logged); the receiver's answer is read
  up to 64 KiB at most.

Undelivered updates live in memory only: a stopped agent does not resend them.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from dataclasses import dataclass, field

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

from hitl_nb._backoff import Backoff
from hitl_nb.a2a import CODEC_V03, CODEC_V1, PushConfig, StreamEvent, Task
from hitl_nb.mock_agent._faults import Faults
from hitl_nb.mock_agent._records import PushEntry
from hitl_nb.mock_agent._views import event_view, task_view

__all__ = ["Delivery", "PushSender", "PushSettings", "TOKEN_HEADERS", "notification"]

log = logging.getLogger("hitl_nb.mock_agent.push")

#: The headers that carry the configuration's token (both SDK spellings, same value).
TOKEN_HEADERS = ("X-A2A-Notification-Token", "A2A-Notification-Token")
_RETRYABLE = frozenset({408, 429})
_MAX_ANSWER = 64 * 1024


@dataclass(frozen=True)
class PushSettings:
    """How the agent delivers: attempts, backoff, time and size limits."""

    enabled: bool = True
    retries: int = 3
    backoff: float = 0.25
    max_backoff: float = 5.0
    timeout: float = 10.0
    max_body: int = 1024 * 1024
    queue_limit: int = 256
    max_configs: int = 10
    max_url: int = 2048


@dataclass
class Delivery:
    """What happened to one notification (kept for tests and the log)."""

    url: str
    attempts: int = 0
    status: int | None = None
    delivered: bool = False
    error: str | None = None


@dataclass
class _Queue:
    items: deque[tuple[PushConfig, bytes, str]] = field(default_factory=deque)
    worker: asyncio.Task[None] | None = None


def notification(entry: PushEntry, event: StreamEvent, task: Task, faults: Faults) -> bytes:
    """The body of one notification for ``entry``: the update in its client's version."""
    if entry.version == "0.3":
        shown = task_view(task, activated=entry.activated, faults=faults)
        return json.dumps(CODEC_V03.encode_task(shown), separators=(",", ":")).encode()
    shown_event = event_view(event, activated=entry.activated, faults=faults)
    body = CODEC_V1.encode_stream_response(shown_event)
    return json.dumps(body, separators=(",", ":")).encode()


class PushSender:
    """Queues notifications per webhook and delivers them in the background."""

    def __init__(self, settings: PushSettings) -> None:
        self.settings = settings
        self._queues: dict[tuple[str, str], _Queue] = {}
        self._http: AsyncHTTPClient | None = None
        #: The most recent outcomes, newest last (bounded).
        self.log: deque[Delivery] = deque(maxlen=200)
        #: POSTs that failed so far (each failed retry counts).
        self.failures = 0
        self._closed = False

    def publish(self, task_id: str, entry: PushEntry, body: bytes, media: str) -> None:
        """Queue ``body`` for ``entry``'s webhook; never waits."""
        if self._closed:
            return
        if len(body) > self.settings.max_body:
            log.warning(
                "push for task %s: %d bytes is over the %d-byte limit; not sent",
                task_id,
                len(body),
                self.settings.max_body,
            )
            self.log.append(Delivery(entry.config.url, error="body over the size limit"))
            return
        key = (task_id, entry.config.id or "")
        queue = self._queues.setdefault(key, _Queue())
        if len(queue.items) >= self.settings.queue_limit:
            queue.items.popleft()
            log.warning("push for task %s: receiver too slow, oldest update dropped", task_id)
        queue.items.append((entry.config, body, media))
        if queue.worker is None or queue.worker.done():
            queue.worker = asyncio.ensure_future(self._drain(key, queue))

    def forget(self, task_id: str, config_id: str) -> None:
        """Drop what is queued for a deleted configuration (A2A §3.1.10)."""
        queue = self._queues.pop((task_id, config_id), None)
        if queue is not None:
            queue.items.clear()
            if queue.worker is not None:
                queue.worker.cancel()

    @property
    def idle(self) -> bool:
        """True when nothing is queued or on its way."""
        return all(
            not q.items and (q.worker is None or q.worker.done()) for q in self._queues.values()
        )

    def close(self) -> None:
        """Stop every worker and the HTTP client (queued updates are dropped)."""
        self._closed = True
        for queue in self._queues.values():
            if queue.worker is not None:
                queue.worker.cancel()
        self._queues.clear()
        if self._http is not None:
            self._http.close()
            self._http = None

    def _client(self) -> AsyncHTTPClient:
        if self._http is None:
            self._http = AsyncHTTPClient(force_instance=True, max_body_size=_MAX_ANSWER)
        return self._http

    async def _drain(self, key: tuple[str, str], queue: _Queue) -> None:
        while queue.items:
            config, body, media = queue.items[0]
            outcome = await self._deliver(config, body, media)
            self.log.append(outcome)
            if queue.items and queue.items[0][1] is body:
                queue.items.popleft()
        if self._queues.get(key) is queue and not queue.items:
            del self._queues[key]

    async def _deliver(self, config: PushConfig, body: bytes, media: str) -> Delivery:
        s = self.settings
        headers = {"Content-Type": media}
        if config.token:
            for name in TOKEN_HEADERS:
                headers[name] = config.token
        auth = config.authorization()
        if auth:
            headers["Authorization"] = auth
        outcome = Delivery(config.url)
        pauses = Backoff(s.backoff, s.max_backoff)
        for attempt in range(s.retries + 1):
            if attempt:
                await asyncio.sleep(pauses.delay(attempt))
            outcome.attempts = attempt + 1
            request = HTTPRequest(
                config.url,
                method="POST",
                body=body,
                headers=headers,
                follow_redirects=False,
                connect_timeout=s.timeout,
                request_timeout=s.timeout,
                decompress_response=False,
            )
            try:
                answer = await self._client().fetch(request, raise_error=False)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # refused, reset, DNS: the receiver may come back
                outcome.status, outcome.error = None, f"{type(exc).__name__}: {exc}"
                self.failures += 1
                continue
            outcome.status = answer.code
            if 200 <= answer.code < 300:
                outcome.delivered, outcome.error = True, None
                return outcome
            outcome.error = _problem(answer.code, answer.error)
            self.failures += 1
            if not (answer.code >= 500 or answer.code in _RETRYABLE or answer.code == 599):
                break  # 3xx (never followed) or a 4xx: trying again would not help
        log.warning(
            "push to %s failed after %d attempt(s): %s", config.url, outcome.attempts, outcome.error
        )
        return outcome


def _problem(code: int, error: BaseException | None) -> str:
    if 300 <= code < 400:
        return f"HTTP {code}: a redirect, not followed"
    if isinstance(error, HTTPClientError) and code == 599:
        return f"no answer: {error.message}"
    return f"HTTP {code}"
