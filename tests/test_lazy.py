"""The public table of a package (``hitl_nb._lazy``): read from the ``TYPE_CHECKING``
block of its ``__init__.py``, it gives ``__all__`` and the names loaded on first use."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap

import pytest

import hitl_nb
from hitl_nb._lazy import public_order, read_table

TABLED = ["hitl_nb", "hitl_nb.conformance", "hitl_nb.testing"]


@pytest.mark.parametrize("name", TABLED)
def test_all_is_the_table(name: str) -> None:
    package = importlib.import_module(name)
    with open(package.__file__, encoding="utf-8") as f:
        table = read_table(f.read())
    extra = {"__version__"} if name == "hitl_nb" else set()
    assert set(package.__all__) == set(table) | extra
    for public, module in table.items():
        defined = importlib.import_module(module, name)
        assert getattr(package, public) is getattr(defined, public)


def test_a_table_reads_each_row() -> None:
    source = textwrap.dedent(
        """
        import typing
        from . import _lazy
        if typing.TYPE_CHECKING:
            from .client import HitlClient as HitlClient, HttpLimits as HttpLimits
            from .._display import STABLE as STABLE
        x = 1
        """
    )
    assert read_table(source) == {
        "HitlClient": ".client",
        "HttpLimits": ".client",
        "STABLE": ".._display",
    }


ROWS = [
    ("    from .client import HitlClient\n", "as HitlClient", 3, "no-as"),
    ("    from .client import HitlClient as Client\n", "as HitlClient", 3, "renamed"),
    ("    from hitl_nb.client import X as X\n", "relative", 3, "absolute"),
    ("    X = 1\n", "relative", 3, "not-an-import"),
    ("    from .a import X as X\n    from .b import X as X\n", "twice", 4, "twice"),
]


@pytest.mark.parametrize(
    ("block", "words", "line"), [pytest.param(*row[:3], id=row[3]) for row in ROWS]
)
def test_a_row_that_is_not_an_export_is_refused_naming_its_line(
    block: str, words: str, line: int
) -> None:
    source = f"import typing\nif typing.TYPE_CHECKING:\n{block}"
    with pytest.raises(ValueError, match=words) as refused:
        read_table(source, "pkg/__init__.py")
    assert f"line {line}" in str(refused.value)


def test_a_package_without_one_table_is_refused() -> None:
    with pytest.raises(ValueError, match="one 'if TYPE_CHECKING:' block"):
        read_table("import typing\n")


def test_all_is_ordered_constants_classes_functions() -> None:
    assert public_order(["run", "Report", "CHECKS", "arun", "CHECK_IDS", "Driver"]) == [
        "CHECKS",
        "CHECK_IDS",
        "Driver",
        "Report",
        "arun",
        "run",
    ]


def test_a_notebook_user_gets_back_what_is_exported() -> None:
    # What card.answer() returns, what an inbox lists, what a gateway raises.
    for name in ("Outcome", "InboxItem", "GatewayRefused", "GatewayUnavailable"):
        assert name in hitl_nb.__all__
    # Internals a notebook never needs stay in their subpackage.
    for name, home in [
        ("FORMAT_CHECKER", "hitl_nb.validation"),
        ("ResponderGate", "hitl_nb.policy"),
        ("Finding", "hitl_nb.spec"),
    ]:
        assert name not in hitl_nb.__all__ and not hasattr(hitl_nb, name)
        assert name in importlib.import_module(home).__all__


def test_the_conformance_table_loads_nothing_until_a_name_is_read() -> None:
    code = (
        "import sys, hitl_nb.conformance as c, hitl_nb.testing as t; "
        "print(sorted(m for m in sys.modules if m.startswith(('hitl_nb.conformance.', "
        "'hitl_nb.testing.'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    assert out.strip() == "[]", out
