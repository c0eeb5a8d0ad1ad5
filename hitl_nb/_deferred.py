"""Slow format libraries load when a format needs them, not when hitl_nb is imported.

Importing jsonschema imports every optional format library it finds. Three of them cost
most of ``import hitl_nb`` (measured by ``benchmarks/bench_import.py``): the IRI grammar
``rfc3987_syntax`` (1.2-1.8 s: it builds an Earley parser), ``isoduration`` (with
``arrow``) and ``rfc3986_validator`` (compiles its grammar as regular expressions).
Every format check stays: while jsonschema is imported, these names resolve to small
stand-in modules whose functions import the real library on their first call and hand
the call on. The stand-ins leave ``sys.modules`` right after, so any other import of
these libraries gets the real one. Nothing changes when jsonschema (or a library) was
imported already, or when a library is not installed.

Importing this module imports nothing heavy: it puts a finder first on
``sys.meta_path`` that does the above when jsonschema is first imported, by hitl-nb or
anyone else in the process (nbformat, for one), then steps aside.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["import_jsonschema", "install"]

#: library -> the functions jsonschema's format checkers call.
_FUNCTIONS = {
    "rfc3987_syntax": ("is_valid_syntax",),
    "rfc3986_validator": ("validate_rfc3986",),
    "isoduration": ("parse_duration",),
}
#: library -> exception classes jsonschema names in ``raises=`` (stand-ins are
#: ValueErrors; the real exception is turned into the stand-in on the way out).
_EXCEPTIONS = {"isoduration": ("DurationParsingException",)}


def _stand_in(name: str) -> types.ModuleType:
    module = types.ModuleType(name, f"stand-in for {name}: the real one loads on first use")
    errors = {e: type(e, (ValueError,), {"__module__": name}) for e in _EXCEPTIONS.get(name, ())}
    for error_name, error in errors.items():
        setattr(module, error_name, error)

    def forward(function: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            real = importlib.import_module(name)
            try:
                return getattr(real, function)(*args, **kwargs)
            except Exception as exc:
                for error_name, error in errors.items():
                    if isinstance(exc, getattr(real, error_name)):
                        raise error(str(exc)) from exc
                raise

        call.__name__ = call.__qualname__ = function
        call.__doc__ = f"{name}.{function}, imported on the first call."
        return call

    for function in _FUNCTIONS[name]:
        setattr(module, function, forward(function))
    return module


class _Loader(importlib.abc.Loader):
    """jsonschema's own loader, with the stand-ins in place while the module runs."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self._loader.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: types.ModuleType) -> None:
        placed: dict[str, types.ModuleType] = {}
        for name in _FUNCTIONS:
            if name in sys.modules or importlib.util.find_spec(name) is None:
                continue
            placed[name] = sys.modules[name] = _stand_in(name)
        try:
            self._loader.exec_module(module)
        finally:
            for name, stand_in in placed.items():
                if sys.modules.get(name) is stand_in:
                    del sys.modules[name]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)  # resource readers and the like


class _Finder(importlib.abc.MetaPathFinder):
    """Finds jsonschema as the others do, once, and gives it :class:`_Loader`."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "jsonschema":
            return None
        uninstall()
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


_FINDER = _Finder()


def install() -> None:
    """Defer the slow libraries of the process's first ``import jsonschema``, whoever
    imports it (nothing is imported now)."""
    if "jsonschema" not in sys.modules and _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def uninstall() -> None:
    """Take the finder off ``sys.meta_path`` (jsonschema is being imported)."""
    while _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)


def import_jsonschema() -> None:
    """Import jsonschema with the slow format libraries deferred (see the module doc)."""
    install()
    importlib.import_module("jsonschema")


install()
