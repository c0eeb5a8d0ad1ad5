"""A compiled LangGraph graph served as an A2A agent that asks people
(``pip install hitl-nb[langgraph]``).

Each ``interrupt(value, response_schema=...)`` (LangGraph 1.2) is a hitl-prompt/v1
prompt: the question from ``value``, the schema from ``response_schema`` (an interrupt
without one asks for words); the answer, checked before the graph sees it, resumes the
graph by interrupt id (``Command(resume=...)``); several pending interrupts are several
prompts, one at a time; a Pydantic schema is validated by LangGraph too; one graph thread
per A2A task::

    from hitl_nb.agent.langgraph import serve_graph

    graph = builder.compile(checkpointer=InMemorySaver())
    agent = serve_graph(graph, name="Release graph")      # agent.url, agent.stop()

For prompts that outlive a restart, the SDK's database task store keeps the task and a
durable checkpointer the graph's thread: ``serve_graph(graph, task_store=...,
checkpointer=lambda: AsyncSqliteSaver.from_conn_string("checkpoints.sqlite"))``.
:class:`GraphExecutor` is the executor itself, for an a2a-sdk server of your own
(``GraphExecutor(graph, hitl)`` with the agent's :class:`~hitl_nb.agent.HitlExtension`).
"""

import typing

from ... import _lazy

# The public table (see hitl_nb._lazy): each name loads its module on first use, so the SDK
# (protobuf, pydantic) and LangGraph load with the first name used, not with the package.
if typing.TYPE_CHECKING:
    from ._executor import GraphExecutor as GraphExecutor
    from ._executor import default_inputs as default_inputs
    from ._executor import default_result as default_result
    from ._serve import serve_graph as serve_graph

__getattr__, __dir__, __all__ = _lazy.attach_table(__name__, __file__)
