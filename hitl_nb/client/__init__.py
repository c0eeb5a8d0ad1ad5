"""Talk to A2A agents about their hitl-prompt/v1 prompts.

:class:`HitlClient` is async; :class:`SyncHitlClient` blocks and is safe in notebook
cells. Streams yield the neutral events of :mod:`hitl_nb.client.events`.
"""

from __future__ import annotations

from ._answer import AnswerOutcomeUnknown
from ._bindings import TaskPage
from ._client import HitlClient, prompt_of
from .card import ExtensionNotDeclared, NoUsableInterface, Selection
from .events import (
    ArtifactEvent,
    ClientEvent,
    MalformedPromptEvent,
    MessageEvent,
    PromptEvent,
    StatusEvent,
    TaskEvent,
)
from .sync import SyncHitlClient

__all__ = [
    "AnswerOutcomeUnknown",
    "ArtifactEvent",
    "ClientEvent",
    "ExtensionNotDeclared",
    "HitlClient",
    "MalformedPromptEvent",
    "MessageEvent",
    "NoUsableInterface",
    "PromptEvent",
    "Selection",
    "StatusEvent",
    "SyncHitlClient",
    "TaskEvent",
    "TaskPage",
    "prompt_of",
]
