"""Each kind of target to the channel that sends to it."""

from __future__ import annotations

from hitl_nb.errors import DeliveryFailed
from hitl_nb.notify._email import EmailChannel
from hitl_nb.notify._messages import Message
from hitl_nb.notify._targets import EmailTarget, Target
from hitl_nb.notify._webhooks import WebhookChannel

__all__ = ["Channels"]


class Channels:
    """The channels a sender has: ``email`` (None: no SMTP server set) and
    ``webhooks``."""

    def __init__(
        self, *, email: EmailChannel | None = None, webhooks: WebhookChannel | None = None
    ) -> None:
        self.email = email
        self.webhooks = webhooks

    async def deliver(self, message: Message, target: Target) -> None:
        """Send ``message`` to ``target`` by its channel; a target whose channel is not
        set up fails for good."""
        if isinstance(target, EmailTarget):
            if self.email is None:
                raise DeliveryFailed("no SMTP server is set up to send email", permanent=True)
            await self.email.deliver(message, target)
            return
        if self.webhooks is None:
            raise DeliveryFailed("webhooks are not set up", permanent=True)
        await self.webhooks.deliver(message, target)

    async def aclose(self) -> None:
        """Close every channel."""
        if self.email is not None:
            await self.email.aclose()
        if self.webhooks is not None:
            await self.webhooks.aclose()
