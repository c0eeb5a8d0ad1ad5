"""A package's names loaded from its modules on first use (PEP 562), from one table.

A package's public table is the ``if typing.TYPE_CHECKING:`` block of its
``__init__.py``, one row per name::

    if typing.TYPE_CHECKING:  # the public table
        from .client import HitlClient as HitlClient
        from .errors import HitlError as HitlError

Type checkers, editors and the layer check read those rows as imports (``X as X`` is
PEP 484's mark of a name exported on purpose). At run time :func:`attach_table` reads
the same rows from the file (``ast``, well under a millisecond for a package's table)
and gives the package its ``__all__``, a module ``__getattr__`` that imports a name's
module when the name is first read (then keeps the value, so later reads are plain
lookups) and a ``__dir__`` that lists the names before they are loaded. A new public
name is one row; nothing else lists it.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["attach", "attach_table", "public_order", "read_table"]


def attach(
    package: str, names: Mapping[str, str], submodules: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``names`` maps each public name to the
    module that defines it, relative to the package (``"_postgres"``, or as an import
    writes it: ``".client"``, ``".._display"``); ``submodules`` may be read as
    attributes too (imported when first read)."""
    table = {name: m if m.startswith(".") else f".{m}" for name, m in names.items()}
    modules = frozenset(submodules)

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            if name in modules:
                return importlib.import_module(f".{name}", package)
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def read_table(source: str, where: str = "the package") -> dict[str, str]:
    """The public table of a package's ``__init__.py`` source: ``{name: module}``, the
    module as its row writes it (``".client"``). Raises ``ValueError`` naming the row
    that is not ``from .module import Name as Name``."""
    blocks = [
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.If) and _is_type_checking(node.test)
    ]
    if len(blocks) != 1:
        raise ValueError(f"{where}: one 'if TYPE_CHECKING:' block holds the public table")
    table: dict[str, str] = {}
    for row in blocks[0].body:
        if not isinstance(row, ast.ImportFrom) or row.level == 0:
            raise ValueError(
                f"{where}, line {row.lineno}: the public table holds only relative "
                "imports, 'from .module import Name as Name'"
            )
        module = "." * row.level + (row.module or "")
        for alias in row.names:
            if alias.asname != alias.name:
                raise ValueError(
                    f"{where}, line {row.lineno}: write 'from {module} import {alias.name} "
                    f"as {alias.name}' (the 'as' exports the name for type checkers)"
                )
            if alias.name in table:
                raise ValueError(f"{where}, line {row.lineno}: {alias.name} is listed twice")
            table[alias.name] = module
    return table


def public_order(names: Iterable[str]) -> list[str]:
    """``__all__``'s order: constants first, then classes, then functions, each sorted."""
    names = list(names)
    constants = sorted(n for n in names if n.isupper())
    rest = sorted((n for n in names if not n.isupper()), key=lambda n: (n[0].islower(), n))
    return constants + rest


def attach_table(
    package: str, init_file: str, submodules: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package`` from the public table of its
    ``__init__.py`` (``init_file``, the package's ``__file__``); see the module docstring."""
    source = Path(init_file).read_text(encoding="utf-8")
    table = read_table(source, init_file)
    getattr_, dir_ = attach(package, table, submodules)
    return getattr_, dir_, public_order(table)
