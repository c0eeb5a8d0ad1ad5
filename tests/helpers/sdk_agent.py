"""An agent built with the official a2a-sdk server that implements hitl-prompt/v1.

What an agent author would write with a2a-sdk 1.3.0: an ``AgentExecutor`` that moves a
task to INPUT_REQUIRED with the envelope in the status message metadata (only when the
request activated the extension), and finishes it when answered. Answers are checked
by an ASGI middleware in front of the SDK's routes, *before* the executor runs (an
executor that raised would fail the task): unknown or answered prompt -> -32010 / 409,
invalid payload -> -32011 / 422 with ``validation_errors``. Like every a2a-sdk agent it
does not echo ``A2A-Extensions``. JSON-RPC at ``/rpc`` (0.3 compatible), HTTP+JSON at
``/rest``; uvicorn serves it from a thread on 127.0.0.1, port 0.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import httpx
import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    Part,
    Task,
    TaskState,
    TaskStatus,
)
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette

from hitl_nb.errors import HITL_ERROR_DOMAIN
from hitl_nb.spec import EXTENSION_URI, RESPONSE_KEY
from hitl_nb.validation import validate_payload
from tests.helpers.until import until

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["approved"],
    "properties": {
        "approved": {"type": "boolean"},
        "comment": {"type": "string", "maxLength": 1024},
        "copies": {"type": "integer", "minimum": 1, "maximum": 3, "default": 2},
    },
}

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class Prompts:
    """Open prompts by id, with their task and schema (shared by executor and checker)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open: dict[str, tuple[str, dict[str, Any]]] = {}
        self.executed_answers = 0
        #: (taskId, contextId) of every answer that reached the agent, as sent.
        self.answers_seen: list[tuple[Any, Any]] = []


class HitlExecutor(AgentExecutor):
    """Asks one approval question per task; completes the task when it is answered."""

    def __init__(self, prompts: Prompts) -> None:
        self.prompts = prompts

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = context.task_id or "", context.context_id or ""
        updater = TaskUpdater(event_queue, task_id, context_id)
        message = context.message
        answer = None
        if message is not None and message.HasField("metadata"):
            meta = MessageToDict(message.metadata)  # Struct -> plain JSON
            answer = meta.get(RESPONSE_KEY)
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                )
            )
        else:
            # Every turn starts with the Task (A2A 1.0 §3.1.2), as SDK users write it:
            # the stored one, still INPUT_REQUIRED and carrying the prompt answered now.
            await event_queue.enqueue_event(context.current_task)
        if answer is None:
            prompt_id = str(uuid.uuid4())
            ask = updater.new_agent_message([Part(text="Approve the release?")])
            if EXTENSION_URI in context.requested_extensions:
                envelope = {
                    "prompt_id": prompt_id,
                    "prompt": "Approve the release? <script>alert(1)</script>",
                    "response_schema": SCHEMA,
                }
                ask.metadata.update({EXTENSION_URI: envelope})
                with self.prompts.lock:
                    self.prompts.open[prompt_id] = (task_id, SCHEMA)
            await updater.requires_input(ask)
            return
        with self.prompts.lock:
            self.prompts.executed_answers += 1
        verdict = "approved" if answer["payload"].get("approved") else "rejected"
        await updater.complete(updater.new_agent_message([Part(text=verdict)]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Cancel by moving the task to CANCELED."""
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


class AnswerChecker:
    """ASGI middleware: reject bad answers before the SDK (and the executor) sees them."""

    def __init__(self, app: Any, prompts: Prompts) -> None:
        self.app = app
        self.prompts = prompts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        rejection = self._check(scope["path"], body)
        if rejection is not None:
            status, payload = rejection
            raw = json.dumps(payload).encode()
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": raw})
            return
        sent = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _check(self, path: str, body: bytes) -> tuple[int, dict[str, Any]] | None:
        try:
            request = json.loads(body)
        except ValueError:
            return None
        rpc = path.startswith("/rpc")
        params = request.get("params", {}) if rpc else request
        message = params.get("message", {}) if isinstance(params, dict) else {}
        answer = (message.get("metadata") or {}).get(RESPONSE_KEY)
        if not isinstance(answer, dict):
            return None
        req_id = request.get("id") if rpc else None
        prompt_id = answer.get("prompt_id")
        with self.prompts.lock:
            self.prompts.answers_seen.append((message.get("taskId"), message.get("contextId")))
            entry = self.prompts.open.get(prompt_id) if isinstance(prompt_id, str) else None
            if entry is None or entry[0] != message.get("taskId"):
                if rpc:
                    error = {"code": -32010, "message": "hitl_already_answered_or_unknown"}
                    return 200, {"jsonrpc": "2.0", "id": req_id, "error": error}
                return 409, {"error": {"code": 409, "message": "hitl_already_answered_or_unknown"}}
            issues = [i.to_json() for i in validate_payload(entry[1], answer.get("payload"))]
            if issues:
                data = {"extension": EXTENSION_URI, "prompt_id": prompt_id}
                data["validation_errors"] = issues  # type: ignore[assignment]
                if rpc:
                    error = {"code": -32011, "message": "hitl_response_invalid", "data": data}
                    return 200, {"jsonrpc": "2.0", "id": req_id, "error": error}
                details = [
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "HITL_RESPONSE_INVALID",
                        "domain": HITL_ERROR_DOMAIN,
                        "metadata": {"validation_errors": json.dumps(issues)},
                    }
                ]
                return 422, {
                    "error": {"code": 422, "message": "hitl_response_invalid", "details": details}
                }
            del self.prompts.open[prompt_id]  # exactly once: accepted now
        return None


def _card(base: str, push: bool = False) -> AgentCard:
    return AgentCard(
        name="sdk hitl agent",
        description="a2a-sdk agent with hitl-prompt/v1",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=base + "/rpc", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(
                url=base + "/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"
            ),
        ],
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=push,
            extensions=[AgentExtension(uri=EXTENSION_URI, required=False)],
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
    )


class SdkAgent:
    """Run the agent in a thread: ``with SdkAgent() as agent: agent.url``.

    ``push=True``: the SDK's own push notifications (its in-memory configuration store
    and ``BasePushNotificationSender``), advertised on the card.
    """

    def __init__(self, *, push: bool = False) -> None:
        self.push = push
        self.prompts = Prompts()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    def _app(self, base: str) -> Any:
        card = _card(base, self.push)
        push: dict[str, Any] = {}
        if self.push:
            store = InMemoryPushNotificationConfigStore()
            push = {
                "push_config_store": store,
                # No keep-alive: every connection is closed after its POST, so none is
                # left open when the agent's loop stops.
                "push_sender": BasePushNotificationSender(
                    httpx.AsyncClient(timeout=10, limits=httpx.Limits(max_keepalive_connections=0)),
                    store,
                ),
            }
        handler = DefaultRequestHandler(
            agent_executor=HitlExecutor(self.prompts),
            task_store=InMemoryTaskStore(),
            agent_card=card,
            **push,
        )
        routes = [
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, "/rpc", enable_v0_3_compat=True),
            *create_rest_routes(handler, path_prefix="/rest"),
        ]
        return AnswerChecker(Starlette(routes=routes), self.prompts)

    def __enter__(self) -> SdkAgent:
        import socket

        sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(self._app(self.url), log_level="error", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        server, thread = self._server, self._thread

        def started() -> bool:
            assert thread.is_alive() or server.started, "the a2a-sdk agent's thread ended"
            return bool(server.started)

        until(started, timeout=30, what="the a2a-sdk agent to start", interval=0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.should_exit = True
        self._thread.join(10)
