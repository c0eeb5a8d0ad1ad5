"""``HitlExtension``: hitl-prompt/v1 for one agent built on a2a-sdk, its parts composed.

One object per agent holds the prompts asked (:class:`~hitl_nb.agent._prompts.PromptBook`)
and hands out the three places the extension lives:

- :meth:`HitlExtension.declare`: the AgentCard entry (``required: false``, ``params: {}``);
- :meth:`HitlExtension.wrap`: the executor whose ``execute`` may ``await ask(...)``;
- :meth:`HitlExtension.asgi` / :meth:`HitlExtension.middleware`: the ASGI middleware in
  front of the SDK's routes (activation and echo, answers checked before the executor,
  no envelope without activation, the card's entry written out whole, a stream on an
  existing task opened with the Task);
- :meth:`HitlExtension.grpc_interceptor`: the same in front of the SDK's gRPC servicer
  (``hitl-nb[grpc]``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from a2a.server.agent_execution import AgentExecutor
from a2a.server.context import ServerCallContext
from a2a.server.routes import DefaultServerCallContextBuilder, ServerCallContextBuilder
from a2a.server.tasks import TaskStore
from a2a.types import AgentCard, AgentExtension

from hitl_nb.spec import EXTENSION_URI, agent_card_extension

from ._asgi import MAX_BODY_BYTES, App, HitlMiddleware, Scope, TaskSnapshot
from ._executor import HitlExecutor
from ._gate import Gate, TaskReader
from ._prompts import PromptBook, StoredTask
from ._stored import stored_task, task_json

if TYPE_CHECKING:
    from a2a.server.request_handlers.grpc_handler import GrpcServerCallContextBuilder
    from starlette.middleware import Middleware

    from ._grpc import HitlGrpcInterceptor

__all__ = ["HitlExtension"]


class HitlExtension:
    """hitl-prompt/v1 for one a2a-sdk agent.

    ``task_store`` is the store the SDK's request handler uses (the gate reads each
    answered task from it, so a prompt outlives a restart with a database store);
    ``context_builder`` the ``ServerCallContextBuilder`` given to the routes, if any (an
    owner-scoped store is read as the request's user); ``max_body`` bounds the request
    bodies the middleware reads whole (bytes).

    ::

        hitl = HitlExtension(store)
        card = hitl.declare(AgentCard(...))
        handler = DefaultRequestHandler(hitl.wrap(MyExecutor()), store, card)
        app = Starlette(routes=[...], middleware=[hitl.middleware()])
    """

    def __init__(
        self,
        task_store: TaskStore | Any,
        *,
        context_builder: ServerCallContextBuilder | None = None,
        max_body: int = MAX_BODY_BYTES,
    ) -> None:
        self.task_store = task_store
        self.context_builder = context_builder or DefaultServerCallContextBuilder()
        self.max_body = max_body
        self.book = PromptBook()
        self.gate = Gate(self.book)
        self._executors: list[HitlExecutor] = []

    def declare(self, card: AgentCard, description: str | None = None) -> AgentCard:
        """A copy of ``card`` declaring hitl-prompt/v1 in ``capabilities.extensions``
        (§Activation; an entry already there is replaced). The card the SDK serves
        still leaves ``"required": false`` out; the middleware writes it in."""
        entry = agent_card_extension(description)
        out = AgentCard()
        out.CopyFrom(card)
        kept = [e for e in out.capabilities.extensions if e.uri != EXTENSION_URI]
        del out.capabilities.extensions[:]
        out.capabilities.extensions.extend(kept)
        extension = AgentExtension(uri=EXTENSION_URI, description=entry["description"])
        extension.params.SetInParent()  # "params": {} written out (proto3 drops defaults)
        out.capabilities.extensions.append(extension)
        return out

    def wrap(self, executor: AgentExecutor) -> HitlExecutor:
        """``executor`` wrapped so that its ``execute`` can ``await ask(...)``."""
        wrapped = HitlExecutor(executor, self.book)
        self._executors.append(wrapped)
        return wrapped

    def asgi(self, app: App) -> HitlMiddleware:
        """``app`` (the Starlette app with the SDK's routes) behind the middleware."""
        return HitlMiddleware(app, **self._parts())

    def middleware(self) -> Middleware:
        """The middleware, for ``Starlette(..., middleware=[hitl.middleware()])``."""
        from starlette.middleware import Middleware

        return Middleware(HitlMiddleware, **self._parts())

    def grpc_interceptor(
        self, context_builder: GrpcServerCallContextBuilder | None = None
    ) -> HitlGrpcInterceptor:
        """The ``grpc.aio`` server interceptor, for
        ``grpc.aio.server(interceptors=[hitl.grpc_interceptor()])`` in front of the SDK's
        ``GrpcHandler`` (``context_builder``: the one given to that handler, if any)."""
        from ._grpc import HitlGrpcInterceptor

        return HitlGrpcInterceptor(
            gate=self.gate, task_store=self.task_store, context_builder=context_builder
        )

    def _parts(self) -> dict[str, Any]:
        return {
            "gate": self.gate,
            "reader": self.reader,
            "snapshot": self.snapshot,
            "max_body": self.max_body,
        }

    def reader(self, scope: Scope) -> TaskReader:
        """How the gate reads a task for one request: the store, as that request's user."""
        context = self._context(scope)

        async def read(task_id: str) -> StoredTask | None:
            return stored_task(await self.task_store.get(task_id, context))

        return read

    def snapshot(self, scope: Scope) -> TaskSnapshot:
        """How the middleware reads a task whole for one request (to open a stream on an
        existing task with it): the store, as that request's user, on the wire."""
        context = self._context(scope)

        async def read(
            task_id: str, version: str, history_length: int | None
        ) -> dict[str, Any] | None:
            return task_json(await self.task_store.get(task_id, context), version, history_length)

        return read

    def _context(self, scope: Scope) -> ServerCallContext:
        from starlette.requests import Request

        return self.context_builder.build(Request(scope))

    async def aclose(self) -> None:
        """Stop every executor body still waiting for an answer (at server shutdown)."""
        for executor in self._executors:
            await executor.aclose()
