"""Benchmark-only: a minimal a2a-sdk + uvicorn agent doing what the mock agent's
``approval`` scenario does, for bench_resume.py to compare against.

A new message moves the task to INPUT_REQUIRED with a hitl-prompt/v1 envelope; an
answer (``hitl_response_for`` whose payload validates) moves it to WORKING, then
COMPLETED. Only valid answers are sent by the benchmark, so no rejection path is built.
``--graph``: the same done by hand around ``_hitl_bench_agents.graph()`` (the LangGraph
graph bench_agent.py serves with ``serve_graph``): a new task runs it to its interrupt,
whose envelope goes out as is; an answer resumes it by interrupt id after WORKING, then
completes. The peer that shows what LangGraph costs an a2a-sdk agent without hitl-nb.
``--pydantic-ai``: likewise around ``_hitl_bench_agents.pydantic_agent()``: a new task
runs the agent to its deferred call, whose envelope goes out by hand (its message history
kept in memory, as JSON); an answer, after WORKING, runs it again with the history and
``ToolApproved``, then completes.
``--openai-agents``: likewise around ``_hitl_bench_agents.openai_agent()``: a new task
runs it to its interruption, whose envelope goes out by hand (its ``RunState`` kept in
memory as ``to_json()``, as the bridge keeps it); an answer, after WORKING, reads the
state back (``RunState.from_json``), approves the call and runs it again, then completes.
``--adk``: likewise around ``_hitl_bench_agents.adk_agent()``'s runner: a new task runs
it to its ``adk_request_confirmation`` call, whose envelope goes out by hand; an answer,
after WORKING, runs it again with ADK's ``ToolConfirmation`` as that call's function
response, then completes.
``--agent-framework``: likewise around ``_hitl_bench_agents.maf_agent()``: a new task runs
it in a new ``AgentSession`` to its ``function_approval_request``, whose envelope goes out
by hand (the session kept in memory as ``to_dict()`` JSON, with the request, as the bridge
keeps it); an answer, after WORKING, reads the session back (``AgentSession.from_dict``)
and runs it again with the request's ``to_function_approval_response(True)``, then
completes.
Run: ``python benchmarks/_sdk_bench_agent.py [--graph | --pydantic-ai | --openai-agents |
--adk | --agent-framework]`` (prints its URL, serves until killed).
"""

from __future__ import annotations

import socket
import sys
import uuid
from pathlib import Path
from typing import Any

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    Part,
    Task,
    TaskState,
    TaskStatus,
)
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hitl_nb.spec import EXTENSION_URI, RESPONSE_KEY  # noqa: E402
from hitl_nb.validation import validate_payload  # noqa: E402

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["approve"],
    "properties": {"approve": {"type": "boolean"}, "comment": {"type": "string"}},
}


def answer_in(context: RequestContext) -> dict[str, Any] | None:
    """The extension's answer a request's message carries, if any (no checks)."""
    message = context.message
    if message is None or not message.HasField("metadata"):
        return None
    answer: dict[str, Any] | None = MessageToDict(message.metadata).get(RESPONSE_KEY)
    return answer


def submitted(context: RequestContext) -> Task:
    """The Task a new request's executor enqueues first (the SDK requires one)."""
    return Task(
        id=context.task_id or "",
        context_id=context.context_id or "",
        status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
    )


async def ask_by_hand(updater: TaskUpdater, text: str, schema: Any) -> None:
    """INPUT_REQUIRED with an envelope written by hand: a new prompt_id, ``text``,
    ``schema``."""
    ask = updater.new_agent_message([Part(text=text)])
    envelope = {"prompt_id": str(uuid.uuid4()), "prompt": text, "response_schema": schema}
    ask.metadata.update({EXTENSION_URI: envelope})
    await updater.requires_input(ask)


class ApprovalExecutor(AgentExecutor):
    """One approval prompt per task; completes once answered."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        answer = answer_in(context)
        if context.current_task is None:
            await event_queue.enqueue_event(submitted(context))
        if answer is None:
            await ask_by_hand(updater, "Approve?", SCHEMA)
            return
        if validate_payload(SCHEMA, answer.get("payload")):
            await updater.requires_input(updater.new_agent_message([Part(text="invalid")]))
            return
        await updater.start_work()
        await updater.complete(updater.new_agent_message([Part(text="Approved.")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


class GraphApprovalExecutor(ApprovalExecutor):
    """The bench graph by hand: run to its interrupt and ask; resume with the answer."""

    def __init__(self) -> None:
        from benchmarks._hitl_bench_agents import graph

        self.graph = graph()
        self.pending: dict[str, str] = {}  # task id -> the interrupt it waits on

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        from langgraph.types import Command

        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        config = {"configurable": {"thread_id": context.task_id}}
        answer = answer_in(context)
        given: Any = {}
        if context.current_task is None:
            await event_queue.enqueue_event(submitted(context))
        elif answer is not None:
            await updater.start_work()
            given = Command(resume={self.pending.pop(context.task_id or ""): answer["payload"]})
        raised: list[Any] = []
        async for chunk in self.graph.astream(given, config, stream_mode="updates"):
            raised.extend(chunk.get("__interrupt__", ()))
        if not raised:
            await updater.complete(updater.new_agent_message([Part(text="Approved.")]))
            return
        self.pending[context.task_id or ""] = raised[0].id
        await ask_by_hand(updater, str(raised[0].value), raised[0].response_schema)


class PydanticApprovalExecutor(ApprovalExecutor):
    """The bench Pydantic AI agent by hand: run it to its deferred call and ask; on the
    answer, WORKING, then run it again with its message history and the approval."""

    def __init__(self) -> None:
        from benchmarks._hitl_bench_agents import pydantic_agent

        self.agent = pydantic_agent()
        self.paused: dict[str, Any] = {}  # task id -> (messages, the call it waits on)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        answer = answer_in(context)
        output_type = [str, DeferredToolRequests]
        if context.current_task is None:
            await event_queue.enqueue_event(submitted(context))
            run = await self.agent.run(context.get_user_input(), output_type=output_type)
        else:
            assert answer is not None
            await updater.start_work()
            kept, call_id = self.paused.pop(context.task_id or "")
            results = DeferredToolResults(
                approvals={call_id: ToolApproved()}, metadata={call_id: answer["payload"]}
            )
            run = await self.agent.run(
                message_history=ModelMessagesTypeAdapter.validate_json(kept),
                deferred_tool_results=results,
                output_type=output_type,
            )
        if not isinstance(run.output, DeferredToolRequests):
            await updater.complete(updater.new_agent_message([Part(text=str(run.output))]))
            return
        call = run.output.approvals[0]
        messages = ModelMessagesTypeAdapter.dump_json(run.all_messages())
        self.paused[context.task_id or ""] = (messages, call.tool_call_id)
        await ask_by_hand(updater, "Approve?", SCHEMA)


class OpenAIApprovalExecutor(ApprovalExecutor):
    """The bench OpenAI Agents SDK agent by hand: run it to its interruption and ask; on
    the answer, WORKING, then read its RunState back, approve the call and run it again."""

    def __init__(self) -> None:
        from benchmarks._hitl_bench_agents import openai_agent, openai_run_config

        self.agent = openai_agent()
        self.run_config = openai_run_config()
        self.paused: dict[str, Any] = {}  # task id -> the RunState's JSON

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        from agents import Runner, RunState

        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        if context.current_task is None:
            await event_queue.enqueue_event(submitted(context))
            run = await Runner.run(self.agent, context.get_user_input(), run_config=self.run_config)
        else:
            await updater.start_work()
            kept = self.paused.pop(context.task_id or "")
            state = await RunState.from_json(self.agent, kept)
            state.approve(state.get_interruptions()[0])
            run = await Runner.run(self.agent, state, run_config=self.run_config)
        if not run.interruptions:
            await updater.complete(updater.new_agent_message([Part(text=str(run.final_output))]))
            return
        self.paused[context.task_id or ""] = run.to_state().to_json()
        await ask_by_hand(updater, "Approve?", SCHEMA)


class MafApprovalExecutor(ApprovalExecutor):
    """The bench Microsoft Agent Framework agent by hand: run it to its approval request
    and ask; on the answer, WORKING, then read its session back and run it again with the
    request's approval response."""

    def __init__(self) -> None:
        from benchmarks._hitl_bench_agents import maf_agent

        self.agent = maf_agent()
        self.paused: dict[str, str] = {}  # task id -> the session and the request, as JSON

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        import json

        from agent_framework import AgentSession, Content, Message

        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        if context.current_task is None:
            await event_queue.enqueue_event(submitted(context))
            session = self.agent.create_session()
            run = await self.agent.run(context.get_user_input(), session=session)
        else:
            await updater.start_work()
            kept = json.loads(self.paused.pop(context.task_id or ""))
            session = AgentSession.from_dict(kept["session"])
            approved = Content.from_dict(kept["request"]).to_function_approval_response(True)
            run = await self.agent.run(Message(role="user", contents=[approved]), session=session)
        if not run.user_input_requests:
            await updater.complete(updater.new_agent_message([Part(text=run.text)]))
            return
        request = run.user_input_requests[0].to_dict()
        self.paused[context.task_id or ""] = json.dumps(
            {"session": session.to_dict(), "request": request}
        )
        await ask_by_hand(updater, "Approve?", SCHEMA)


class AdkApprovalExecutor(ApprovalExecutor):
    """The bench ADK agent by hand: run its runner to the confirmation and ask; on the
    answer, WORKING, then run it again with ADK's ToolConfirmation as the function
    response to the ``adk_request_confirmation`` call."""

    SCHEMA: dict[str, Any] = {
        "type": "object",
        "additionalProperties": False,
        "required": ["confirmed"],
        "properties": {"confirmed": {"type": "boolean"}},
    }

    def __init__(self) -> None:
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService

        from benchmarks._hitl_bench_agents import adk_agent

        self.runner = Runner(
            app_name="bench", agent=adk_agent(), session_service=InMemorySessionService()
        )
        self.waiting: dict[str, str] = {}  # task id -> the confirmation call it waits on

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        from google.adk.tools.tool_confirmation import ToolConfirmation
        from google.genai import types

        task_id = context.task_id or ""
        updater = TaskUpdater(event_queue, task_id, context.context_id or "")
        answer = answer_in(context)
        if context.current_task is None:
            await event_queue.enqueue_event(submitted(context))
            await self.runner.session_service.create_session(
                app_name="bench", user_id="a2a", session_id=task_id
            )
            part = types.Part(text=context.get_user_input())
        else:
            assert answer is not None
            await updater.start_work()
            confirmation = ToolConfirmation(confirmed=answer["payload"]["confirmed"])
            part = types.Part(
                function_response=types.FunctionResponse(
                    id=self.waiting.pop(task_id),
                    name="adk_request_confirmation",
                    response=confirmation.model_dump(by_alias=True, exclude_none=True),
                )
            )
        waits_on = None
        async for event in self.runner.run_async(
            user_id="a2a", session_id=task_id, new_message=types.Content(role="user", parts=[part])
        ):
            for call in event.get_function_calls():
                if call.name == "adk_request_confirmation":
                    waits_on = call.id
        if waits_on is None:
            await updater.complete(updater.new_agent_message([Part(text="Approved.")]))
            return
        self.waiting[task_id] = waits_on
        await ask_by_hand(updater, "Approve?", self.SCHEMA)


def app(base: str, executor: AgentExecutor | None = None) -> Starlette:
    card = AgentCard(
        name="sdk bench agent",
        description="a2a-sdk agent for the resume benchmark",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(
            streaming=True, extensions=[AgentExtension(uri=EXTENSION_URI, required=False)]
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        # The SDK warns of a card without skills (A2A 1.0 makes them REQUIRED).
        skills=[
            AgentSkill(id="approve", name="approve", description="asks to approve", tags=["hitl"])
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=executor or ApprovalExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")]
    return Starlette(routes=routes)


def main() -> None:
    sock = socket.create_server(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    executor: AgentExecutor | None = None
    if "--graph" in sys.argv:
        executor = GraphApprovalExecutor()
    elif "--pydantic-ai" in sys.argv:
        executor = PydanticApprovalExecutor()
    elif "--openai-agents" in sys.argv:
        executor = OpenAIApprovalExecutor()
    elif "--adk" in sys.argv:
        executor = AdkApprovalExecutor()
    elif "--agent-framework" in sys.argv:
        executor = MafApprovalExecutor()
    config = uvicorn.Config(app(base, executor), log_level="error", lifespan="off")
    # Said once the executor is built (its framework imported): the first trial is not
    # left waiting on an import.
    print(f"sdk bench agent listening on {base}", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
