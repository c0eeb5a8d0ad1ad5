"""The one place where a prompt's response_schema is settled on its way in.

Every Task, status update and Message a binding decodes passes through
:func:`settle_envelopes`: the response_schema of each hitl-prompt/v1 envelope it carries
gets its integral floats back as ints (always: what protobuf-based agents do to
numbers), and, when the agent's key order cannot be trusted, the stable property order
(see :mod:`hitl_nb._schema_in`). Forms, validation messages, cards and their text all
read the envelope after this, so they agree with each other and from run to run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hitl_nb._schema_in import settle_schema
from hitl_nb.a2a import AgentCard, Message, Task, TaskStatusUpdateEvent
from hitl_nb.spec import EXTENSION_URI

__all__ = ["PROPERTY_ORDERS", "order_is_trusted", "settle_envelopes"]

#: Values of ``HitlClient(property_order=...)``.
PROPERTY_ORDERS = ("auto", "agent", "stable")


def _messages(item: Any) -> Iterator[Message]:
    if isinstance(item, Message):
        yield item
    elif isinstance(item, Task):
        if item.status.message is not None:
            yield item.status.message
        yield from item.history
    elif isinstance(item, TaskStatusUpdateEvent) and item.status.message is not None:
        yield item.status.message


def settle_envelopes(item: Any, *, stable_order: bool) -> Any:
    """``item`` with the response_schema of every envelope it carries settled (in place)."""
    for message in _messages(item):
        meta = message.metadata
        envelope = meta.get(EXTENSION_URI) if isinstance(meta, dict) else None
        if isinstance(envelope, dict):
            settle_schema(envelope.get("response_schema"), stable_order=stable_order)
    return item


def order_is_trusted(card: AgentCard, choice: str) -> bool:
    """Whether to keep the agent's property order (``choice`` "auto", "agent", "stable").

    "auto" trusts it unless the card looks made from protobuf: its hitl-prompt/v1 entry
    lacks ``params`` (proto3 drops the empty ``{}`` the extension asks for, as the
    SDK-built agents do), so its metadata went through a ``Struct`` whose key order is
    arbitrary per process.
    """
    if choice not in PROPERTY_ORDERS:
        raise ValueError(f"property_order must be one of {', '.join(PROPERTY_ORDERS)}: {choice!r}")
    if choice != "auto":
        return choice == "agent"
    entries = [e for e in card.capabilities.extensions if e.uri == EXTENSION_URI]
    return not any(e.params is None for e in entries)
