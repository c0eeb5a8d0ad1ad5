"""An agent on the official a2a-sdk with hitl_nb.agent: its executor ``await ask(...)``.

What an agent author writes with ``hitl-nb[agent]``: an ``AgentExecutor`` that asks one
approval question per task (two with ``two_questions``), the extension declared on the
card, the executor wrapped, the middleware in front of the SDK's routes. JSON-RPC at
``/`` (0.3 compatible), HTTP+JSON at ``/rest``; served on 127.0.0.1, port 0, from a
thread (``hitl_nb.agent.serve``). ``db`` names a SQLite file for the SDK's
``DatabaseTaskStore`` (a restart keeps the tasks); without it the store is in memory.
``executor.answers`` lists every payload the agent's own code received.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    Task,
    TaskState,
    TaskStatus,
)
from starlette.applications import Starlette

from hitl_nb.agent import GrpcListener, HitlExtension, Served, ask, serve

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["approved"],
    "properties": {
        "approved": {"type": "boolean", "title": "Approve"},
        "comment": {"type": "string", "maxLength": 1024},
        "copies": {"type": "integer", "minimum": 1, "maximum": 3, "default": 2},
    },
}


class ReleaseExecutor(AgentExecutor):
    """Asks ``question`` with ``schema`` (then, with ``two_questions``, for a release note
    in words) and completes with what it was told."""

    def __init__(
        self,
        *,
        two_questions: bool = False,
        question: str = "Approve the release? <b>v2</b>",
        schema: Any = SCHEMA,
        **ask_options: Any,
    ) -> None:
        self.two_questions = two_questions
        self.question = question
        self.schema = schema
        self.ask_options = ask_options
        self.answers: list[dict[str, Any]] = []
        self.runs = 0

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.runs += 1
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=context.task_id or "",
                    context_id=context.context_id or "",
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                )
            )
        await updater.start_work()
        answer = await ask(updater, self.question, self.schema, **self.ask_options)
        self.answers.append(answer)
        words = "approved" if answer.get("approved") else "rejected"
        if self.two_questions:
            note = await ask(updater, "Write the release note")  # answered in words
            self.answers.append(note)
            words += f": {note['text']}"
        await updater.complete(updater.new_agent_message([Part(text=words)]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


def card(base: str, hitl: HitlExtension, grpc_url: str | None = None) -> AgentCard:
    grpc = [AgentInterface(url=grpc_url, protocol_binding="GRPC", protocol_version="1.0")]
    return hitl.declare(
        AgentCard(
            name="release agent",
            description="asks a person before each release (a2a-sdk + hitl_nb.agent)",
            version="1.0.0",
            supported_interfaces=[
                AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version="1.0"),
                AgentInterface(
                    url=base + "/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"
                ),
                *(grpc if grpc_url is not None else []),
            ],
            capabilities=AgentCapabilities(streaming=True),
            default_input_modes=["text/plain", "application/json"],
            default_output_modes=["text/plain"],
            skills=[
                AgentSkill(id="release", name="release", description="releases", tags=["release"])
            ],
        )
    )


class AskAgent:
    """``with AskAgent() as agent: agent.url``; ``agent.executor.answers``."""

    def __init__(
        self,
        *,
        db: Path | None = None,
        two_questions: bool = False,
        executor: ReleaseExecutor | None = None,
        grpc: bool = False,
        grpc_interceptor: bool = True,
        grpc_outer: Sequence[Any] = (),
    ) -> None:
        self.db = db
        #: Serve gRPC too; ``grpc_interceptor=False`` leaves the extension's interceptor out
        #: (a misconfigured agent: right on the JSON bindings, wrong on gRPC).
        self.grpc = grpc
        self.grpc_interceptor = grpc_interceptor
        #: ``grpc.aio`` interceptors in front of the extension's (the tests' faults).
        self.grpc_outer = list(grpc_outer)
        self.executor = executor or ReleaseExecutor(two_questions=two_questions)
        self.served: Served | None = None
        self.url = ""
        self.store: TaskStore | None = None

    def _store(self) -> TaskStore:
        if self.db is None:
            return InMemoryTaskStore()
        from a2a.server.tasks import DatabaseTaskStore
        from sqlalchemy.ext.asyncio import create_async_engine

        return DatabaseTaskStore(create_async_engine(f"sqlite+aiosqlite:///{self.db}"))

    def __enter__(self) -> AskAgent:
        import socket

        # The card names the URL, so the socket is bound first.
        sock = socket.create_server(("127.0.0.1", 0))
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self.store = self._store()
        hitl = HitlExtension(self.store)
        listener = None
        if self.grpc:
            interceptors = [*self.grpc_outer]
            interceptors += [hitl.grpc_interceptor()] if self.grpc_interceptor else []
            listener = GrpcListener(
                "127.0.0.1", 0, interceptors=interceptors, max_message=hitl.max_body
            )
        agent_card = card(base, hitl, listener.url if listener is not None else None)
        handler = DefaultRequestHandler(
            agent_executor=hitl.wrap(self.executor), task_store=self.store, agent_card=agent_card
        )
        routes = [
            *create_agent_card_routes(agent_card),
            *create_rest_routes(handler, path_prefix="/rest"),
            *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
        ]
        app = Starlette(routes=routes, middleware=[hitl.middleware()])
        stops = [hitl.aclose, handler.aclose]
        if self.db is not None:
            stops.append(self._dispose)
        if listener is not None:
            from a2a.server.request_handlers import GrpcHandler

            listener.add_a2a(GrpcHandler(handler))
        self.served = serve(app, sock=sock, on_stop=stops, grpc=listener)
        self.url = self.served.url
        return self

    async def _dispose(self) -> None:
        engine = getattr(self.store, "engine", None)
        if engine is not None:
            await engine.dispose()

    def __exit__(self, *exc: object) -> None:
        assert self.served is not None
        self.served.stop()
