"""A Microsoft Agent Framework agent served as an A2A agent whose tool approvals ask
people (``pip install hitl-nb[agent-framework]``).

Each call to a tool with ``approval_mode="always_require"`` that a run stops on (a
``function_approval_request`` among the response's ``user_input_requests``) is a
hitl-prompt/v1 prompt: yes or no with a reason, the tool's name and arguments shown as
the question's context, as text. The answer, checked before the agent sees it (409 /
422), resumes the run in its ``AgentSession`` with the request's own
``to_function_approval_response(approved)``::

    from agent_framework import Agent, tool
    from hitl_nb.agent.agent_framework import serve_agent

    @tool(approval_mode="always_require")
    def deploy(build: int) -> str: ...

    agent = Agent(client, name="Deployer", tools=[deploy])
    served = serve_agent(agent, name="Deployer")          # served.url, served.stop()

``schemas={"configure": Settings}`` makes the approval of ``configure`` ask for
``Settings``' fields; the tool reads them with :func:`approval_answer` from its
``FunctionInvocationContext``. A rejection reaches the framework as a rejection (the
tool does not run); the model is told the framework's own sentence for it, as the
framework has no place for the person's reason. For prompts that outlive a restart, the
SDK's database task store keeps the task and :class:`SqlitePauses` the session
(``session.to_dict()``, with the approval requests the framework recorded):
``serve_agent(agent, task_store=..., pauses=SqlitePauses("pauses.sqlite"))``.
:class:`ApprovalExecutor` is the executor itself, for an a2a-sdk server of your own.

Why not the framework's own A2A executor (``agent_framework.a2a.A2AExecutor``, from
agent-framework-a2a): it answers every run with its text and has no input-required state
for an approval request; a waiting approval would end the task. Served by
``hitl_nb.agent``, the prompt is asked, checked and kept as for the other bridges.

Workflow request ports (``ctx.request_info`` in a ``Workflow``) are not bridged: a
workflow pauses on a typed request and resumes from its checkpoint, a different seam
from a tool call; see docs/agent.md.
"""

import typing

from ... import _lazy

# The public table (see hitl_nb._lazy): each name loads its module on first use, so the
# a2a-sdk and the Agent Framework load with the first name used, not with the package.
if typing.TYPE_CHECKING:
    from .._pauses import MemoryPauses as MemoryPauses
    from .._pauses import PauseStore as PauseStore
    from .._pauses import SqlitePauses as SqlitePauses
    from .._pausing import default_result as default_result
    from .._tool_calls import APPROVAL_SCHEMA as APPROVAL_SCHEMA
    from ._calls import ANSWER_KEY as ANSWER_KEY
    from ._calls import approval_answer as approval_answer
    from ._executor import ApprovalExecutor as ApprovalExecutor
    from ._serve import serve_agent as serve_agent

__getattr__, __dir__, __all__ = _lazy.attach_table(__name__, __file__)
