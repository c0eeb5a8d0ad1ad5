"""What a notebook cell calls: ask an agent, answer its prompts in cards, see the outcome.

::

    from hitl_nb.notebook import Conversation
    chat = Conversation.start(agent_url, {"scenario": "approval"})
    chat                                   # the prompt as a card with its form
    chat.answer({"approved": True})        # ... or answer from code (tests, nbval)

One concern per module, each class whole in its module:

- ``_card``: every card, from one skeleton (header, question, notes, status line, the
  record of outcomes, text): ``PromptCard``, ``GatewayCard`` (the inbox's, through the
  gateway) and ``QuestionCard`` (a plain-text question);
- ``_senders``: how an answer travels, straight to the agent, through the Jupyter
  server's responder gateway (S-3), or as text; each returns a verdict;
- ``_outcomes``: ``Outcome`` and every word a person reads about an answer (the 409
  told apart as expired, closed or conflict; the gateway's verdicts; a consensus' count);
- ``_conversation``: a task followed and answered from a cell, one method per event;
- ``_follower`` (a task, or an inbox's list, followed on the shared thread),
  ``_worker`` (that thread, and what stops the work on it), ``_link`` (a client and
  its loop; the client options a call takes);
- ``_gateway_link``: which responder gateway the cards answer through;
- ``_inbox`` (open prompts across tasks and agents, live), ``_inbox_sources`` (read from
  the gateway or the agents), ``_inbox_rows`` (its rows);
- ``_announce`` (every task a card shows is made known to the kernel's gateway, to be
  watched, and the cell that shows it to the Jupyter server: JupyterLab's prompts
  panel), ``_prompt_card`` (one prompt of the gateway as a card: what the panel draws);
- ``_responder`` (who is answering, S-3), ``_deadline`` and ``_clock`` (S-4 countdowns
  in CSS), ``_parts`` (what the agent says), ``_style`` (escaping, S-1, and theme
  colours), ``_trace_view`` (a client's wire trace as a timeline).
"""

from __future__ import annotations

from hitl_nb.errors import ClickNeeded, GatewayUnavailable, WaitTimedOut

from ._card import GatewayCard, PromptCard
from ._conversation import Conversation
from ._gateway_link import GatewayLink, gateway_link
from ._inbox import Inbox
from ._inbox_sources import InboxItem
from ._outcomes import Outcome, Status
from ._prompt_card import prompt_card
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
    "prompt_card",
]
