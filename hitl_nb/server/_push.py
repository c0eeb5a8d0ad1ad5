"""Push notifications for registered tasks: the gateway configures them, and receives them.

An agent whose card says ``capabilities.pushNotifications`` is asked (A2A 1.0
CreateTaskPushNotificationConfig) to POST each update of a registered task to
``{push_base_url}hitl/push/<registration id>``, with a random per-registration secret
as the configuration's ``token`` and as ``Authorization: Bearer`` credentials. An agent
has no Jupyter token, so that URL is not behind Jupyter's login; a notification is
believed only when (A2A §13.2, "never trust an unauthenticated push"):

- the registration exists and push was configured for it (404 / 403 otherwise);
- it carries the secret, in ``X-A2A-Notification-Token`` (the Python SDK's header),
  ``A2A-Notification-Token`` (the Go SDK's) or ``Authorization: Bearer``; it is compared
  in constant time (401 when absent, 403 when wrong);
- the body is JSON within the size cap (413 / 415 / 400), decodes as a 1.0
  StreamResponse or a 0.3 Task (400), and is about the registered task (400, §4.3.3:
  "Clients MUST validate the task ID matches an expected task").

A refused notification changes nothing. An accepted one is recorded like a read of the
task (a prompt lands in the SQLite store and in ``GET hitl/api/prompts``; a task that
moved on closes its prompt); the secrets live in the same store, so a restarted server
accepts the agent's next notification and configures the agent again with the same
secret. The watcher keeps polling such a task every ``poll_interval`` as a fallback.
"""

from __future__ import annotations

import hmac
import logging
import secrets
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Mapping
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
from hitl_nb.server._agents import AgentPool
from hitl_nb.server._store import Registration
from hitl_nb.spec import parse_rfc3339

__all__ = ["PUSH_PATH", "PushDesk", "Refused", "notification_task_id"]

log = logging.getLogger("hitl_nb.server")

#: Where notifications are received, relative to the server's base URL.
PUSH_PATH = "hitl/push"
#: The configuration id the gateway uses at every agent (one webhook per task).
CONFIG_ID = "hitl-nb-gateway"
_TOKEN_HEADERS = ("X-A2A-Notification-Token", "A2A-Notification-Token")
_MAX_DEPTH = 64

_SCHEMA = """
CREATE TABLE IF NOT EXISTS push (
    reg_id TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    configured REAL,
    received INTEGER NOT NULL DEFAULT 0
);
"""

#: How the gateway records what a task shows (its ``_see``).
See = Callable[[Registration, Task], None]


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
        db: sqlite3.Connection,
        pool: AgentPool,
        registration: Callable[[str], Registration | None],
        see: See,
        url_for: Callable[[str], str | None],
        *,
        max_bytes: int,
    ) -> None:
        self._db = db
        self._db.executescript(_SCHEMA)
        self.pool = pool
        self._registration = registration
        self._see = see
        self._url_for = url_for
        self.max_bytes = max_bytes
        #: Accepted notifications per registration since the server started.
        self.received: Counter[str] = Counter()
        self._latest: dict[str, tuple[float, bool]] = {}

    # -- secrets ---------------------------------------------------------------------

    def _secret(self, reg_id: str) -> str | None:
        row = self._db.execute("SELECT secret FROM push WHERE reg_id = ?", (reg_id,)).fetchone()
        return str(row[0]) if row else None

    def _ensure_secret(self, reg_id: str) -> str:
        self._db.execute(
            "INSERT OR IGNORE INTO push (reg_id, secret) VALUES (?, ?)",
            (reg_id, secrets.token_urlsafe(32)),
        )
        secret = self._secret(reg_id)
        assert secret is not None
        return secret

    def configured(self, reg_id: str) -> bool:
        """Has an agent accepted a push configuration for this registration?"""
        row = self._db.execute("SELECT configured FROM push WHERE reg_id = ?", (reg_id,))
        found = row.fetchone()
        return bool(found and found[0] is not None)

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
            secret = self._ensure_secret(reg.id)
            await client.create_push_config(
                reg.task_id, url, token=secret, config_id=CONFIG_ID,
                auth_scheme="Bearer", auth_credentials=secret,
            )  # fmt: skip
        except HitlError as exc:
            log.info("hitl-nb gateway: task %s: push not configured (%s); watching instead",
                     reg.task_id, exc)  # fmt: skip
            return False
        self._db.execute("UPDATE push SET configured = ? WHERE reg_id = ?", (time.time(), reg.id))
        log.info("hitl-nb gateway: task %s at %s pushes its updates to %s",
                 reg.task_id, reg.agent_url, url)  # fmt: skip
        return True

    # -- receiving -------------------------------------------------------------------

    def check(self, reg_id: str, headers: Mapping[str, str]) -> Registration:
        """The registration a notification is for, once its token is right (else Refused)."""
        reg = self._registration(reg_id)
        if reg is None:
            raise Refused(404, "no registered task has this push address")
        secret = self._secret(reg.id)
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
        reg = self.check(reg_id, headers)
        if len(body) > self.max_bytes:
            raise Refused(413, f"the notification is {len(body)} bytes; the limit is "
                          f"{self.max_bytes}")  # fmt: skip
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
            raise Refused(400, f"the notification is about task {about!r}, but this address "
                          f"belongs to task {reg.task_id!r}")  # fmt: skip
        kind = self._apply(reg, event)
        self.received[reg.id] += 1
        self._db.execute("UPDATE push SET received = received + 1 WHERE reg_id = ?", (reg.id,))
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

    def _apply(self, reg: Registration, event: StreamEvent) -> str:
        if isinstance(event, Task):
            self._see(reg, event)
            return "task"
        if isinstance(event, TaskStatusUpdateEvent):
            # A status update says all the gateway needs: the state and its message
            # (the prompt envelope, when the task asks).
            self._see(reg, Task(reg.task_id, event.context_id, event.status))
            return "status"
        return "message" if isinstance(event, Message) else "artifact"


def push_reply(status: int, message: str) -> dict[str, Any]:
    """The JSON body of the receiver's answer."""
    return {"error": status, "message": message} if status >= 400 else {"ok": True}
