"""Benchmark-only: the framework agents ``run_tck.py`` runs the A2A TCK against, each
served by its hitl-nb bridge or by the framework's own A2A server.

``python benchmarks/_bridge_tck_agents.py NAME`` prints ``... listening on URL`` and
serves until killed. NAME is one of:

- ``pydantic``: a Pydantic AI agent on ``hitl_nb.agent.pydantic_ai.serve_agent``;
  ``pydantic-bare``: the same agent on fasta2a's ``agent_to_a2a`` (what Pydantic AI's
  ``agent.to_a2a()`` made before it moved to the fasta2a package);
- ``adk``: an ADK ``LlmAgent`` on ``hitl_nb.agent.adk.serve_agent``; ``adk-bare``: the
  same agent on ADK's own ``google.adk.a2a.utils.agent_to_a2a.to_a2a``;
- ``openai``: an OpenAI Agents SDK agent on ``hitl_nb.agent.openai_agents.serve_agent``;
- ``langgraph``: a LangGraph graph on ``hitl_nb.agent.langgraph.serve_graph``;
- ``maf``: a Microsoft Agent Framework agent on
  ``hitl_nb.agent.agent_framework.serve_agent``;
- ``sdk-bare``: the OpenAI Agents SDK, LangGraph and the Agent Framework (whose own A2A
  package has no input-required state) have no A2A server of their own to compare with, so
  their peer is a bare a2a-sdk agent (no hitl-nb) whose executor does what the models
  do, with the same treatment (``_sdk_tck_agent.py``'s ``sdk`` agent follows the TCK's
  whole table instead: the TCK's reference, not a like-for-like peer).

Each agent is driven by its framework's test model (no model service, nothing leaves the
machine): a Pydantic AI ``FunctionModel``, an ADK ``BaseLlm``, an Agents SDK ``Model``
and an Agent Framework chat client of this script's, or a graph node. They do what the
model decides from the message's text, like any agent: answer "Hello from TCK" (the task
completes), or call a tool that needs a person's approval (the task waits for input), or
think for a while first.

The TCK says what it wants by the ``messageId`` prefix (its ``docs/SUT_REQUIREMENTS.md``),
which no framework hands its model. So every agent here, bridge and bare server alike,
gets the same treatment: :class:`TckMarker`, an ASGI middleware in front of the whole
app, writes the two prefixes a model can act on into the start of the message's first
text part (``[tck-input-required] ...``: call the tool that needs approval;
``[test-resubscribe-message-id] ...``: take 2 x ``TCK_STREAMING_TIMEOUT`` before
answering, as the TCK requires); :func:`grpc_marker` does the same on gRPC. Every
other message, ``tck-*`` or not, gets the
model's plain answer. The rest of the TCK's table (artifacts of each kind, a direct
Message, a rejected task, streamed chunks) is not something these models do, on either
side.

With ``--grpc`` the bridges (``grpc_port=0``) and ``sdk-bare`` serve gRPC too. Their
cards then list the gRPC address as ``host:port`` (the lines marked GRPC_ADDRESS), as
the TCK's own reference agent does, rather than hitl-nb's ``grpc://host:port``: the TCK
hands the URL to ``grpc.insecure_channel`` unchanged, which refuses a scheme
("Misformatted domain name").
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
import threading
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: The messageId prefixes the models act on, written into the text as ``[prefix] ``.
MARKED = ("tck-input-required", "test-resubscribe-message-id")
ANSWER = "Hello from TCK"
AGENTS = (
    "pydantic",
    "pydantic-bare",
    "adk",
    "adk-bare",
    "openai",
    "langgraph",
    "maf",
    "sdk-bare",
)


def streaming_timeout() -> float:
    """``TCK_STREAMING_TIMEOUT`` (2.0 s by default), as the TCK reads it."""
    try:
        value = float(os.environ.get("TCK_STREAMING_TIMEOUT", "2.0"))
    except ValueError:
        return 2.0
    return min(max(value, 0.1), 60.0) if value == value else 2.0


def decide(text: str) -> str:
    """What the model does with a user's text: ``approve`` (call the tool that needs a
    person's approval), ``slow`` (answer after 2 x the TCK's streaming timeout) or
    ``answer``."""
    if text.startswith(f"[{MARKED[0]}]"):
        return "approve"
    if text.startswith(f"[{MARKED[1]}]"):
        return "slow"
    return "answer"


class TckMarker:
    """ASGI middleware: a message whose ``messageId`` starts with one of :data:`MARKED`
    gets ``[prefix] `` written before its first text part (JSON-RPC ``params.message``
    and HTTP+JSON ``message``); everything else passes untouched."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            event = await receive()
            if event["type"] != "http.request":
                break
            chunks.append(event.get("body", b""))
            if not event.get("more_body"):
                break
        body = _marked(b"".join(chunks))
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                event: dict[str, Any] = await receive()
                return event
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await self.app({**scope, "headers": headers}, replay, send)


def _marked(body: bytes) -> bytes:
    try:
        request = json.loads(body)
    except ValueError:
        return body
    if not isinstance(request, dict):
        return body
    params = request.get("params")
    message = (params if isinstance(params, dict) else request).get("message")
    if not isinstance(message, dict):
        return body
    prefix = next((p for p in MARKED if str(message.get("messageId", "")).startswith(p)), None)
    if prefix is None:
        return body
    for part in message.get("parts") or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            part["text"] = f"[{prefix}] {part['text']}"
            return json.dumps(request).encode()
    return body


def _mark_message(message: Any) -> None:
    """The gRPC side of :class:`TckMarker`: the same marker in a protobuf ``Message``."""
    prefix = next((p for p in MARKED if message.message_id.startswith(p)), None)
    if prefix is None:
        return
    for part in message.parts:
        if part.HasField("text"):
            part.text = f"[{prefix}] {part.text}"
            return


def grpc_marker() -> Any:
    """A ``grpc.aio`` server interceptor doing what :class:`TckMarker` does, for
    ``SendMessage`` and ``SendStreamingMessage``."""
    import grpc

    class GrpcMarker(grpc.aio.ServerInterceptor):  # type: ignore[misc]
        async def intercept_service(self, continuation: Any, details: Any) -> Any:
            handler = await continuation(details)
            if handler is None or not details.method.endswith(
                ("/SendMessage", "/SendStreamingMessage")
            ):
                return handler
            kinds = {
                "request_deserializer": handler.request_deserializer,
                "response_serializer": handler.response_serializer,
            }
            if handler.unary_unary is not None:
                unary = handler.unary_unary

                async def marked_unary(request: Any, context: Any) -> Any:
                    _mark_message(request.message)
                    return await unary(request, context)

                return grpc.unary_unary_rpc_method_handler(marked_unary, **kinds)
            stream = handler.unary_stream

            async def marked_stream(request: Any, context: Any) -> Any:
                _mark_message(request.message)
                async for item in stream(request, context):
                    yield item

            return grpc.unary_stream_rpc_method_handler(marked_stream, **kinds)

    return GrpcMarker()


# --- Pydantic AI ------------------------------------------------------------------------


def pydantic_agent() -> Any:
    """A Pydantic AI agent on a ``FunctionModel`` that does what :func:`decide` says."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if isinstance(last, ModelRequest) and returns:
            said = "; ".join(f"{p.tool_name}: {p.model_response_str()}" for p in returns)
            return ModelResponse(parts=[TextPart(said)])
        text = ""
        for part in last.parts:
            if isinstance(part, UserPromptPart):
                text = part.content if isinstance(part.content, str) else str(part.content)
        action = decide(text.strip())
        if action == "approve":
            args = {"build": 41, "env": "prod"}
            return ModelResponse(parts=[ToolCallPart("deploy", args, tool_call_id="call-deploy")])
        if action == "slow":
            await asyncio.sleep(2 * streaming_timeout())
        return ModelResponse(parts=[TextPart(ANSWER)])

    agent: Agent[None, str] = Agent(FunctionModel(model), output_type=str, name="tck-agent")

    @agent.tool_plain(requires_approval=True)
    def deploy(build: int, env: str) -> str:
        return f"deployed build {build} to {env}"

    return agent


# --- ADK --------------------------------------------------------------------------------


def adk_agent() -> Any:
    """An ADK ``LlmAgent`` on a ``BaseLlm`` that does what :func:`decide` says."""
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.tools.function_tool import FunctionTool
    from google.genai import types

    class TckLlm(BaseLlm):
        model: str = "tck"

        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            last = llm_request.contents[-1] if llm_request.contents else types.Content(parts=[])
            returned = [p.function_response for p in last.parts or [] if p.function_response]
            if returned:
                said = "; ".join(f"{r.name}: {json.dumps(r.response)}" for r in returned)
                yield LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(text=said)])
                )
                return
            action = decide("".join(p.text or "" for p in last.parts or []).strip())
            if action == "approve":
                call = types.FunctionCall(
                    name="deploy", args={"build": 41, "env": "prod"}, id="call-deploy"
                )
                parts = [types.Part(function_call=call)]
                yield LlmResponse(content=types.Content(role="model", parts=parts))
                return
            if action == "slow":
                await asyncio.sleep(2 * streaming_timeout())
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=ANSWER)]))

    def deploy(build: int, env: str) -> str:
        """Deploy a build."""
        return f"deployed build {build} to {env}"

    return LlmAgent(
        name="tck_agent", model=TckLlm(), tools=[FunctionTool(deploy, require_confirmation=True)]
    )


# --- OpenAI Agents SDK ------------------------------------------------------------------


def openai_agent() -> Any:
    """An Agents SDK agent on a ``Model`` that does what :func:`decide` says."""
    from agents import Agent, Usage, function_tool
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    def field(item: Any, name: str) -> Any:
        return item.get(name) if isinstance(item, dict) else getattr(item, name, None)

    def said(text: str) -> list[Any]:
        out = ResponseOutputText(type="output_text", text=text, annotations=[])
        message = ResponseOutputMessage(
            id="msg", type="message", role="assistant", status="completed", content=[out]
        )
        return [message]

    class TckModel(Model):
        async def get_response(
            self, system_instructions: str | None, input: Any, *args: Any, **kwargs: Any
        ) -> ModelResponse:
            items: list[Any] = (
                [{"role": "user", "content": input}] if isinstance(input, str) else input
            )
            last_user = max(i for i, item in enumerate(items) if field(item, "role") == "user")
            after = items[last_user + 1 :]
            outputs = [i for i in after if field(i, "type") == "function_call_output"]
            if outputs:
                text = "; ".join(str(field(o, "output")) for o in outputs)
                return ModelResponse(output=said(text), usage=Usage(), response_id=None)
            content = field(items[last_user], "content")
            action = decide(content.strip() if isinstance(content, str) else "")
            if action == "approve":
                call = ResponseFunctionToolCall(
                    type="function_call",
                    id="fc-deploy",
                    call_id="call-deploy",
                    name="deploy",
                    arguments=json.dumps({"build": 41, "env": "prod"}),
                )
                return ModelResponse(output=[call], usage=Usage(), response_id=None)
            if action == "slow":
                await asyncio.sleep(2 * streaming_timeout())
            return ModelResponse(output=said(ANSWER), usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            raise NotImplementedError("this model does not stream")

    @function_tool(needs_approval=True)
    def deploy(build: int, env: str) -> str:
        """Deploy a build."""
        return f"deployed build {build} to {env}"

    return Agent(name="tck agent", model=TckModel(), tools=[deploy])


# --- Microsoft Agent Framework --------------------------------------------------------


def maf_agent() -> Any:
    """An Agent Framework agent on a chat client that does what :func:`decide` says."""
    from agent_framework import (
        Agent,
        BaseChatClient,
        ChatResponse,
        Content,
        FunctionInvocationLayer,
        Message,
        tool,
    )

    class TckClient(FunctionInvocationLayer[Any], BaseChatClient[Any]):
        async def _inner_get_response(
            self, *, messages: Any, stream: bool, options: Any, **kwargs: Any
        ) -> Any:
            if stream:
                raise NotImplementedError("this model does not stream")
            last_user = max(
                i
                for i, m in enumerate(messages)
                if m.role == "user" and any(c.type == "text" for c in m.contents)
            )
            after = messages[last_user + 1 :]
            results = [c for m in after for c in m.contents if c.type == "function_result"]
            if results:
                said = "; ".join(f"deploy: {r.result}" for r in results)
                return ChatResponse(messages=[Message(role="assistant", contents=[said])])
            action = decide(messages[last_user].text.strip())
            if action == "approve":
                call = Content.from_function_call(
                    call_id="call-deploy",
                    name="deploy",
                    arguments=json.dumps({"build": 41, "env": "prod"}),
                )
                return ChatResponse(messages=[Message(role="assistant", contents=[call])])
            if action == "slow":
                await asyncio.sleep(2 * streaming_timeout())
            return ChatResponse(messages=[Message(role="assistant", contents=[ANSWER])])

    @tool(approval_mode="always_require")
    def deploy(build: int, env: str) -> str:
        """Deploy a build."""
        return f"deployed build {build} to {env}"

    return Agent(TckClient(), name="tck agent", tools=[deploy])


# --- LangGraph --------------------------------------------------------------------------


def langgraph_graph() -> Any:
    """A graph whose one node does what :func:`decide` says (``interrupt`` for approval)."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.types import interrupt

    async def respond(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1]
        content = last.content if isinstance(last.content, str) else ""
        action = decide(content.strip())
        if action == "approve":
            approval = interrupt(
                {
                    "question": "Deploy build 41 to prod?",
                    "response_schema": {
                        "type": "object",
                        "properties": {"approve": {"type": "boolean"}},
                        "required": ["approve"],
                    },
                }
            )
            return {"messages": [{"role": "assistant", "content": f"deploy: {approval}"}]}
        if action == "slow":
            await asyncio.sleep(2 * streaming_timeout())
        return {"messages": [{"role": "assistant", "content": ANSWER}]}

    builder = StateGraph(MessagesState)
    builder.add_node("respond", respond)
    builder.add_edge(START, "respond")
    builder.add_edge("respond", END)
    return builder.compile(checkpointer=InMemorySaver())


# --- a bare a2a-sdk agent, acting as the models do --------------------------------------


def sdk_bare_app(sock: socket.socket, *, grpc: bool = False) -> Any:
    """A bare a2a-sdk agent (no hitl-nb) whose executor does what :func:`decide` says with
    each message, a follow-up on a waiting task included: the like-for-like peer of the
    OpenAI Agents SDK, LangGraph and Agent Framework agents, which have no A2A server of
    their own to compare with. The
    same SDK pieces as ``hitl_nb.agent``'s ``agent_app``: request handler, in-memory task
    store, card, JSON-RPC and HTTP+JSON routes (``grpc``: the SDK's gRPC servicer too,
    behind :func:`grpc_marker`); no push notifications, as the bridges."""
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import (
        create_agent_card_routes,
        create_jsonrpc_routes,
        create_rest_routes,
    )
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
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

    class ModelLikeExecutor(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            task_id, context_id = context.task_id or "", context.context_id or ""
            if context.current_task is not None:
                context_id = context.current_task.context_id
            else:
                task = Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                )
                if context.message is not None:
                    task.history.append(context.message)
                await event_queue.enqueue_event(task)
            updater = TaskUpdater(event_queue, task_id, context_id)
            say = updater.new_agent_message
            action = decide(context.get_user_input().strip())
            if action == "approve":
                await updater.requires_input(say([Part(text="Approve the call to deploy?")]))
                return
            if action == "slow":
                await updater.start_work()
                await asyncio.sleep(2 * streaming_timeout())
            await updater.complete(say([Part(text=ANSWER)]))

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
            await updater.cancel()

    base = "http://{}:{}".format(*sock.getsockname()[:2])
    interfaces = [
        AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version="1.0"),
        AgentInterface(url=base + "/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"),
    ]
    grpc_port = 0
    if grpc:
        with socket.create_server(("127.0.0.1", 0)) as probe:
            grpc_port = probe.getsockname()[1]
        url = f"127.0.0.1:{grpc_port}"  # GRPC_ADDRESS
        interfaces.append(AgentInterface(url=url, protocol_binding="GRPC", protocol_version="1.0"))
    card = AgentCard(
        name="TCK agent (bare a2a-sdk)",
        description="A bare a2a-sdk agent that acts as the test models do",
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[AgentSkill(id="tck", name="tck", description="answers", tags=["tck"])],
    )
    store = InMemoryTaskStore()
    handler = DefaultRequestHandler(
        agent_executor=ModelLikeExecutor(), task_store=store, agent_card=card
    )
    routes = [
        *create_agent_card_routes(card),
        *create_rest_routes(handler, path_prefix="/rest"),
        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
    ]
    if not grpc:
        return Starlette(routes=routes)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        import grpc.aio
        from a2a.server.request_handlers import GrpcHandler
        from a2a.types import a2a_pb2_grpc

        server = grpc.aio.server(interceptors=[grpc_marker()])
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)  # type: ignore[no-untyped-call]
        server.add_insecure_port(f"127.0.0.1:{grpc_port}")
        await server.start()
        try:
            yield
        finally:
            await server.stop(2)

    return Starlette(routes=routes, lifespan=lifespan)


# --- serving ----------------------------------------------------------------------------


def _marked_serve() -> None:
    """Put :class:`TckMarker` in front of every app ``hitl_nb.agent`` serves, and
    :func:`grpc_marker` in front of its gRPC interceptors (the bridges build both inside
    ``agent_app``)."""
    from hitl_nb.agent import _app

    plain = getattr(_app, "serve")  # noqa: B009

    def serve(app: Any, **kwargs: Any) -> Any:
        return plain(TckMarker(app), **kwargs)

    setattr(_app, "serve", serve)  # noqa: B010
    listener = getattr(_app, "GrpcListener")  # noqa: B009

    def marked_listener(*args: Any, interceptors: Any = (), **kwargs: Any) -> Any:
        made = listener(*args, interceptors=[grpc_marker(), *interceptors], **kwargs)
        made.url = made.url.removeprefix("grpc://")  # GRPC_ADDRESS
        return made

    setattr(_app, "GrpcListener", marked_listener)  # noqa: B010


def serve_bridge(name: str, *, grpc: bool = False) -> str:
    """Start the hitl-nb bridge ``name`` on a thread (``grpc``: on gRPC too); its URL."""
    _marked_serve()
    grpc_port = 0 if grpc else None
    if name == "pydantic":
        from hitl_nb.agent.pydantic_ai import serve_agent

        served = serve_agent(pydantic_agent(), name="TCK agent (Pydantic AI)", grpc_port=grpc_port)
    elif name == "adk":
        from hitl_nb.agent.adk import serve_agent as serve_adk

        served = serve_adk(adk_agent(), name="TCK agent (ADK)", grpc_port=grpc_port)
    elif name == "openai":
        from agents import RunConfig

        from hitl_nb.agent.openai_agents import serve_agent as serve_openai

        served = serve_openai(
            openai_agent(),
            name="TCK agent (OpenAI Agents SDK)",
            run_config=RunConfig(tracing_disabled=True),
            grpc_port=grpc_port,
        )
    elif name == "maf":
        from hitl_nb.agent.agent_framework import serve_agent as serve_maf

        served = serve_maf(
            maf_agent(), name="TCK agent (Microsoft Agent Framework)", grpc_port=grpc_port
        )
    else:
        from hitl_nb.agent.langgraph import serve_graph

        served = serve_graph(langgraph_graph(), name="TCK agent (LangGraph)", grpc_port=grpc_port)
    return served.url


def bare_app(name: str, sock: socket.socket, *, grpc: bool = False) -> Any:
    """The framework's own A2A app for ``name`` (``pydantic-bare``, ``adk-bare``), or the
    bare a2a-sdk agent (``sdk-bare``)."""
    host, port = sock.getsockname()[:2]
    if name == "sdk-bare":
        return sdk_bare_app(sock, grpc=grpc)
    if name == "pydantic-bare":
        from fasta2a.pydantic_ai import agent_to_a2a  # type: ignore[import-untyped]

        return agent_to_a2a(pydantic_agent(), name="TCK agent", url=f"http://{host}:{port}")
    from google.adk.a2a.utils.agent_to_a2a import to_a2a

    return to_a2a(adk_agent(), host=host, port=port)


def serve_bare(name: str, *, grpc: bool = False) -> None:
    """Serve the bare app ``name`` in the foreground (uvicorn with its lifespan: both
    frameworks set up there) until SIGTERM or SIGINT."""
    import uvicorn

    sock = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(
        uvicorn.Config(
            TckMarker(bare_app(name, sock, grpc=grpc)), log_level="warning", lifespan="on"
        )
    )

    def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            threading.Event().wait(0.01)
        host, port = sock.getsockname()[:2]
        print(f"{name} listening on http://{host}:{port}", flush=True)

    threading.Thread(target=announce, daemon=True).start()
    asyncio.run(server.serve(sockets=[sock]))


def main(argv: list[str] | None = None) -> None:
    """Serve the agent named on the command line until killed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", choices=AGENTS)
    parser.add_argument(
        "--grpc", action="store_true", help="serve gRPC too (the bridges, sdk-bare)"
    )
    args = parser.parse_args(argv)
    if args.name.endswith("-bare"):
        serve_bare(args.name, grpc=args.grpc and args.name == "sdk-bare")
        return
    url = serve_bridge(args.name, grpc=args.grpc)
    print(f"{args.name} listening on {url}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()


if __name__ == "__main__":
    main()
