"""The agents hitl_nb.agent serves, once per module each: the a2a-sdk agent whose
executor ``await ask(...)`` (tests/helpers/ask_agent.py), the LangGraph graph
(tests/helpers/graph_agent.py), the Pydantic AI agent whose tools ask
(tests/helpers/pydantic_agent.py), the OpenAI Agents SDK agent whose tool approvals ask
(tests/helpers/openai_agent.py), the ADK agent whose tools ask to be confirmed
(tests/helpers/adk_agent.py) and the Microsoft Agent Framework agent whose tool approvals
ask (tests/helpers/maf_agent.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.helpers.ask_agent import AskAgent
from tests.helpers.graph_agent import GraphAgent

if TYPE_CHECKING:
    from tests.helpers.adk_agent import AdkAgent
    from tests.helpers.maf_agent import MafAgent
    from tests.helpers.openai_agent import OpenAIAgent
    from tests.helpers.pydantic_agent import PydanticAgent

#: Pydantic AI 2, ADK 2.15 and the Agent Framework need Python 3.11 (the test extra
#: installs them from there on).
NO_PYDANTIC_AI = NO_ADK = NO_AGENT_FRAMEWORK = sys.version_info < (3, 11)
collect_ignore = (
    ["test_pydantic_ai.py", "test_adk.py", "test_agent_framework.py"] if NO_PYDANTIC_AI else []
)


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
    if NO_PYDANTIC_AI:
        pytest.skip("Pydantic AI 2 needs Python 3.11 or later")
    from tests.helpers.pydantic_agent import PydanticAgent

    with PydanticAgent() as agent:
        yield agent


@pytest.fixture(scope="module")
def openai_agent() -> Iterator[OpenAIAgent]:
    from tests.helpers.openai_agent import OpenAIAgent

    with OpenAIAgent() as agent:
        yield agent


@pytest.fixture(scope="module")
def adk_agent() -> Iterator[AdkAgent]:
    if NO_ADK:
        pytest.skip("ADK 2.15 needs Python 3.11 or later")
    from tests.helpers.adk_agent import AdkAgent

    with AdkAgent() as agent:
        yield agent


@pytest.fixture(scope="module")
def maf_agent() -> Iterator[MafAgent]:
    if NO_AGENT_FRAMEWORK:
        pytest.skip("the Microsoft Agent Framework needs Python 3.11 or later")
    from tests.helpers.maf_agent import MafAgent

    with MafAgent() as agent:
        yield agent
