"""What one kind of channel declares: its target, how it is given, how a message looks.

A kind of channel (email, a Slack-compatible webhook, a signed JSON webhook, a Microsoft
Teams workflow) is one module that makes one :class:`ChannelKind`, and one registration
in :mod:`hitl_nb.notify._registry`. The rest of the package asks the registry instead
of testing a target's type:

- **its target** (``target``): the frozen dataclass a message is sent to (a webhook
  target holds ``url`` and ``admin``: :class:`WebhookTarget`);
- **how it is given**: ``from_url`` makes a target from a URL alone (a team channel's
  ``"teams:https://..."``, a person's own webhook); ``from_setting`` from the
  administrator's mapping (``{"kind": "signed", "url": ..., "secret_env": ...}``). The
  URL is checked before either is called (:func:`~hitl_nb.notify._targets.check_webhook_url`);
- **how it is delivered**: ``transport`` names which of the sender's
  :class:`~hitl_nb.notify.Channels` carries it (``webhooks``: the shared POST with its
  idempotency key, no redirects, a bounded time and the retry rules; ``email``: SMTP),
  and ``render`` makes a webhook's request body and its own headers from a
  :class:`~hitl_nb.notify.Message`, the agent's words neutralised for that place
  (:mod:`hitl_nb.notify._text`).
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from hitl_nb.errors import NotifyRefused

if typing.TYPE_CHECKING:
    from hitl_nb.notify._messages import Message

__all__ = ["ChannelKind", "Render", "Target", "Transport", "WebhookTarget"]

#: A kind's name: what settings and people write before a URL (``teams:https://...``).
_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")
#: Names a kind may not take: a URL's own schemes would read as a kind's prefix.
_RESERVED = frozenset({"http", "https"})


class Target(Protocol):
    """Where one message goes: a registered kind's target (a frozen dataclass, found
    in the registry by its type)."""


class WebhookTarget(Target, Protocol):
    """A target reached by a POST: ``url`` (shown by scheme and host only), ``admin``
    (the administrator gave it: any host; else the allow-list's)."""

    @property
    def url(self) -> str: ...

    @property
    def admin(self) -> bool: ...


class Transport(Protocol):
    """What carries a kind's messages (:class:`~hitl_nb.notify.EmailChannel`,
    :class:`~hitl_nb.notify.WebhookChannel`)."""

    async def deliver(self, message: Message, target: Any) -> None:
        """Send ``message`` to ``target``, or :class:`~hitl_nb.errors.DeliveryFailed`."""

    async def aclose(self) -> None:
        """Let go of what it holds."""


#: ``render(message, target, now)`` -> (the POST's body, the kind's own headers).
Render = Callable[["Message", Any, float], tuple[bytes, dict[str, str]]]


@dataclass(frozen=True)
class ChannelKind:
    """One kind of channel (see the module docstring). ``label``: the kind in words,
    for the errors a person or an administrator reads; ``unavailable``: why nothing of
    this kind can be sent when its transport is not set up."""

    name: str
    target: type
    label: str
    transport: str = "webhooks"
    from_url: Callable[[str, bool], Any] | None = None
    from_setting: Callable[[Mapping[str, Any]], Any] | None = None
    render: Render | None = None
    unavailable: str = "webhooks are not set up"

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name) or self.name in _RESERVED:
            raise NotifyRefused(
                f"a channel kind's name is a lower-case word (not http or https), got {self.name!r}"
            )
        if self.transport == "webhooks" and self.render is None:
            raise NotifyRefused(f"the channel kind {self.name!r} posts, but renders nothing")
