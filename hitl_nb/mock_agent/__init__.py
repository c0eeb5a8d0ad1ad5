"""The bundled A2A agent that speaks hitl-prompt/v1: scripted, complete, and breakable.

>>> from hitl_nb.mock_agent import MockAgent          # doctest: +SKIP
>>> with MockAgent() as agent:                        # doctest: +SKIP
...     agent.url                                     # JSON-RPC + HTTP+JSON, A2A 1.0 and 0.3

See :mod:`~hitl_nb.mock_agent._scenarios` for the scripts (and how to add yours) and
:mod:`~hitl_nb.mock_agent._faults` for the fault modes.
"""

from __future__ import annotations

from hitl_nb.mock_agent._cli import register_cli
from hitl_nb.mock_agent._faults import FAULT_NAMES, Faults
from hitl_nb.mock_agent._run import MockAgent, mock_agent_handlers
from hitl_nb.mock_agent._scenarios import (
    BUILTIN_SCENARIOS,
    DEFAULT_SCENARIO,
    Scenario,
    ScenarioRegistry,
    Step,
    TaskEnd,
)
from hitl_nb.mock_agent._script import TIMEOUT_KEY
from hitl_nb.mock_agent._store import MemoryTaskStore, SQLiteTaskStore

__all__ = [
    "BUILTIN_SCENARIOS",
    "DEFAULT_SCENARIO",
    "FAULT_NAMES",
    "TIMEOUT_KEY",
    "Faults",
    "MemoryTaskStore",
    "MockAgent",
    "SQLiteTaskStore",
    "Scenario",
    "ScenarioRegistry",
    "Step",
    "TaskEnd",
    "mock_agent_handlers",
    "register_cli",
]
