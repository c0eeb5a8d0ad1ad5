"""What a notebook cell calls: ask an agent, answer its prompts in cards, see the outcome.

::

    from hitl_nb.notebook import Conversation
    chat = Conversation.start(agent_url, {"scenario": "approval"})
    chat                                   # the prompt as a card with its form
    chat.answer({"approved": True})        # ... or answer from code (tests, nbval)

One concern per module: ``_conversation`` (a task followed in the notebook;
``_conversation_events``, ``_conversation_gateway`` and ``_conversation_view`` are its
bases), ``_card`` (one prompt's card; its bases ``_card_send`` and ``_card_view``),
``_outcome`` (what became of an answer), ``_deadline`` (S-4),
``_responder`` (who is answering, S-3), ``_style`` (escaping and theme colours),
``_trace_view`` (a client's wire trace as a collapsible timeline), ``_inbox`` (open
prompts across tasks and agents, live: ``_inbox_sources`` reads them from the server's
gateway or the agents, ``_inbox_rows`` draws them, ``_inbox_follow`` looks again on
the shared thread, ``_inbox_card`` answers one through the gateway),
``_gateway_link`` and ``_via_gateway`` (cards answering through the Jupyter server's
responder gateway, S-3; ``_gateway_answer``: its reply in words, for both gateway cards).
"""

from __future__ import annotations

from hitl_nb.errors import ClickNeeded, GatewayUnavailable, WaitTimedOut

from ._card import PromptCard
from ._conversation import Conversation
from ._gateway_link import GatewayLink, gateway_link
from ._inbox import Inbox
from ._inbox_card import GatewayCard
from ._inbox_sources import InboxItem
from ._outcome import Outcome, Status
from ._trace_view import TraceView

__all__ = [
    "ClickNeeded",
    "Conversation",
    "GatewayCard",
    "GatewayLink",
    "GatewayUnavailable",
    "Inbox",
    "InboxItem",
    "Outcome",
    "PromptCard",
    "Status",
    "TraceView",
    "WaitTimedOut",
    "gateway_link",
]
