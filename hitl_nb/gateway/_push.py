"""Push notifications for registered tasks: the gateway configures them, and receives them.

An agent whose card says ``capabilities.pushNotifications`` is asked (A2A 1.0
CreateTaskPushNotificationConfig) to POST each update of a registered task to
``{push base}push/<registration id>`` (``{base_url}hitl/push/`` in a Jupyter server,
``{hub}/services/hitl/push/`` on a hub), with a random per-registration secret as the
configuration's ``token`` and as ``Authorization: Bearer`` credentials. An agent has
no Jupyter or hub token, so that URL is behind no login; a notification is believed
only when (A2A §13.2, "never trust an unauthenticated push"):

- the registration exists and push was configured for it (404 / 403 otherwise);
- it carries the secret, in ``X-A2A-Notification-Token`` (the Python SDK's header),
  ``A2A-Notification-Token`` (the Go SDK's) or ``Authorization: Bearer``; it is compared
  in constant time (401 when absent, 403 when wrong);
- the body is JSON within the size cap (413 / 415 / 400), decodes as a 1.0
  StreamResponse or a 0.3 Task (400), and is about the registered task (400, §4.3.3:
  "Clients MUST validate the task ID matches an expected task").

A refused notification changes nothing. An accepted one is recorded like a read of the
task (a prompt lands in the store and in ``GET api/prompts``; a task that moved on
closes its prompt); the secrets live in the same store, so a restarted host accepts the
agent's next notification and configures the agent again with the same secret. The
watcher keeps polling such a task every ``poll_interval`` as a fallback.
"""

from __future__ import annotations

import hmac
import logging
import secrets
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hitl_nb._json import parse_json
from hitl_nb.a2a import (
    Message,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from hitl_nb.errors import BadJSON, HitlError
from hitl_nb.gateway._agents import AgentPool
from hitl_nb.gateway._store import GatewayStore, Registration
from hitl_nb.spec import parse_rfc3339

__all__ = ["PUSH_PATH", "PushDesk", "Refused", "notification_task_id"]

log = logging.getLogger("hitl_nb.gateway")

#: Where notifications are received, relative to the host's push base.
PUSH_PATH = "push"
#: The configuration id the gateway uses at every agent (one webhook per task).
CONFIG_ID = "hitl-nb-gateway"
_TOKEN_HEADERS = ("X-A2A-Notification-Token", "A2A-Notification-Token")
_MAX_DEPTH = 64

#: How the gateway records what a task shows (its ``see``).
See = Callable[[Registration, Task], Awaitable[None]]


class Refused(Exception):
    """A notification the receiver turns away: HTTP ``status`` and a plain message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Received:
    """What an accepted notification was about."""

    task_id: str
    kind: str


def notification_task_id(event: StreamEvent) -> str | None:
    """The task a notification is about."""
    if isinstance(event, Task):
        return event.id
    if isinstance(event, (TaskStatusUpdateEvent, TaskArtifactUpdateEvent)):
        return event.task_id
    return event.task_id


class PushDesk:
    """The gateway's push side: secrets, configuring agents, receiving notifications."""

    def __init__(
        self,
        store: GatewayStore,
        pool: AgentPool,
        see: See,
        url_for: Callable[[str], str | None],
        *,
        max_bytes: int,
    ) -> None:
        self.store = store
        self.pool = pool
        self._see = see
        self._url_for = url_for
        self.max_bytes = max_bytes
        #: Accepted notifications per registration since this process started.
        self.received: Counter[str] = Counter()
        self._latest: dict[str, tuple[float, bool]] = {}

    async def configured(self, reg_id: str) -> bool:
        """Has an agent accepted a push configuration for this registration?"""
        return await self.store.push_configured(reg_id)

    # -- configuring the agent -------------------------------------------------------

    async def arrange(self, reg: Registration) -> bool:
        """Ask the task's agent to push its updates here; True when it agreed.

        False (and the watcher streams or polls instead) when the card does not
        advertise push, no receiver URL is known, or the agent refused.
        """
        url = self._url_for(reg.id)
        if url is None:
            return False
        client = self.pool.client(reg.agent_url)
        try:
            card = await client.connect()
            if not card.capabilities.push_notifications:
                return False
            secret = await self.store.ensure_push_secret(reg.id, secrets.token_urlsafe(32))
            await client.create_push_config(
                reg.task_id,
                url,
                token=secret,
                config_id=CONFIG_ID,
                auth_scheme="Bearer",
                auth_credentials=secret,
            )
        except HitlError as exc:
            log.info(
                "hitl-nb gateway: task %s: push not configured (%s); watching instead",
                reg.task_id,
                exc,
            )
            return False
        await self.store.mark_push_configured(reg.id, time.time())
        log.info(
            "hitl-nb gateway: task %s at %s pushes its updates to %s",
            reg.task_id,
            reg.agent_url,
            url,
        )
        return True

    # -- receiving -------------------------------------------------------------------

    async def check(self, reg_id: str, headers: Mapping[str, str]) -> Registration:
        """The registration a notification is for, once its token is right (else Refused)."""
        reg = await self.store.registration(reg_id)
        if reg is None:
            raise Refused(404, "no registered task has this push address")
        secret = await self.store.push_secret(reg.id)
        if secret is None:
            raise Refused(403, "push notifications were never set up for this task")
        given = [headers.get(name) for name in _TOKEN_HEADERS]
        auth = headers.get("Authorization") or ""
        if auth[:7].lower() == "bearer ":
            given.append(auth[7:].strip())
        offered = [g for g in given if g]
        if not offered:
            raise Refused(401, "the notification carries no token (X-A2A-Notification-Token)")
        # Every offered value is compared, each in constant time.
        good = [hmac.compare_digest(g.encode(), secret.encode()) for g in offered]
        if not any(good):
            raise Refused(403, "the notification's token is wrong for this task")
        return reg

    async def receive(self, reg_id: str, headers: Mapping[str, str], body: bytes) -> Received:
        """Check and record one notification; raises Refused (and changes nothing)."""
        reg = await self.check(reg_id, headers)
        if len(body) > self.max_bytes:
            raise Refused(
                413, f"the notification is {len(body)} bytes; the limit is {self.max_bytes}"
            )
        media = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if media and media != "application/json" and not media.endswith("+json"):
            raise Refused(415, f"a notification is JSON (application/a2a+json), not {media!r}")
        try:
            value = parse_json(body, max_bytes=self.max_bytes, max_depth=_MAX_DEPTH)
        except BadJSON as exc:
            raise Refused(400, f"the notification is not acceptable JSON: {exc}") from None
        if not isinstance(value, dict):
            raise Refused(400, "a notification must be a JSON object (a StreamResponse)")
        try:
            event = await self.pool.client(reg.agent_url).read_notification(value)
        except HitlError as exc:
            raise Refused(400, f"the notification is not an A2A task update: {exc}") from None
        about = notification_task_id(event)
        if about != reg.task_id:
            raise Refused(
                400,
                f"the notification is about task {about!r}, but this address "
                f"belongs to task {reg.task_id!r}",
            )
        kind = await self._apply(reg, event)
        self.received[reg.id] += 1
        await self.store.count_push(reg.id)
        return Received(reg.task_id, kind)

    def fresh(self, reg_id: str, status: TaskStatus) -> bool:
        """Is this sighting of the task newer than the last one recorded? (Then it
        becomes the last one.)

        A notification and a read of the task (GetTask) can cross: a read answered
        before the agent asked, recorded after the push that says it asks, must not
        close the new prompt. Sightings are ordered by the agent's status timestamp;
        at the same timestamp, one showing a prompt wins over one showing none.
        """
        when = parse_rfc3339(status.timestamp) if status.timestamp else None
        if when is None:
            return True
        asks = status.state is TaskState.INPUT_REQUIRED
        mark = (when.timestamp(), asks)
        last = self._latest.get(reg_id)
        if last is not None and mark < last:
            return False
        self._latest[reg_id] = mark
        return True

    async def _apply(self, reg: Registration, event: StreamEvent) -> str:
        if isinstance(event, Task):
            await self._see(reg, event)
            return "task"
        if isinstance(event, TaskStatusUpdateEvent):
            # A status update says all the gateway needs: the state and its message
            # (the prompt envelope, when the task asks).
            await self._see(reg, Task(reg.task_id, event.context_id, event.status))
            return "status"
        return "message" if isinstance(event, Message) else "artifact"


def push_reply(status: int, message: str) -> dict[str, Any]:
    """The JSON body of the receiver's answer."""
    return {"error": status, "message": message} if status >= 400 else {"ok": True}
