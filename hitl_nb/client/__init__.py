"""Talk to A2A agents about their hitl-prompt/v1 prompts.

:class:`HitlClient` is async; :class:`SyncHitlClient` blocks and is safe in notebook
cells. Streams yield the neutral events of :mod:`hitl_nb.client._events`::

    async with HitlClient("http://127.0.0.1:8000") as client:
        async for event in client.stream("approval"):
            if isinstance(event, PromptEvent):
                print(event.prompt)                       # plain text (S-1)
                await client.respond(event.task_id, event.prompt_id, {"approve": True})

The same with ``SyncHitlClient``: ``for event in client.stream("approval"): ...``.
"""

from __future__ import annotations

from hitl_nb.errors import AnswerOutcomeUnknown, ExtensionNotDeclared, NoUsableInterface

from ._agent_card import Selection
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
from ._follow import Reconnect
from ._http import HttpLimits
from ._sync_client import SyncHitlClient

__all__ = [
    "AnswerOutcomeUnknown",
    "AnswerReceipt",
    "ArtifactEvent",
    "ClientEvent",
    "ExtensionNotDeclared",
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
    "prompt_of",
]
