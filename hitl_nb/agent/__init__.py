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

# The public table (see hitl_nb._lazy): each name loads its module on first use, so the SDK
# (protobuf, pydantic) and LangGraph load with the first name used, not with the package.
if typing.TYPE_CHECKING:
    from ._asgi import HitlMiddleware as HitlMiddleware
    from ._ask import ask as ask
    from ._executor import HitlExecutor as HitlExecutor
    from ._extension import HitlExtension as HitlExtension
    from ._grpc import HitlGrpcInterceptor as HitlGrpcInterceptor
    from ._prompts import TEXT_SCHEMA as TEXT_SCHEMA
    from ._serve import GrpcListener as GrpcListener
    from ._serve import Served as Served
    from ._serve import serve as serve

__getattr__, __dir__, __all__ = _lazy.attach_table(__name__, __file__, submodules=("langgraph",))
