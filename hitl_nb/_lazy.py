"""A package's names loaded from its modules on first use (PEP 562).

A package that lists its API as ``{name: module}`` gets a module ``__getattr__`` that
imports ``module`` when ``name`` is first read (then keeps the value, so later reads are
plain lookups) and a ``__dir__`` that lists the names before they are loaded. The
package still imports the same names under ``if TYPE_CHECKING:`` for type checkers,
IDEs and the layer check, which reads imports from the source.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["attach"]


def attach(
    package: str, names: Mapping[str, str], submodules: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``names`` maps each public name to the
    module (relative to the package) that defines it, or to ``"module:name"`` where it
    is defined under another name; ``submodules`` may be read as attributes too
    (imported when first read)."""
    table = dict(names)
    modules = frozenset(submodules)

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            if name in modules:
                return importlib.import_module(f".{name}", package)
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = module.partition(":")
        value = getattr(importlib.import_module(f".{module}", package), attribute or name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
