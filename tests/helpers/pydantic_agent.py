"""A Pydantic AI agent served by hitl_nb.agent.pydantic_ai: no model service, a
``FunctionModel`` of the tests' that calls the tool the message names.

- ``deploy``: ``requires_approval=True`` (a yes/no with a reason);
- ``configure``: raises ``ApprovalRequired(metadata={"response_schema": Settings})``
  until approved, then reads the person's fields as ``ctx.tool_call_metadata``;
- ``details``: ``CallDeferred(kind="question")`` asking for ``Details``; the answer is
  the call's result, seen by the model;
- ``both``: deploy and configure in one response (two deferred calls).

Any other message calls ``deploy``. Once the tools returned, the model answers with each
return (``tool: content (outcome)``) as text. ``seen`` records what reached each tool,
``runs`` counts the requests to the model. ``PydanticAgent`` serves it on 127.0.0.1;
:func:`pydantic_process` serves it in a process of its own
(``python -m tests.helpers.pydantic_agent``) on a SQLite task store and SQLite pauses,
and kills it (SIGKILL) at the end: a crash.
"""

from __future__ import annotations

import sys
from collections import Counter
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic_ai import Agent, RunContext
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred
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

from hitl_nb.agent.pydantic_ai import serve_agent
from tests.helpers.agent_process import agent_process, serve_until_killed
from tests.helpers.served_bridge import ServedBridge


class Settings(BaseModel):
    """What a person fills in to approve ``configure``."""

    model_config = ConfigDict(extra="forbid")

    replicas: int
    regions: list[list[str]]
    label: str


class Details(BaseModel):
    """What ``details`` asks for."""

    owner: str
    budget: int


CALLS = {
    "deploy": [("deploy", {"build": 41, "env": "prod"})],
    "configure": [("configure", {"service": "api"})],
    "details": [("details", {"topic": "launch"})],
    "both": [("deploy", {"build": 7, "env": "staging"}), ("configure", {"service": "web"})],
}


def _user_text(messages: list[ModelMessage]) -> str:
    for message in messages:
        for part in getattr(message, "parts", []):
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                return part.content.strip()
    return ""


def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The tests' model: call the tools the message names, then say what they returned."""
    last = messages[-1]
    returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
    if isinstance(last, ModelRequest) and returns:
        said = [f"{p.tool_name}: {p.model_response_str()} ({p.outcome})" for p in returns]
        return ModelResponse(parts=[TextPart("; ".join(said))])
    calls = CALLS.get(_user_text(messages), CALLS["deploy"])
    return ModelResponse(
        parts=[ToolCallPart(name, args, tool_call_id=f"call-{name}") for name, args in calls]
    )


def deploy_agent(seen: dict[str, Any], runs: Counter[str] | None = None) -> Agent[None, str]:
    """The agent, recording in ``seen`` what reached each tool and counting in ``runs``
    each request to the model (``"model"``)."""
    counted: Counter[str] = runs if runs is not None else Counter()

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        counted["model"] += 1
        return respond(messages, info)

    agent: Agent[None, str] = Agent(FunctionModel(model), output_type=str)

    @agent.tool_plain(requires_approval=True)
    def deploy(build: int, env: str) -> str:
        seen["deploy"] = {"build": build, "env": env}
        return f"deployed build {build} to {env}"

    @agent.tool
    def configure(ctx: RunContext[None], service: str) -> str:
        if not ctx.tool_call_approved:
            raise ApprovalRequired(
                metadata={"response_schema": Settings, "question": f"Settings for {service}?"}
            )
        seen["configure"] = ctx.tool_call_metadata
        return f"configured {service}"

    @agent.tool_plain
    def details(topic: str) -> str:
        seen["details asked"] = topic
        raise CallDeferred(
            metadata={"response_schema": Details, "question": f"Who owns {topic}?"},
            kind="question",
        )

    return agent


class PydanticAgent(ServedBridge):
    """``with PydanticAgent() as agent: agent.url``; ``agent.seen``: what tools got."""

    def __init__(self, *, task_store: Any = None, pauses: Any = None, grpc: bool = False) -> None:
        super().__init__(deploy_agent, serve_agent, task_store=task_store, pauses=pauses, grpc=grpc)


def pydantic_process(tasks: Path, pauses: Path | None, seen: Path) -> AbstractContextManager[str]:
    """The agent served by another process (:func:`~tests.helpers.agent_process.agent_process`)
    on the SQLite task store ``tasks`` and SQLite pauses ``pauses`` (None: in memory)."""
    return agent_process("tests.helpers.pydantic_agent", tasks, seen, pauses)


def main(argv: list[str] | None = None) -> None:
    """Serve the agent until killed: ``TASKS.sqlite SEEN.json [PAUSES.sqlite]``."""
    from hitl_nb.agent.pydantic_ai import SqlitePauses

    args = sys.argv[1:] if argv is None else argv
    serve_until_killed(args, deploy_agent, serve_agent, SqlitePauses)


if __name__ == "__main__":
    main()
