"""The two agents hitl_nb.agent serves, once per module each: the a2a-sdk agent whose
executor ``await ask(...)`` (tests/helpers/ask_agent.py) and the LangGraph graph
(tests/helpers/graph_agent.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.ask_agent import AskAgent
from tests.helpers.graph_agent import GraphAgent


@pytest.fixture(scope="module")
def ask_agent() -> Iterator[AskAgent]:
    with AskAgent() as agent:
        yield agent


@pytest.fixture(scope="module")
def graph_agent() -> Iterator[GraphAgent]:
    with GraphAgent() as agent:
        yield agent
