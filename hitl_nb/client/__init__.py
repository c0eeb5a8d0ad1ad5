"""Talk to A2A agents about their hitl-prompt/v1 prompts.

:class:`HitlClient` is async; :class:`SyncHitlClient` blocks and is safe in notebook
cells. Streams yield the neutral events of :mod:`hitl_nb.client._events`::

    async with HitlClient("http://127.0.0.1:8000") as client:
        async for event in client.stream("approval"):
            if isinstance(event, PromptEvent):
                print(event.prompt)                       # plain text (S-1)
                await client.respond(event.task_id, event.prompt_id, {"approve": True})

The same with ``SyncHitlClient``: ``for event in client.stream("approval"): ...``.

The delivery of an answer exactly once (:func:`answer_message`, :func:`send_answer`,
:func:`settle_answer`, the rule :func:`fate`) is shared with the responder gateway's
forward.

For tools that read agents' answers themselves (the conformance harness):
:func:`agent_card_url` and :func:`parse_agent_card` find and decode an agent card, and
:func:`decoded_chunks` reads a body in bounded pieces (send ``ACCEPT_ENCODING``).

Every httpx client of the package is made by :func:`http_client` (or
:func:`sync_http_client`): the process's one TLS context (:func:`tls_context`), the
timeouts and limits its maker says, no redirects unless asked.
"""

from __future__ import annotations

from hitl_nb.errors import AnswerOutcomeUnknown, ExtensionNotDeclared, NoUsableInterface

from ._agent_card import Selection, agent_card_url, parse_agent_card
from ._answer import (
    IN_FLIGHT,
    Answering,
    AnswerReceipt,
    Fate,
    How,
    answer_message,
    fate,
    send_answer,
    settle_answer,
)
from ._bindings import TaskPage
from ._client import HitlClient, prompt_of
from ._clients import http_client, sync_http_client
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
    find_prompt,
    gateway_at,
    kernel_server,
)
from ._gateway_feed import FeedUpdate, read_feed
from ._http import ACCEPT_ENCODING, HttpLimits, decoded_chunks
from ._sync_client import SyncHitlClient
from ._tls import tls_context
from ._trace import Trace

__all__ = [
    "ACCEPT_ENCODING",
    "IN_FLIGHT",
    "AnswerOutcomeUnknown",
    "AnswerReceipt",
    "Answering",
    "ArtifactEvent",
    "ClientEvent",
    "Exchange",
    "ExtensionNotDeclared",
    "Fate",
    "FeedUpdate",
    "GatewayAnswer",
    "GatewayClient",
    "GatewayInfo",
    "HitlClient",
    "How",
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
    "answer_message",
    "decoded_chunks",
    "fate",
    "feed_of",
    "find_gateway",
    "find_prompt",
    "gateway_at",
    "http_client",
    "kernel_server",
    "parse_agent_card",
    "prompt_of",
    "read_feed",
    "send_answer",
    "settle_answer",
    "sync_http_client",
    "tls_context",
]
