"""An OpenAI Agents SDK agent served as an A2A agent whose tool approvals ask people
(``pip install hitl-nb[openai-agents]``).

The Agents SDK has no A2A server of its own; this serves one with :mod:`hitl_nb.agent`.
Each interruption of a run (a ``ToolApprovalItem``: a function tool with
``needs_approval=True``, or a ``needs_approval`` callable that said yes) is a
hitl-prompt/v1 prompt: yes or no with a reason, the tool's name and arguments shown as
the question's context, as text. The answer, checked before the agent sees it (409 /
422), resumes the run from its ``RunState``: ``state.approve(item)``, or
``state.reject(item, rejection_message=reason)`` (the person's reason is what the model
is told)::

    from agents import Agent, function_tool
    from hitl_nb.agent.openai_agents import serve_agent

    @function_tool(needs_approval=True)
    def deploy(build: int) -> str: ...

    agent = Agent(name="Deployer", tools=[deploy])
    served = serve_agent(agent, name="Deployer")          # served.url, served.stop()

``schemas={"configure": Settings}`` makes the approval of ``configure`` ask for
``Settings``' fields; the tool reads them with :func:`approval_answer`. For prompts that
outlive a restart, the SDK's database task store keeps the task and
:class:`SqlitePauses` the run's ``RunState``:
``serve_agent(agent, task_store=..., pauses=SqlitePauses("pauses.sqlite"))``.
:class:`ApprovalExecutor` is the executor itself, for an a2a-sdk server of your own.
"""

import typing

from ... import _lazy

# The public table (see hitl_nb._lazy): each name loads its module on first use, so the
# a2a-sdk and the Agents SDK load with the first name used, not with the package.
if typing.TYPE_CHECKING:
    from .._pauses import MemoryPauses as MemoryPauses
    from .._pauses import PauseStore as PauseStore
    from .._pauses import SqlitePauses as SqlitePauses
    from .._pausing import default_result as default_result
    from .._tool_calls import APPROVAL_SCHEMA as APPROVAL_SCHEMA
    from ._calls import approval_answer as approval_answer
    from ._executor import ApprovalExecutor as ApprovalExecutor
    from ._serve import serve_agent as serve_agent

__getattr__, __dir__, __all__ = _lazy.attach_table(__name__, __file__)
