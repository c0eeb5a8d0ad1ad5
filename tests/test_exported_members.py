"""__all__ is the public API: complete, sorted, documented, and nothing else leaks."""

import importlib
import inspect
import types

import pytest

import hitl_nb


def test_all_lists_every_public_name_and_nothing_else():
    # dir(): names loaded on first use (the mock agent's) count too
    public = {
        name
        for name in dir(hitl_nb)
        if not name.startswith("_") and not isinstance(getattr(hitl_nb, name), types.ModuleType)
    }
    assert set(hitl_nb.__all__) - {"__version__"} == public


def test_all_is_sorted_constants_first():
    names = [n for n in hitl_nb.__all__ if n != "__version__"]
    constants = [n for n in names if n.isupper()]
    rest = [n for n in names if not n.isupper()]
    assert names == sorted(constants) + sorted(rest, key=lambda n: (n[0].islower(), n))


def test_every_public_object_has_a_docstring():
    for name in hitl_nb.__all__:
        obj = getattr(hitl_nb, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), f"{name} has no docstring"


def test_version_matches_the_distribution():
    from importlib.metadata import version

    assert hitl_nb.__version__ == version("hitl-nb")


def _subpackages() -> list[str]:
    import pkgutil

    return sorted(
        info.name for info in pkgutil.iter_modules(hitl_nb.__path__, "hitl_nb.") if info.ispkg
    )


SUBPACKAGES = _subpackages()
# Data only: the bundled JSON Schemas, no Python API.
WITHOUT_API = {"hitl_nb.schemas"}


def test_the_subpackages_are_found():
    assert {"hitl_nb.a2a", "hitl_nb.client", "hitl_nb.forms", "hitl_nb.mock_agent"} <= set(
        SUBPACKAGES
    )


@pytest.mark.parametrize("name", [n for n in SUBPACKAGES if n not in WITHOUT_API])
def test_each_subpackage_exports_its_api_and_nothing_else(name):
    package = importlib.import_module(name)
    exported = getattr(package, "__all__", None)
    assert exported, f"{name} has no __all__"
    assert len(exported) == len(set(exported)), f"{name}.__all__ lists a name twice"
    for item in exported:
        assert not item.startswith("_"), f"{name}.__all__ exports the private {item}"
        assert hasattr(package, item), f"{name}.__all__ lists {item}, which does not exist"
        obj = getattr(package, item)
        assert not isinstance(obj, types.ModuleType), f"{name}.__all__ exports a module: {item}"
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), f"{name}.{item} has no docstring"
    # Public names of hitl-nb's own objects (typing helpers and the like are not API).
    public = {
        attr
        for attr, value in vars(package).items()
        if not attr.startswith("_")
        and not isinstance(value, types.ModuleType)
        and getattr(value, "__module__", "hitl_nb").startswith("hitl_nb")
        and attr != "annotations"  # from __future__ import annotations
    }
    assert public - set(exported) == set(), f"{name} has public names missing from __all__"


def test_the_data_only_packages_have_no_python_api():
    for name in WITHOUT_API:
        package = importlib.import_module(name)
        assert not [a for a in vars(package) if not a.startswith("_") and a != "annotations"]


# Modules a user imports by name; every other module is _private (the httpx rule).
PUBLIC_TOP_LEVEL = {"cli", "errors", "policy", "responders", "spec", "tutorials"}
PUBLIC_IN_SUBPACKAGES = {
    "pytest_plugin",  # entry points pytest loads by module name
    "langgraph",  # hitl_nb.agent.langgraph: a part with an extra of its own
    "pydantic_ai",  # hitl_nb.agent.pydantic_ai: likewise
    "openai_agents",  # hitl_nb.agent.openai_agents: likewise
    "adk",  # hitl_nb.agent.adk: likewise
    "agent_framework",  # hitl_nb.agent.agent_framework: likewise
}


def test_implementation_modules_are_private():
    import pkgutil

    top = {i.name for i in pkgutil.iter_modules(hitl_nb.__path__) if not i.ispkg}
    assert {n for n in top if not n.startswith("_")} == PUBLIC_TOP_LEVEL, (
        "a new public top-level module: name it _private or add it to PUBLIC_TOP_LEVEL"
    )
    for name in SUBPACKAGES:
        package = importlib.import_module(name)
        inner = {i.name for i in pkgutil.iter_modules(package.__path__)}
        public = {n for n in inner if not n.startswith("_")} - PUBLIC_IN_SUBPACKAGES
        assert not public, f"{name}: implementation modules must be _private: {sorted(public)}"
