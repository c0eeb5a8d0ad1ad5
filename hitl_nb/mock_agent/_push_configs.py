"""The push-notification configurations of the agent's tasks (A2A 1.0 §3.1.7-3.1.10).

:class:`PushConfigs` is the part of the agent that creates, gets, lists and deletes a
task's webhooks, and hands each committed task update to the
:class:`~hitl_nb.mock_agent._push_delivery.PushSender` (it watches the task book's
commits, and sees the book as :class:`Book`). Off unless a client asks: no
configuration, no notification. With push turned off (``push_notifications=False``) the
card says ``pushNotifications: false`` and every method answers
PushNotificationNotSupported (-32003), as §3.3.4 requires.

Configurations are part of the task's record, so a durable agent keeps them across
restarts (§3.1.7: they "MUST persist until task completion or explicit deletion").
"""

from __future__ import annotations

import logging
import uuid
from typing import Protocol
from urllib.parse import urlsplit

from hitl_nb.a2a import A2AVersion, PushConfig, StreamEvent
from hitl_nb.errors import InvalidParams, PushNotificationNotSupported, TaskNotFound
from hitl_nb.mock_agent._faults import Faults
from hitl_nb.mock_agent._push_delivery import PushSender, PushSettings, notification
from hitl_nb.mock_agent._records import PushEntry, TaskRecord
from hitl_nb.mock_agent._task_book import Commits, Finds

__all__ = ["MAX_SECRET", "Book", "IncomingPush", "PushConfigs", "check_push_config"]

#: A push configuration that arrived with a send request: (config, version, activated).
IncomingPush = tuple[PushConfig, A2AVersion, bool]
#: What a commit stored: ``(outbox id, event)``, oldest first.
Committed = list[tuple[int, StreamEvent]]

log = logging.getLogger("hitl_nb.mock_agent.push")

#: Longest token, credentials or configuration id accepted (characters).
MAX_SECRET = 4096
_MAX_ID = 256


def check_push_config(config: PushConfig, settings: PushSettings, pointer: str) -> None:
    """Refuse a webhook this agent will not call (InvalidParams naming the member).

    An absolute ``http`` or ``https`` URL with a host, no user name or password in it,
    at most ``settings.max_url`` characters. Loopback and private addresses are
    accepted: this is a test agent whose clients run on the same machine (a production
    agent SHOULD refuse them, A2A §13.2).
    """
    url = config.url
    if len(url) > settings.max_url:
        raise InvalidParams(f"{pointer}/url: over {settings.max_url} characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidParams(f"{pointer}/url: not a URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidParams(f"{pointer}/url: must be an absolute http:// or https:// URL")
    if parts.username is not None or parts.password is not None:
        raise InvalidParams(f"{pointer}/url: must not hold a user name or password")
    if port == 0:
        raise InvalidParams(f"{pointer}/url: port 0 cannot be called")
    if any(ord(c) < 0x21 for c in url):
        raise InvalidParams(f"{pointer}/url: must not contain spaces or control characters")
    for name, value, limit in (
        ("token", config.token, MAX_SECRET),
        ("authentication/credentials", config.auth_credentials, MAX_SECRET),
        ("authentication/scheme", config.auth_scheme, 64),
        ("id", config.id, _MAX_ID),
    ):
        if value is None:
            continue
        if len(value) > limit:
            raise InvalidParams(f"{pointer}/{name}: over {limit} characters")
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
            # It goes into an HTTP header: no line breaks (header injection).
            raise InvalidParams(f"{pointer}/{name}: must not contain control characters")


class Book(Finds, Commits, Protocol):
    """What push configurations need of the task book: find a task, store its change."""


class PushConfigs:
    """Push-notification configurations of the agent's tasks, and their delivery."""

    def __init__(self, book: Book, settings: PushSettings, faults: Faults) -> None:
        self.book = book
        self.settings = settings
        self.faults = faults
        self.sender = PushSender(settings)

    @property
    def enabled(self) -> bool:
        """Does this agent do push notifications (its card says so)?"""
        return self.settings.enabled

    def require(self) -> None:
        """Raise PushNotificationNotSupported (-32003) when push is turned off."""
        if not self.settings.enabled:
            # A2A §3.3.2's words for the error: clients (and the 0.3 TCK) look for them.
            raise PushNotificationNotSupported("push notifications are not supported by this agent")

    def add(
        self, rec: TaskRecord, config: PushConfig, version: A2AVersion, activated: bool
    ) -> PushEntry:
        """Give the task a webhook (checked first; the caller commits): a new one, or
        the one of the same id replaced."""
        self.require()
        check_push_config(config, self.settings, "/params")
        if config.task_id is not None and config.task_id != rec.id:
            raise InvalidParams(f"/params/taskId: {config.task_id!r} is not task {rec.id!r}")
        config.id = config.id or str(uuid.uuid4())
        config.task_id = rec.id
        if config.id not in rec.push and len(rec.push) >= self.settings.max_configs:
            raise InvalidParams(
                f"task {rec.id} already has {self.settings.max_configs} push configurations "
                "(the limit); delete one first"
            )
        entry = PushEntry(config, version, activated)
        rec.push[config.id] = entry  # the same id again replaces it
        return entry

    def create(
        self, task_id: str, config: PushConfig, version: A2AVersion, activated: bool
    ) -> PushConfig:
        """CreateTaskPushNotificationConfig: store (or replace, same id) a webhook."""
        self.require()
        rec = self.book.get(task_id)
        entry = self.add(rec, config, version, activated)
        self.book.commit(rec)
        return entry.config

    def get(self, task_id: str, config_id: str | None) -> PushConfig:
        """GetTaskPushNotificationConfig; without an id (0.3), the task's first one."""
        self.require()
        rec = self.book.get(task_id)
        if config_id is None:
            if not rec.push:
                raise TaskNotFound(f"task {task_id} has no push notification configuration")
            return next(iter(rec.push.values())).config
        entry = rec.push.get(config_id)
        if entry is None:
            raise TaskNotFound(
                f"task {task_id} has no push notification configuration {config_id!r}"
            )
        return entry.config

    def list(self, task_id: str) -> list[PushConfig]:
        """ListTaskPushNotificationConfigs: every webhook of the task, oldest first."""
        self.require()
        return [entry.config for entry in self.book.get(task_id).push.values()]

    def delete(self, task_id: str, config_id: str) -> None:
        """DeleteTaskPushNotificationConfig; deleting one that is gone is no error."""
        self.require()
        rec = self.book.get(task_id)
        if rec.push.pop(config_id, None) is not None:
            self.sender.forget(task_id, config_id)
            self.book.commit(rec)

    def publish(self, rec: TaskRecord, events: Committed) -> None:
        """Hand the committed updates of ``rec`` to every webhook it has (the task
        book's commit watcher)."""
        if not rec.push or not events:
            return
        for entry in list(rec.push.values()):
            media = "application/json" if entry.version == "0.3" else "application/a2a+json"
            if entry.version == "0.3":
                # 0.3 sends the whole task once per change, not once per event.
                body = notification(entry, events[-1][1], rec.task, self.faults)
                self.sender.publish(rec.id, entry, body, media)
                continue
            for _seq, event in events:
                body = notification(entry, event, rec.task, self.faults)
                self.sender.publish(rec.id, entry, body, media)

    def close(self) -> None:
        """Stop every delivery (queued notifications are dropped)."""
        self.sender.close()
