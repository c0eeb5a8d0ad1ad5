"""hitl-prompt/v1 for agents built on the official A2A SDK (``pip install hitl-nb[agent]``).

An a2a-sdk 1.x agent gets the extension in three lines, and its executor asks a person
with ``await ask(...)``::

    from hitl_nb.agent import HitlExtension, ask

    class Release(AgentExecutor):
        async def execute(self, context, event_queue):
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            ...
            answer = await ask(updater, "Approve the release?", APPROVAL_SCHEMA)
            ...

    hitl = HitlExtension(store)
    card = hitl.declare(AgentCard(...))                       # the card's entry
    handler = DefaultRequestHandler(hitl.wrap(Release()), store, card)
    app = Starlette(routes=[...], middleware=[hitl.middleware()])

What the agent then does, on JSON-RPC (1.0 and 0.3) and HTTP+JSON alike: the card
declares the extension (``required: false``, ``params: {}``); a request activates it with
``A2A-Extensions`` and the response echoes it; ``ask`` emits the envelope on
INPUT_REQUIRED (a fresh UUID ``prompt_id``, checked strictly first) and returns the
validated payload; answers are checked before the executor sees them (409 / -32010,
422 / -32011 with ``validation_errors``, the task staying INPUT_REQUIRED); a client that
did not activate the extension sees the question as plain text. The prompt is in the
SDK's task store, so a client that reconnects is shown it again, and so is a client of an
agent restarted on a database store. ``hitl_nb.agent.langgraph`` serves a LangGraph graph
the same way. ``docs/agent.md`` has the whole story, with what the SDK lacks.
"""

import typing

from .. import _lazy

if typing.TYPE_CHECKING:  # at run time each name loads its module on first use (PEP 562)
    from ._asgi import HitlMiddleware
    from ._ask import ask
    from ._executor import HitlExecutor
    from ._extension import HitlExtension
    from ._prompts import TEXT_SCHEMA
    from ._serve import Served, serve

__all__ = [
    "TEXT_SCHEMA",
    "HitlExecutor",
    "HitlExtension",
    "HitlMiddleware",
    "Served",
    "ask",
    "serve",
]

# Lazy: the SDK (protobuf, pydantic) loads with the first name used, not with the package.
__getattr__, __dir__ = _lazy.attach(
    __name__,
    {
        "TEXT_SCHEMA": "_prompts",
        "HitlExecutor": "_executor",
        "HitlExtension": "_extension",
        "HitlMiddleware": "_asgi",
        "Served": "_serve",
        "ask": "_ask",
        "serve": "_serve",
    },
    submodules=("langgraph",),
)
