"""Benchmark-only: the two agents hitl_nb.agent serves, doing what the mock agent's
``approval`` scenario does, for bench_agent.py to compare with a bare a2a-sdk agent.

``--kind ask``: an a2a-sdk executor that asks at once, ``await ask(updater, "Approve?",
SCHEMA)``, then completes. ``--kind graph``: a LangGraph graph whose one node calls
``interrupt("Approve?", response_schema=SCHEMA)``, served by ``serve_graph``.
``--kind pydantic-ai``: a Pydantic AI agent whose one tool asks for approval with SCHEMA
(``ApprovalRequired``), served by ``serve_agent``. ``--kind openai-agents``: an OpenAI
Agents SDK agent (a ``Model`` of the benchmark's, no service, tracing off) whose one tool
``needs_approval``, its approval asking SCHEMA (``schemas=``), served by
``hitl_nb.agent.openai_agents.serve_agent``. These take ``{"approve": true}``.
``--kind adk``: an ADK agent whose one tool has ``require_confirmation=True``, served by
``hitl_nb.agent.adk.serve_agent``; it takes ``{"confirmed": true}``.
``--kind agent-framework``: a Microsoft Agent Framework agent (a chat client of the
benchmark's, no service) whose one tool has ``approval_mode="always_require"``, its
approval asking SCHEMA (``schemas=``), served by
``hitl_nb.agent.agent_framework.serve_agent``; it takes ``{"approve": true}``. JSON-RPC at ``/``;
prints its URL, serves until killed.
``--checkout DIR``: the hitl_nb of another checkout of the repository.
``--grace S``: how long the graph's executor gives LangGraph's own check of an answer
before showing the task WORKING (default: ``serve_graph``'s, 0: not at all).
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Any

# --checkout DIR: serve the hitl_nb of another checkout (bench_agent.py --baseline); read
# before argparse runs, since hitl_nb is imported below.
_CHECKOUT = sys.argv[sys.argv.index("--checkout") + 1] if "--checkout" in sys.argv else None
sys.path.insert(0, _CHECKOUT or str(Path(__file__).resolve().parents[1]))

from a2a.server.agent_execution import AgentExecutor, RequestContext  # noqa: E402
from a2a.server.events import EventQueue  # noqa: E402
from a2a.server.tasks import TaskUpdater  # noqa: E402
from a2a.types import Part, Task, TaskState, TaskStatus  # noqa: E402

# The bench tool's annotation, which Pydantic AI reads from this module at run time.
from pydantic_ai import RunContext  # noqa: E402

from hitl_nb.agent import HitlExtension, Served, ask  # noqa: E402
from hitl_nb.agent._app import agent_app  # noqa: E402

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["approve"],
    "properties": {"approve": {"type": "boolean"}, "comment": {"type": "string"}},
}


class Approval(AgentExecutor):
    """Asks at once, then completes."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=context.task_id or "",
                    context_id=context.context_id or "",
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                )
            )
        answer = await ask(updater, "Approve?", SCHEMA)
        done = "Approved." if answer["approve"] else "Not approved."
        await updater.complete(updater.new_agent_message([Part(text=done)]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()


def graph() -> Any:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt
    from typing_extensions import TypedDict

    class State(TypedDict, total=False):
        approve: bool

    def review(state: State) -> State:
        return {"approve": interrupt("Approve?", response_schema=SCHEMA)["approve"]}

    builder = StateGraph(State)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=InMemorySaver())


def pydantic_agent() -> Any:
    """A Pydantic AI agent whose model (a FunctionModel, no service) calls ``release``
    at once; the tool asks for approval with SCHEMA, then the model says it is done."""
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import ApprovalRequired
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    def model(messages: list[Any], info: Any) -> ModelResponse:
        if len(messages) > 1:
            return ModelResponse(parts=[TextPart("Approved.")])
        return ModelResponse(parts=[ToolCallPart("release", {}, tool_call_id="release")])

    agent: Any = Agent(FunctionModel(model), output_type=str)

    @agent.tool
    def release(ctx: RunContext[None]) -> str:
        if not ctx.tool_call_approved:
            raise ApprovalRequired(metadata={"response_schema": SCHEMA, "question": "Approve?"})
        return "released"

    return agent


def openai_agent() -> Any:
    """An OpenAI Agents SDK agent whose model (no service) calls ``release`` at once; the
    tool needs approval, then the model says it is done. Run it with :data:`RUN_CONFIG`."""
    import json

    from agents import Agent, Usage, function_tool
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    class Scripted(Model):
        async def get_response(
            self, system_instructions: Any, input: Any, *args: Any, **kw: Any
        ) -> Any:
            if isinstance(input, list) and input[-1].get("type") == "function_call_output":
                text = ResponseOutputText(type="output_text", text="Approved.", annotations=[])
                done = ResponseOutputMessage(
                    id="m", type="message", role="assistant", status="completed", content=[text]
                )
                return ModelResponse(output=[done], usage=Usage(), response_id=None)
            call = ResponseFunctionToolCall(
                type="function_call", call_id="release", name="release", arguments=json.dumps({})
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kw: Any) -> Any:
            raise NotImplementedError

    @function_tool(needs_approval=True)
    def release() -> str:
        """Release."""
        return "released"

    return Agent(name="release", model=Scripted(), tools=[release])


def openai_run_config() -> Any:
    """No tracing: nothing exported, nothing sent anywhere."""
    from agents import RunConfig

    return RunConfig(tracing_disabled=True)


def maf_agent() -> Any:
    """A Microsoft Agent Framework agent whose chat client (no service) calls ``release``
    at once; the tool needs approval, then the model says it is done."""
    from agent_framework import (
        Agent,
        BaseChatClient,
        ChatResponse,
        Content,
        FunctionInvocationLayer,
        Message,
        tool,
    )

    class Scripted(FunctionInvocationLayer[Any], BaseChatClient[Any]):
        async def _inner_get_response(  # type: ignore[override]
            self, *, messages: Any, stream: bool, options: Any, **kw: Any
        ) -> Any:
            if any(c.type == "function_result" for c in messages[-1].contents):
                return ChatResponse(messages=[Message(role="assistant", contents=["Approved."])])
            call = Content.from_function_call(call_id="release", name="release", arguments="{}")
            return ChatResponse(messages=[Message(role="assistant", contents=[call])])

    @tool(approval_mode="always_require")
    def release() -> str:
        """Release."""
        return "released"

    return Agent(Scripted(), name="release", tools=[release])


def adk_agent() -> Any:
    """An ADK agent whose model (a BaseLlm of the benchmark's, no service) calls
    ``release`` at once; the tool has ``require_confirmation=True``, then the model says
    it is done."""
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.tools import FunctionTool
    from google.genai import types

    class Model(BaseLlm):
        model: str = "bench"

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            from google.adk.models.llm_response import LlmResponse

            last = llm_request.contents[-1] if llm_request.contents else None
            if last is not None and any(p.function_response for p in last.parts or []):
                part = types.Part(text="Approved.")
            else:
                call = types.FunctionCall(name="release", args={}, id="release")
                part = types.Part(function_call=call)
            yield LlmResponse(content=types.Content(role="model", parts=[part]))

    def release() -> str:
        """Release."""
        return "released"

    tool = FunctionTool(release, require_confirmation=True)
    return LlmAgent(name="releaser", model=Model(), tools=[tool])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--kind",
        choices=["ask", "graph", "pydantic-ai", "openai-agents", "adk", "agent-framework"],
        required=True,
    )
    parser.add_argument("--grace", type=float, help="the graph's GraphExecutor grace (s)")
    parser.add_argument("--checkout", help="serve the hitl_nb of this checkout instead")
    args = parser.parse_args()
    served: Served
    if args.kind == "ask":

        def executor(hitl: HitlExtension) -> AgentExecutor:
            return hitl.wrap(Approval())

        served = agent_app(executor, name="ask bench agent", description="asks at once")
    elif args.kind == "pydantic-ai":
        from hitl_nb.agent.pydantic_ai import serve_agent

        served = serve_agent(pydantic_agent(), name="pydantic-ai bench agent")
    elif args.kind == "openai-agents":
        from hitl_nb.agent.openai_agents import serve_agent as serve_openai

        served = serve_openai(
            openai_agent(),
            name="openai-agents bench agent",
            schemas={"release": SCHEMA},
            run_config=openai_run_config(),
        )
    elif args.kind == "agent-framework":
        from hitl_nb.agent.agent_framework import serve_agent as serve_maf

        served = serve_maf(
            maf_agent(), name="agent-framework bench agent", schemas={"release": SCHEMA}
        )
    elif args.kind == "adk":
        from hitl_nb.agent.adk import serve_agent as serve_adk

        served = serve_adk(adk_agent(), name="adk bench agent")
    else:
        from hitl_nb.agent.langgraph import serve_graph

        options = {} if args.grace is None else {"grace": args.grace}
        served = serve_graph(graph(), name="graph bench agent", inputs=lambda _: {}, **options)
    print(f"{args.kind} bench agent listening on {served.url}", flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    served.stop()


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    main()
