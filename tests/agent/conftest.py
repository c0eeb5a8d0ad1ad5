"""The agents hitl_nb.agent serves, once per module each: the a2a-sdk agent whose
executor ``await ask(...)`` (tests/helpers/ask_agent.py), the LangGraph graph
(tests/helpers/graph_agent.py) and the Pydantic AI agent whose tools ask
(tests/helpers/pydantic_agent.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.ask_agent import AskAgent
from tests.helpers.graph_agent import GraphAgent
from tests.helpers.pydantic_agent import PydanticAgent


@pytest.fixture(scope="module")
def ask_agent() -> Iterator[AskAgent]:
    with AskAgent() as agent:
        yield agent


@pytest.fixture(scope="module")
def graph_agent() -> Iterator[GraphAgent]:
    with GraphAgent() as agent:
        yield agent


@pytest.fixture(scope="module")
def pydantic_agent() -> Iterator[PydanticAgent]:
    with PydanticAgent() as agent:
        yield agent
