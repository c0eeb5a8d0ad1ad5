"""A Microsoft Agent Framework agent served by hitl_nb.agent.agent_framework: no model
service, a chat client of the tests' (:class:`ScriptedClient`, the framework's
``BaseChatClient`` with its function-invocation layer) that calls the tools the message
names, then says what they returned.

- ``deploy``: ``approval_mode="always_require"`` (a yes/no with a reason);
- ``configure``: likewise, its approval asking for ``Settings``' fields (``schemas``),
  which the tool reads with ``approval_answer``;
- ``status``: no approval (runs at once);
- ``both``: deploy and configure in one response (two approval requests).

Any other message calls ``deploy``. Once the tools returned (or were rejected), the model
answers with each result (``tool: result``) as text. ``seen`` records what reached each
tool, ``runs`` counts the requests to the model. ``MafAgent`` serves it on 127.0.0.1;
:func:`maf_process` serves it in a process of its own (``python -m
tests.helpers.maf_agent``) on a SQLite task store and SQLite pauses, and kills it
(SIGKILL) at the end: a crash.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from agent_framework import (
    Agent,
    BaseChatClient,
    ChatResponse,
    Content,
    FunctionInvocationContext,
    FunctionInvocationLayer,
    Message,
    tool,
)
from pydantic import BaseModel, ConfigDict

from hitl_nb.agent.agent_framework import approval_answer, serve_agent
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
    "status": [("status", {"service": "api"})],
    "both": [("deploy", {"build": 7, "env": "staging"}), ("configure", {"service": "web"})],
}


def respond(messages: Sequence[Message]) -> Message:
    """The tests' model: after the last user text, call the tools it names; once their
    results are in, say them as text."""
    last_user = max(
        i
        for i, m in enumerate(messages)
        if m.role == "user" and any(c.type == "text" for c in m.contents)
    )
    after = messages[last_user + 1 :]
    names = {c.call_id: c.name for m in after for c in m.contents if c.type == "function_call"}
    results = [c for m in after for c in m.contents if c.type == "function_result"]
    if results:
        said = "; ".join(f"{names.get(r.call_id, r.call_id)}: {r.result}" for r in results)
        return Message(role="assistant", contents=[said])
    text = messages[last_user].text.strip()
    calls = CALLS.get(text, CALLS["deploy"])
    return Message(
        role="assistant",
        contents=[
            Content.from_function_call(
                call_id=f"call-{name}", name=name, arguments=json.dumps(args)
            )
            for name, args in calls
        ],
    )


class ScriptedClient(FunctionInvocationLayer[Any], BaseChatClient[Any]):
    """A chat client that answers with :func:`respond`, counting its requests."""

    def __init__(self, runs: Counter[str]) -> None:
        super().__init__()
        self.runs = runs

    async def _inner_get_response(  # type: ignore[override]
        self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any], **_: Any
    ) -> ChatResponse:
        if stream:
            raise NotImplementedError("the tests' model does not stream")
        self.runs["model"] += 1
        return ChatResponse(messages=[respond(messages)])


def deploy_agent(seen: dict[str, Any], runs: Counter[str] | None = None) -> Agent[Any]:
    """The agent, recording in ``seen`` what reached each tool and counting in ``runs``
    each request to the model (``"model"``)."""

    @tool(approval_mode="always_require")
    def deploy(build: int, env: str) -> str:
        """Deploy a build."""
        seen["deploy"] = {"build": build, "env": env}
        return f"deployed build {build} to {env}"

    @tool(approval_mode="always_require")
    def configure(service: str, ctx: FunctionInvocationContext) -> str:
        """Configure a service with the person's settings."""
        seen["configure"] = approval_answer(ctx)
        return f"configured {service}"

    @tool(approval_mode="never_require")
    def status(service: str) -> str:
        """Say how a service is."""
        seen["status"] = service
        return f"{service} is up"

    client = ScriptedClient(runs if runs is not None else Counter())
    return Agent(client, name="deploy agent", tools=[deploy, configure, status])


SCHEMAS = {"configure": Settings}


class MafAgent(ServedBridge):
    """``with MafAgent() as agent: agent.url``; ``agent.seen``: what tools got."""

    def __init__(self, *, task_store: Any = None, pauses: Any = None, grpc: bool = False) -> None:
        super().__init__(
            deploy_agent,
            serve_agent,
            task_store=task_store,
            pauses=pauses,
            grpc=grpc,
            schemas=SCHEMAS,
        )


def maf_process(tasks: Path, pauses: Path | None, seen: Path) -> AbstractContextManager[str]:
    """The agent served by another process (:func:`~tests.helpers.agent_process.agent_process`)
    on the SQLite task store ``tasks`` and SQLite pauses ``pauses`` (None: in memory)."""
    return agent_process("tests.helpers.maf_agent", tasks, seen, pauses)


def main(argv: list[str] | None = None) -> None:
    """Serve the agent until killed: ``TASKS.sqlite SEEN.json [PAUSES.sqlite]``."""
    from hitl_nb.agent.agent_framework import SqlitePauses

    args = sys.argv[1:] if argv is None else argv
    serve_until_killed(args, deploy_agent, serve_agent, SqlitePauses, schemas=SCHEMAS)


if __name__ == "__main__":
    main()
