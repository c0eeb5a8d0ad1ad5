"""The layers of docs/architecture.md, checked on the imports of every module.

The table in docs/architecture.md is the one home of the layering: this test reads it.
A module imports only from its own layer or the layers below; no two modules import
each other, directly or round a longer circle; and code outside a subpackage reaches
it through its ``__init__`` only, never through one of its ``_private`` modules.
Imports are read from the source (``ast``), those inside functions included: a deferred
import is still a dependency. Imports under ``if TYPE_CHECKING:`` count too, for the
layers and for circles: a type named from above is still an upward dependency, and two
modules that need each other's types are one concern split in two (give the shared
type a module of its own).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "hitl_nb"
DOC = ROOT / "docs" / "architecture.md"


def module_names() -> dict[str, Path]:
    """Every module of the package: dotted name -> file."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = module_names()


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` names (relative levels resolved)."""
    if node.level == 0:
        return node.module or ""
    is_package = MODULES[module].name == "__init__.py"
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str) -> Iterator[tuple[str, int]]:
    """``(imported hitl_nb module, line)`` for each import in ``module``'s source.

    ``from pkg import name`` counts as an import of ``pkg.name`` when that is a module,
    else of ``pkg``.
    """
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    seen = set()
    for found in _imports(module, tree):
        if found not in seen:
            seen.add(found)
            yield found


def _imports(module: str, tree: ast.Module) -> Iterator[tuple[str, int]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "hitl_nb":
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            if target.split(".")[0] != "hitl_nb":
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield (sub if sub in MODULES else target), node.lineno


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports, for types too (itself left out)."""
    graph: dict[str, set[str]] = {}
    for module in MODULES:
        imported = imports_of(module)
        targets = {t for t, _ in imported if t in MODULES and t != module}
        graph[module] = targets
    return graph


def read_layers(text: str) -> list[tuple[str, list[str]]]:
    """``(layer, [module or package names])`` from the doc's table, top layer first."""
    rows = []
    in_table = False
    for line in text.splitlines():
        if line.startswith("| layer | modules |"):
            in_table = True
            continue
        if in_table:
            if not line.startswith("|"):
                break
            if set(line) <= set("|- "):
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            names = re.findall(r"`([\w./]+)`", cells[1])
            rows.append((cells[0], names))
    return rows


LAYERS = read_layers(DOC.read_text(encoding="utf-8"))


def layer_of(module: str) -> int:
    """The layer's index (0 = top) of a module, from its file or its subpackage."""
    rel = MODULES[module].relative_to(PACKAGE)
    keys = [f"{rel.parts[0]}/"] if len(rel.parts) > 1 else [rel.name]
    for index, (_, names) in enumerate(LAYERS):
        if any(k in names for k in keys):
            return index
    raise LookupError(f"{rel} is in no layer of docs/architecture.md's table: add it there")


def subpackage_of(module: str) -> str | None:
    """``hitl_nb.client`` for ``hitl_nb.client._http``; None for top-level modules. A
    package inside a subpackage (``hitl_nb.agent.langgraph``) is part of it."""
    parts = module.split(".")
    if MODULES[module].name == "__init__.py":
        return ".".join(parts[:2]) if len(parts) > 1 else None
    return ".".join(parts[:2]) if len(parts) > 2 else None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        # Tarjan's algorithm, iterative: the package's graph is small but deep enough
        # that recursion would be fragile.
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


# -- the tests ------------------------------------------------------------------------------


def test_the_doc_has_a_layer_table():
    names = [layer for layer, _ in LAYERS]
    assert names[0] == "entry points" and names[-1] == "ground", names
    listed = [n for _, ns in LAYERS for n in ns]
    assert len(listed) == len(set(listed)), "a module is listed in two layers"


def test_every_module_has_a_layer():
    missing = []
    for module in MODULES:
        try:
            layer_of(module)
        except LookupError as exc:
            missing.append(str(exc))
    assert not missing, "\n".join(missing)


def test_every_listed_name_exists():
    for _, names in LAYERS:
        for name in names:
            assert (PACKAGE / name).exists(), f"docs/architecture.md lists {name}: no such file"


def test_imports_point_down():
    upward = []
    for module in MODULES:
        mine = layer_of(module)
        for target, line in imports_of(module):
            if target in MODULES and layer_of(target) < mine:
                upward.append(
                    f"{MODULES[module].relative_to(ROOT)}:{line} imports {target} "
                    f"({LAYERS[layer_of(target)][0]} is above {LAYERS[mine][0]})"
                )
    assert not upward, "\n".join(upward)


def test_no_import_circles():
    circles = cycles(import_graph())
    assert not circles, "modules that import each other: " + "; ".join(
        " <-> ".join(c) for c in circles
    )


def test_other_subpackages_are_reached_through_their_init():
    private = re.compile(r"^_[a-z]")
    reaching = []
    for module in MODULES:
        home = subpackage_of(module)
        for target, line in imports_of(module):
            if target not in MODULES:
                continue
            owner = subpackage_of(target)
            last = target.rsplit(".", 1)[-1]
            if owner is not None and owner != home and private.match(last):
                reaching.append(f"{MODULES[module].relative_to(ROOT)}:{line} imports {target}")
    assert not reaching, "import these through the subpackage's __init__:\n" + "\n".join(reaching)


# -- the checker checks itself on small made-up graphs ----------------------------------------


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        pytest.param({"a": {"b"}, "b": set()}, [], id="a-line"),
        pytest.param({"a": {"b"}, "b": {"a"}}, [["a", "b"]], id="two-import-each-other"),
        pytest.param(
            {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}},
            [["a", "b", "c"]],
            id="a-circle-of-three",
        ),
        pytest.param(
            {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}},
            [["a", "b"], ["c", "d"]],
            id="two-circles",
        ),
    ],
)
def test_cycles_finds_circles(graph, expected):
    assert cycles(graph) == expected


def test_read_layers_reads_a_table():
    text = "intro\n\n| layer | modules | concern |\n|---|---|---|\n| top | `cli.py`, `x/` | a |\n"
    text += "| ground | `errors.py` | b |\n\nafter\n"
    assert read_layers(text) == [("top", ["cli.py", "x/"]), ("ground", ["errors.py"])]
