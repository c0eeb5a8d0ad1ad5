"""Benchmark-only: an a2a-sdk agent meeting the A2A TCK's system-under-test contract,
bare or with hitl_nb.agent, for ``run_tck.py --agent sdk,sdk-hitl`` to compare.

Both run the same executor, :class:`TckExecutor`, on the official SDK's request handler,
routes, in-memory task store and push-notification sender; ``--hitl`` adds exactly what
``hitl_nb.agent`` asks of an agent author: the extension declared on the card
(``HitlExtension.declare``), the executor wrapped (``HitlExtension.wrap``) and the
middleware in front of the routes. So any TCK result that differs between the two is the
extension's doing.

The contract (the TCK's ``docs/SUT_REQUIREMENTS.md`` and ``scenarios/*.feature``; the
same table as ``hitl_nb/mock_agent/_tck.py``): the ``messageId`` prefix of a message says
what the task does. A later message on a waiting task acts by its own prefix; one
without a TCK prefix is kept in the history and the task keeps waiting. A message that
follows no TCK prefix to a new task completes it, or, with ``--hitl``, asks a person
first (``await ask(...)``), so the agent is a real hitl-prompt/v1 agent too.

Run: ``python benchmarks/_sdk_tck_agent.py [--hitl] [--no-push]`` (prints its URL,
serves until killed). JSON-RPC at ``/`` (0.3 compatible), HTTP+JSON at ``/rest``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import httpx
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
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from google.protobuf.struct_pb2 import Value
from starlette.applications import Starlette

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hitl_nb.agent import HitlExtension, ask, serve  # noqa: E402

_TEXT_ARTIFACT = {
    "tck-stream-001": "Stream hello from TCK",
    "tck-stream-003": "Stream task lifecycle",
    "tck-stream-ordering-001": "Ordered output",
    "tck-stream-artifact-text": "Streamed text content",
}
APPROVAL = {
    "type": "object",
    "properties": {"approve": {"type": "boolean"}},
    "required": ["approve"],
    "additionalProperties": False,
}


def _streaming_timeout() -> float:
    try:
        value = float(os.environ.get("TCK_STREAMING_TIMEOUT", "2.0"))
    except ValueError:
        return 2.0
    return min(max(value, 0.1), 60.0) if value == value else 2.0


def _file() -> Part:
    return Part(raw=b"TCK file content\n", filename="output.txt", media_type="text/plain")


def _data(value: dict[str, Any]) -> Part:
    data = Value()
    data.struct_value.update(value)
    return Part(data=data)


class TckExecutor(AgentExecutor):
    """The TCK's contract, by ``messageId`` prefix (see the module)."""

    def __init__(self, *, asks: bool) -> None:
        self.asks = asks

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = context.task_id or "", context.context_id or ""
        if context.current_task is not None:
            context_id = context.current_task.context_id
        message = context.message
        message_id = message.message_id if message is not None else ""
        if message_id.startswith("tck-message-response"):
            reply = Message(
                role=Role.ROLE_AGENT,
                message_id=f"reply-{message_id}",
                context_id=context_id,
                parts=[Part(text="Direct message response")],
            )
            await event_queue.enqueue_event(reply)
            return
        updater = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is None:
            task = Task(
                id=task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
            )
            if message is not None:
                task.history.append(message)
            await event_queue.enqueue_event(task)
        elif not message_id.startswith(("tck-", "test-resubscribe-message-id")):
            # Kept in the history; the task keeps waiting.
            await updater.requires_input(updater.new_agent_message([Part(text="Waiting.")]))
            return
        await self._act(updater, message_id)

    async def _act(self, updater: TaskUpdater, message_id: str) -> None:
        say = updater.new_agent_message
        if message_id.startswith("test-resubscribe-message-id"):
            await updater.start_work()
            await asyncio.sleep(2 * _streaming_timeout())
            await updater.complete()
        elif message_id.startswith("tck-input-required"):
            await updater.requires_input(say([Part(text="Input required by the TCK.")]))
        elif message_id.startswith("tck-reject-task"):
            await updater.reject(say([Part(text="rejected")]))
        elif message_id.startswith("tck-stream-002"):
            await updater.complete()
        elif message_id.startswith(tuple(_TEXT_ARTIFACT)):
            text = next(t for p, t in _TEXT_ARTIFACT.items() if message_id.startswith(p))
            await updater.start_work()
            await updater.add_artifact([Part(text=text)], name="output")
            await updater.complete()
        elif message_id.startswith("tck-stream-artifact-chunked"):
            await updater.start_work()
            await updater.add_artifact(
                [Part(text="chunk-1 ")], artifact_id="chunked", name="output", last_chunk=False
            )
            await updater.add_artifact(
                [Part(text="chunk-2")], artifact_id="chunked", append=True, last_chunk=True
            )
            await updater.complete()
        elif message_id.startswith("tck-stream-artifact-file"):
            await updater.start_work()
            await updater.add_artifact([_file()], name="output")
            await updater.complete()
        elif message_id.startswith("tck-artifact-"):
            await updater.add_artifact([self._artifact_part(message_id)], name="output")
            await updater.complete()
        elif message_id.startswith("tck-complete-task"):
            await updater.complete(say([Part(text="Hello from TCK")]))
        elif message_id.startswith("tck-") or not self.asks:
            await updater.complete(say([Part(text="Done.")]))
        else:
            answer = await ask(updater, "Approve?", APPROVAL)
            done = "Approved." if answer["approve"] else "Not approved."
            await updater.complete(say([Part(text=done)]))

    @staticmethod
    def _artifact_part(message_id: str) -> Part:
        if message_id.startswith("tck-artifact-text"):
            return Part(text="Generated text content")
        if message_id.startswith("tck-artifact-file-url"):
            return Part(
                url="https://example.com/output.txt", filename="output.txt", media_type="text/plain"
            )
        if message_id.startswith("tck-artifact-file"):
            return _file()
        return _data({"key": "value", "count": 42})

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


def app(sock: socket.socket, *, hitl: bool, push: bool) -> tuple[Any, list[Any]]:
    """The agent's ASGI app and what to close when it stops."""
    base = "http://{}:{}".format(*sock.getsockname()[:2])
    card = AgentCard(
        name="a2a-sdk TCK agent" + (" with hitl-prompt/v1" if hitl else ""),
        description="The A2A TCK's system-under-test contract on the official a2a-sdk",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(
                url=base + "/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"
            ),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=push),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="tck", name="tck", description="the TCK's contract", tags=["tck"])],
    )
    store = InMemoryTaskStore()
    extension = HitlExtension(store) if hitl else None
    executor: AgentExecutor = TckExecutor(asks=hitl)
    if extension is not None:
        card = extension.declare(card)
        executor = extension.wrap(executor)
    extra: dict[str, Any] = {}
    http = httpx.AsyncClient(timeout=10, limits=httpx.Limits(max_keepalive_connections=0))
    if push:
        configs = InMemoryPushNotificationConfigStore()
        extra = {
            "push_config_store": configs,
            "push_sender": BasePushNotificationSender(http, configs),
        }
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=store, agent_card=card, **extra
    )
    routes = [
        *create_agent_card_routes(card),
        *create_rest_routes(handler, path_prefix="/rest"),
        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
    ]
    middleware = [extension.middleware()] if extension is not None else []
    stops = [handler.aclose, http.aclose] + ([extension.aclose] if extension else [])
    return Starlette(routes=routes, middleware=middleware), stops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hitl", action="store_true", help="with hitl_nb.agent")
    parser.add_argument("--no-push", action="store_true", help="no push notifications")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    sock = socket.create_server(("127.0.0.1", args.port))
    asgi, stops = app(sock, hitl=args.hitl, push=not args.no_push)
    served = serve(asgi, sock=sock, on_stop=stops)
    print(f"a2a-sdk TCK agent listening on {served.url}", flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    served.stop()


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    main()
