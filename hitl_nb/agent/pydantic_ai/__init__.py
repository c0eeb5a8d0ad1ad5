"""A Pydantic AI agent served as an A2A agent whose deferred tools ask people
(``pip install hitl-nb[pydantic-ai]``).

Each deferred tool call is a hitl-prompt/v1 prompt: a tool with
``requires_approval=True`` (or one raising ``ApprovalRequired``) asks yes or no with a
reason, one deferring with ``metadata={"response_schema": Model}`` asks for ``Model``'s
fields; the tool's name and arguments are shown as the question's context, as text. The
answer, checked before the agent sees it, resumes the run with its message history and
Pydantic AI's own ``DeferredToolResults`` (``ToolApproved``, ``ToolDenied`` carrying the
person's reason, the fields)::

    from hitl_nb.agent.pydantic_ai import serve_agent

    agent = Agent(model)

    @agent.tool_plain(requires_approval=True)
    def deploy(build: int) -> str: ...

    served = serve_agent(agent, name="Deployer")          # served.url, served.stop()

For prompts that outlive a restart, the SDK's database task store keeps the task and
:class:`SqlitePauses` the run's message history:
``serve_agent(agent, task_store=..., pauses=SqlitePauses("pauses.sqlite"))``.
:class:`DeferredExecutor` is the executor itself, for an a2a-sdk server of your own.
"""

import typing

from ... import _lazy

# The public table (see hitl_nb._lazy): each name loads its module on first use, so the SDK
# and Pydantic AI load with the first name used, not with the package.
if typing.TYPE_CHECKING:
    from .._pauses import MemoryPauses as MemoryPauses
    from .._pauses import PauseStore as PauseStore
    from .._pauses import SqlitePauses as SqlitePauses
    from .._pausing import default_result as default_result
    from .._tool_calls import APPROVAL_SCHEMA as APPROVAL_SCHEMA
    from ._executor import DeferredExecutor as DeferredExecutor
    from ._serve import serve_agent as serve_agent

__getattr__, __dir__, __all__ = _lazy.attach_table(__name__, __file__)
