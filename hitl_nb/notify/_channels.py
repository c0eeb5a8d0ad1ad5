"""Each target to the transport that carries it, by its kind (:mod:`hitl_nb.notify._registry`)."""

from __future__ import annotations

from hitl_nb.errors import DeliveryFailed, NotifyRefused
from hitl_nb.notify._kind import Target, Transport
from hitl_nb.notify._messages import Message
from hitl_nb.notify._registry import Registry, default_registry

__all__ = ["Channels"]


class Channels:
    """The transports a sender has, by name: ``email`` (an
    :class:`~hitl_nb.notify.EmailChannel`; None: no SMTP server set) and ``webhooks``
    (a :class:`~hitl_nb.notify.WebhookChannel`), or any a registered kind names.
    ``kinds``: the channel kinds (default: the package's)."""

    def __init__(self, *, kinds: Registry | None = None, **transports: Transport | None) -> None:
        self.kinds = kinds or default_registry()
        self.transports = {name: t for name, t in transports.items() if t is not None}

    async def deliver(self, message: Message, target: Target) -> None:
        """Send ``message`` to ``target`` by its kind's transport; a target of no known
        kind, or whose transport is not set up, fails for good."""
        try:
            kind = self.kinds.of(target)
        except NotifyRefused as exc:
            raise DeliveryFailed(str(exc), permanent=True) from None
        transport = self.transports.get(kind.transport)
        if transport is None:
            raise DeliveryFailed(kind.unavailable, permanent=True)
        await transport.deliver(message, target)

    async def aclose(self) -> None:
        """Close every transport."""
        for transport in self.transports.values():
            await transport.aclose()
