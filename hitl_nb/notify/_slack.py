"""Slack-compatible incoming webhooks (Slack, Mattermost, and others that take
``{"text": ...}``): the channel kind ``slack``, a webhook URL given alone.

The text is :meth:`~hitl_nb.notify.Message.chat`: the agent's words with no mention and
no link (:func:`hitl_nb.notify._text.chat`), ours live.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from hitl_nb.notify._kind import ChannelKind
from hitl_nb.notify._messages import Message
from hitl_nb.notify._targets import shown_url

__all__ = ["KIND", "SlackTarget"]


@dataclass(frozen=True)
class SlackTarget:
    """A Slack-compatible incoming webhook. ``admin``: the administrator gave it."""

    url: str
    admin: bool = False

    def __repr__(self) -> str:
        # A Slack webhook's path is its credential: never shown whole.
        return f"SlackTarget({shown_url(self.url)!r}, admin={self.admin})"


def render(message: Message, target: SlackTarget, now: float) -> tuple[bytes, dict[str, str]]:
    """``{"text": ...}`` (no headers of its own)."""
    return json.dumps({"text": message.chat()}, ensure_ascii=False).encode("utf-8"), {}


KIND = ChannelKind(
    "slack",
    SlackTarget,
    "a Slack-compatible webhook",
    from_url=SlackTarget,
    render=render,
)
