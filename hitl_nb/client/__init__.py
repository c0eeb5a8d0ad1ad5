"""Talk to A2A agents about their hitl-prompt/v1 prompts.

:class:`HitlClient` is async; :class:`SyncHitlClient` blocks and is safe in notebook
cells. Streams yield the neutral events of :mod:`hitl_nb.client._events`::

    async with HitlClient("http://127.0.0.1:8000") as client:
        async for event in client.stream("approval"):
            if isinstance(event, PromptEvent):
                print(event.prompt)                       # plain text (S-1)
                await client.respond(event.task_id, event.prompt_id, {"approve": True})

The same with ``SyncHitlClient``: ``for event in client.stream("approval"): ...``.

For tools that read agents' answers themselves (the conformance harness):
:func:`agent_card_url` and :func:`parse_agent_card` find and decode an agent card, and
:func:`decoded_chunks` reads a body in bounded pieces (send ``ACCEPT_ENCODING``).
"""

from __future__ import annotations

from hitl_nb.errors import AnswerOutcomeUnknown, ExtensionNotDeclared, NoUsableInterface

from ._agent_card import Selection, agent_card_url, parse_agent_card
from ._answer import AnswerReceipt
from ._bindings import TaskPage
from ._client import HitlClient, prompt_of
from ._events import (
    ArtifactEvent,
    ClientEvent,
    MalformedPromptEvent,
    MessageEvent,
    PromptEvent,
    StatusEvent,
    TaskEvent,
)
from ._exchange import Exchange, TracedEvent
from ._follow import Reconnect
from ._gateway import (
    GatewayAnswer,
    GatewayClient,
    GatewayInfo,
    feed_of,
    find_gateway,
    gateway_at,
    kernel_server,
)
from ._gateway_feed import FeedUpdate, read_feed
from ._http import ACCEPT_ENCODING, HttpLimits, decoded_chunks
from ._sync_client import SyncHitlClient
from ._trace import Trace

__all__ = [
    "ACCEPT_ENCODING",
    "AnswerOutcomeUnknown",
    "AnswerReceipt",
    "ArtifactEvent",
    "ClientEvent",
    "Exchange",
    "ExtensionNotDeclared",
    "FeedUpdate",
    "GatewayAnswer",
    "GatewayClient",
    "GatewayInfo",
    "HitlClient",
    "HttpLimits",
    "MalformedPromptEvent",
    "MessageEvent",
    "NoUsableInterface",
    "PromptEvent",
    "Reconnect",
    "Selection",
    "StatusEvent",
    "SyncHitlClient",
    "TaskEvent",
    "TaskPage",
    "Trace",
    "TracedEvent",
    "agent_card_url",
    "decoded_chunks",
    "feed_of",
    "find_gateway",
    "gateway_at",
    "kernel_server",
    "parse_agent_card",
    "prompt_of",
    "read_feed",
]
