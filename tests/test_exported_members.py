"""__all__ is the public API: complete, sorted, documented, and nothing else leaks."""

import inspect
import types

import hitl_nb


def test_all_lists_every_public_name_and_nothing_else():
    public = {
        name
        for name, value in vars(hitl_nb).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
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
