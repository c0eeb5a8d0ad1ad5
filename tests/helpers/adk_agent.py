"""An ADK agent served by hitl_nb.agent.adk: no model service, a ``BaseLlm`` of the
tests' that calls the tools the message names, then says what they returned.

- ``deploy``: ``FunctionTool(deploy, require_confirmation=True)`` (a yes/no; rejected,
  ADK answers the model with an error and the tool does not run);
- ``configure``: calls ``tool_context.request_confirmation(payload=...)`` until it is
  confirmed, then records the confirmation it got (a rejection too);
- ``both``: deploy and configure in one response (two confirmations).

Any other message calls ``deploy``. Once the tools returned, the model answers with each
function response (``tool: {json}``) as text. ``seen`` records what reached each tool,
``runs`` counts the requests to the model. ``AdkAgent`` serves it on 127.0.0.1;
:func:`adk_process` serves it in a process of its own (``python -m
tests.helpers.adk_agent``) on a SQLite task store and ADK's SQLite session service, and
kills it (SIGKILL) at the end: a crash.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import AsyncGenerator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools import FunctionTool, ToolContext
from google.genai import types

from hitl_nb.agent import Served
from hitl_nb.agent.adk import serve_agent
from tests.helpers.agent_process import agent_process, serve_until_killed

#: What ``configure`` offers for confirmation: its shape is the prompt's payload schema.
OFFERED = {"replicas": 1, "regions": [["eu-west"]], "label": "default"}

CALLS = {
    "deploy": [("deploy", {"build": 41, "env": "prod"})],
    "configure": [("configure", {"service": "api"})],
    "both": [("deploy", {"build": 7, "env": "staging"}), ("configure", {"service": "web"})],
}


class ScriptedLlm(BaseLlm):
    """Calls the tools the user's text names; after function responses, says them."""

    model: str = "scripted"
    #: Counts the requests (``"model"``); Any, so that pydantic keeps the caller's own.
    runs: Any = None

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.runs["model"] += 1
        # A message without text (a data part only, say) leaves no content at all.
        last = llm_request.contents[-1] if llm_request.contents else types.Content(parts=[])
        returned = [p.function_response for p in last.parts or [] if p.function_response]
        if returned:
            said = "; ".join(
                f"{r.name}: {json.dumps(r.response, ensure_ascii=False, sort_keys=True)}"
                for r in returned
            )
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=said)]))
            return
        text = "".join(p.text or "" for p in last.parts or []).strip()
        calls = [
            types.Part(function_call=types.FunctionCall(name=name, args=args, id=f"call-{name}"))
            for name, args in CALLS.get(text, CALLS["deploy"])
        ]
        yield LlmResponse(content=types.Content(role="model", parts=calls))


def deploy_agent(seen: dict[str, Any], runs: Counter[str] | None = None) -> LlmAgent:
    """The agent, recording in ``seen`` what reached each tool and counting in ``runs``
    each request to the model (``"model"``)."""

    def deploy(build: int, env: str) -> str:
        """Deploy a build."""
        seen["deploy"] = {"build": build, "env": env}
        return f"deployed build {build} to {env}"

    def configure(service: str, tool_context: ToolContext) -> dict[str, Any]:
        """Configure a service, as a person confirms it."""
        confirmation = tool_context.tool_confirmation
        if confirmation is None:
            tool_context.request_confirmation(hint=f"Settings for {service}?", payload=OFFERED)
            return {"status": "waiting for a person"}
        seen["configure"] = {"confirmed": confirmation.confirmed, "payload": confirmation.payload}
        return {"configured": service if confirmation.confirmed else None}

    model = ScriptedLlm(runs=runs if runs is not None else Counter())
    return LlmAgent(
        name="deployer",
        model=model,
        tools=[FunctionTool(deploy, require_confirmation=True), configure],
    )


class AdkAgent:
    """``with AdkAgent() as agent: agent.url``; ``agent.seen``: what tools got."""

    def __init__(self, *, task_store: str | None = None, grpc: bool = False) -> None:
        self.grpc = grpc
        #: The SDK's database task store's URL (None: in memory).
        self.task_store = task_store
        self.seen: dict[str, Any] = {}
        self.runs: Counter[str] = Counter()
        self.agent = deploy_agent(self.seen, self.runs)
        self.served: Served | None = None
        self.url = ""

    def __enter__(self) -> AdkAgent:
        store = None
        if self.task_store is not None:
            from a2a.server.tasks import DatabaseTaskStore
            from sqlalchemy.ext.asyncio import create_async_engine

            store = DatabaseTaskStore(create_async_engine(self.task_store))
        self.served = serve_agent(
            self.agent,
            grpc_port=0 if self.grpc else None,
            name="deploy agent",
            task_store=store,
            on_stop=[store.engine.dispose] if store is not None else [],
        )
        self.url = self.served.url
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.served is not None
        self.served.stop()


def adk_process(tasks: Path, sessions: Path | None, seen: Path) -> AbstractContextManager[str]:
    """The agent served by another process (:func:`~tests.helpers.agent_process.agent_process`)
    on the SQLite task store ``tasks`` and ADK's SQLite session service ``sessions`` (None:
    in memory)."""
    return agent_process("tests.helpers.adk_agent", tasks, seen, sessions)


def main(argv: list[str] | None = None) -> None:
    """Serve the agent until killed: ``TASKS.sqlite SEEN.json [SESSIONS.sqlite]``."""
    from google.adk.sessions import DatabaseSessionService

    def sessions(path: str) -> DatabaseSessionService:
        return DatabaseSessionService(f"sqlite+aiosqlite:///{path}")

    args = sys.argv[1:] if argv is None else argv
    serve_until_killed(
        args, deploy_agent, serve_agent, sessions, keep_as="session_service", close_kept=True
    )


if __name__ == "__main__":
    main()
