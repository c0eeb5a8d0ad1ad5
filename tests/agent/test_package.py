"""``hitl_nb.agent`` is cheap to import: the SDK (protobuf, pydantic, starlette) and
LangGraph load with the first name used, not with the package."""

from __future__ import annotations

import inspect
import subprocess
import sys

import hitl_nb.agent
import hitl_nb.agent.langgraph


def _modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_importing_the_package_loads_neither_the_sdk_nor_langgraph() -> None:
    loaded = _modules_after("import hitl_nb.agent, hitl_nb.agent.langgraph")
    assert not {m for m in loaded if m.split(".")[0] in ("a2a", "langgraph", "starlette")}
    assert "a2a.server.agent_execution" in _modules_after("from hitl_nb.agent import ask")


def test_every_public_name_loads_and_says_what_it_is() -> None:
    for package in (hitl_nb.agent, hitl_nb.agent.langgraph):
        assert package.__all__ == sorted(package.__all__, key=lambda n: (not n.isupper(), n))
        for name in package.__all__:
            value = getattr(package, name)
            if inspect.isclass(value) or inspect.isfunction(value):
                assert inspect.getdoc(value), f"{package.__name__}.{name} has no docstring"
