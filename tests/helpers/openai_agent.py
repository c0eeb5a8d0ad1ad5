"""An OpenAI Agents SDK agent served by hitl_nb.agent.openai_agents: no model service, a
``Model`` of the tests' (:class:`ScriptedModel`) that calls the tools the message names,
then says what they returned.

- ``deploy``: ``needs_approval=True`` (a yes/no with a reason);
- ``configure``: ``needs_approval=True``, its approval asking for ``Settings``' fields
  (``schemas``), which the tool reads with ``approval_answer``;
- ``scale``: ``needs_approval`` a callable, yes only above 10 replicas;
- ``both``: deploy and configure in one response (two interruptions).

Any other message calls ``deploy``. Once the tools returned (or were rejected), the model
answers with each output (``tool: output``) as text. ``seen`` records what reached each
tool, ``runs`` counts the requests to the model. ``OpenAIAgent`` serves it on 127.0.0.1;
:func:`openai_process` serves it in a process of its own
(``python -m tests.helpers.openai_agent``) on a SQLite task store and SQLite pauses, and
kills it (SIGKILL) at the end: a crash. Tracing is off: nothing leaves the machine.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from agents import Agent, RunConfig, RunContextWrapper, Usage, function_tool
from agents.items import ModelResponse, TResponseInputItem, TResponseStreamEvent
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from pydantic import BaseModel, ConfigDict

from hitl_nb.agent.openai_agents import approval_answer, serve_agent
from tests.helpers.agent_process import agent_process, serve_until_killed
from tests.helpers.served_bridge import ServedBridge


class Settings(BaseModel):
    """What a person fills in to approve ``configure``."""

    model_config = ConfigDict(extra="forbid")

    replicas: int
    regions: list[list[str]]
    label: str


CALLS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "deploy": [("deploy", {"build": 41, "env": "prod"})],
    "configure": [("configure", {"service": "api"})],
    "scale 3": [("scale", {"replicas": 3})],
    "scale 50": [("scale", {"replicas": 50})],
    "both": [("deploy", {"build": 7, "env": "staging"}), ("configure", {"service": "web"})],
}

#: Run without tracing: no exporter, nothing sent anywhere.
RUN_CONFIG = RunConfig(tracing_disabled=True)


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def respond(items: list[Any]) -> list[Any]:
    """The tests' model: after the last user message, call the tools it names; once
    their outputs are in, say them as text."""
    last_user = max(i for i, item in enumerate(items) if _field(item, "role") == "user")
    after = items[last_user + 1 :]
    names = {_field(i, "call_id"): _field(i, "name") for i in after if _field(i, "name")}
    outputs = [i for i in after if _field(i, "type") == "function_call_output"]
    if outputs:
        said = "; ".join(f"{names[_field(o, 'call_id')]}: {_field(o, 'output')}" for o in outputs)
        text = ResponseOutputText(type="output_text", text=said, annotations=[])
        return [
            ResponseOutputMessage(
                id="msg", type="message", role="assistant", status="completed", content=[text]
            )
        ]
    content = _field(items[last_user], "content")
    calls = CALLS.get(content.strip() if isinstance(content, str) else "", CALLS["deploy"])
    return [
        ResponseFunctionToolCall(
            type="function_call",
            id=f"fc-{name}",
            call_id=f"call-{name}",
            name=name,
            arguments=json.dumps(args),
        )
        for name, args in calls
    ]


class ScriptedModel(Model):
    """An Agents SDK ``Model`` that answers with :func:`respond`, counting its requests."""

    def __init__(self, runs: Counter[str]) -> None:
        self.runs = runs

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        """The next step of the script."""
        self.runs["model"] += 1
        items: list[Any] = [{"role": "user", "content": input}] if isinstance(input, str) else input
        return ModelResponse(output=respond(items), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        """Not used: the bridge runs the agent without streaming."""
        raise NotImplementedError("the tests' model does not stream")


def deploy_agent(seen: dict[str, Any], runs: Counter[str] | None = None) -> Agent[Any]:
    """The agent, recording in ``seen`` what reached each tool and counting in ``runs``
    each request to the model (``"model"``)."""

    @function_tool(needs_approval=True)
    def deploy(build: int, env: str) -> str:
        """Deploy a build."""
        seen["deploy"] = {"build": build, "env": env}
        return f"deployed build {build} to {env}"

    @function_tool(needs_approval=True)
    def configure(ctx: RunContextWrapper[Any], service: str) -> str:
        """Configure a service with the person's settings."""
        seen["configure"] = approval_answer(ctx)
        return f"configured {service}"

    async def many(_: RunContextWrapper[Any], params: dict[str, Any], call_id: str) -> bool:
        return int(params["replicas"]) > 10

    @function_tool(needs_approval=many)
    def scale(replicas: int) -> str:
        """Scale the service."""
        seen["scale"] = replicas
        return f"scaled to {replicas}"

    model = ScriptedModel(runs if runs is not None else Counter())
    return Agent(name="deploy agent", model=model, tools=[deploy, configure, scale])


SCHEMAS = {"configure": Settings}


class OpenAIAgent(ServedBridge):
    """``with OpenAIAgent() as agent: agent.url``; ``agent.seen``: what tools got."""

    def __init__(self, *, task_store: Any = None, pauses: Any = None, grpc: bool = False) -> None:
        super().__init__(
            deploy_agent,
            serve_agent,
            task_store=task_store,
            pauses=pauses,
            grpc=grpc,
            schemas=SCHEMAS,
            run_config=RUN_CONFIG,
        )


def openai_process(tasks: Path, pauses: Path | None, seen: Path) -> AbstractContextManager[str]:
    """The agent served by another process (:func:`~tests.helpers.agent_process.agent_process`)
    on the SQLite task store ``tasks`` and SQLite pauses ``pauses`` (None: in memory)."""
    return agent_process("tests.helpers.openai_agent", tasks, seen, pauses)


def main(argv: list[str] | None = None) -> None:
    """Serve the agent until killed: ``TASKS.sqlite SEEN.json [PAUSES.sqlite]``."""
    from hitl_nb.agent.openai_agents import SqlitePauses

    args = sys.argv[1:] if argv is None else argv
    options = {"schemas": SCHEMAS, "run_config": RUN_CONFIG}
    serve_until_killed(args, deploy_agent, serve_agent, SqlitePauses, **options)


if __name__ == "__main__":
    main()
