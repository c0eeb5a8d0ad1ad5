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

:class:`GraphExecutor` is the executor itself, for an a2a-sdk server of your own
(``GraphExecutor(graph, hitl)`` with the agent's :class:`~hitl_nb.agent.HitlExtension`).
"""

import typing

from ... import _lazy

if typing.TYPE_CHECKING:  # at run time each name loads its module on first use (PEP 562)
    from ._executor import GraphExecutor, default_inputs, default_result
    from ._serve import serve_graph

__all__ = ["GraphExecutor", "default_inputs", "default_result", "serve_graph"]

__getattr__, __dir__ = _lazy.attach(
    __name__,
    {
        "GraphExecutor": "_executor",
        "default_inputs": "_executor",
        "default_result": "_executor",
        "serve_graph": "_serve",
    },
)
