"""pytest plugin: ``pytest --hitl-agent URL`` runs the conformance checks as test items.

Each check (``CF-1`` .. ``CF-7``, ``EXT-*``) becomes one item,
``hitl-conformance::CF-3``, so ``-k``, ``--junitxml`` and CI reports work as usual.
The checks run once, together, when the first item runs; each item then reports its
own result. Without ``--hitl-agent`` the plugin adds its options and the fixtures of
:mod:`hitl_nb.testing.pytest_plugin` (``mock_agent``, ``hitl_client``,
``conversation``; nothing runs until a test asks for one) and nothing else: no items,
no network.

Options: ``--hitl-agent URL``, ``--hitl-binding``, ``--hitl-a2a-version``,
``--hitl-trials N``, ``--hitl-only ID,ID``, ``--hitl-scenario NAME``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hitl_nb.a2a import BINDINGS, VERSIONS
from hitl_nb.testing import pytest_plugin as _testing_plugin

from ._checks import select
from ._report import CheckResult, Report
from ._runner import run

__all__ = ["ConformanceItem", "pytest_addoption", "pytest_collection_modifyitems"]

_REPORT = pytest.StashKey[Report]()
_IDS = pytest.StashKey[list[str]]()
_FAILED = pytest.StashKey[str]()


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Register the ``--hitl-*`` options, and the fixtures of :mod:`hitl_nb.testing`."""
    name = _testing_plugin.__name__
    if pluginmanager.get_plugin(name) is None and not pluginmanager.is_registered(_testing_plugin):
        # Registered from here, its own pytest_addoption still runs (a historic hook).
        pluginmanager.register(_testing_plugin, name)
    group = parser.getgroup("hitl-conformance", "hitl-prompt/v1 conformance harness")
    group.addoption(
        "--hitl-agent",
        metavar="URL",
        default=None,
        help="run the hitl-prompt/v1 conformance checks against the A2A agent at URL",
    )
    group.addoption(
        "--hitl-binding",
        choices=("auto", *BINDINGS),
        default="auto",
        help="protocol binding (default: the card's first usable interface)",
    )
    group.addoption(
        "--hitl-a2a-version",
        choices=("auto", *VERSIONS),
        default="auto",
        help="A2A wire version (default: 1.0 when the card offers it)",
    )
    group.addoption("--hitl-trials", type=int, default=20, metavar="N", help="CF-4 trials")
    group.addoption("--hitl-only", default=None, metavar="IDS", help="e.g. CF-1,CF-3,EXT-ECHO")
    group.addoption(
        "--hitl-scenario",
        default="approval",
        metavar="NAME",
        help='start tasks with a data part {"scenario": NAME} (default approval)',
    )


class ConformanceFailed(Exception):
    """A check did not pass; the message lists each failure."""


class ConformanceItem(pytest.Item):
    """One check of the conformance run."""

    def __init__(self, *, check_id: str, title: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check_id = check_id
        self.title = title

    def _result(self) -> CheckResult:
        config = self.config
        report = config.stash.get(_REPORT, None)
        if report is None:
            failed = config.stash.get(_FAILED, None)
            if failed is not None:
                raise ConformanceFailed(failed)
            opt = config.getoption
            only = opt("--hitl-only")
            try:
                report = run(
                    opt("--hitl-agent"),
                    binding=opt("--hitl-binding"),
                    version=opt("--hitl-a2a-version"),
                    trials=opt("--hitl-trials"),
                    only=config.stash.get(_IDS, None) or (only.split(",") if only else None),
                    driver=opt("--hitl-scenario"),
                )
            except Exception as exc:  # bad options, no usable interface: once, for all items
                config.stash[_FAILED] = f"the conformance run could not start: {exc}"
                raise ConformanceFailed(config.stash[_FAILED]) from None
            config.stash[_REPORT] = report
        return report[self.check_id]

    def runtest(self) -> None:
        """Fail when the check failed or errored; skip when it was skipped."""
        result = self._result()
        if result.outcome == "skipped":
            pytest.skip(result.message or "skipped")
        if not result.passed:
            raise ConformanceFailed("\n".join(result.describe()))

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        """The check's failures, without a traceback."""
        if isinstance(excinfo.value, ConformanceFailed):
            return f"{self.check_id} {self.title}:\n{excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the item comes from, for pytest's report."""
        return self.path, None, f"hitl-prompt/v1 {self.check_id}: {self.title}"


class _Conformance(pytest.Collector):
    """The parent of the conformance items."""

    def collect(self) -> list[pytest.Item]:
        only = self.config.getoption("--hitl-only")
        specs = select(only.split(",") if only else None)
        return [
            ConformanceItem.from_parent(self, name=s.id, check_id=s.id, title=s.title)
            for s in specs
        ]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """With ``--hitl-agent``, add one item per selected check (nothing otherwise)."""
    if not config.getoption("--hitl-agent"):
        return
    parent = _Conformance.from_parent(
        session, name="hitl-conformance", path=config.rootpath, nodeid="hitl-conformance"
    )
    try:
        items.extend(parent.collect())
    except ValueError as exc:
        raise pytest.UsageError(f"--hitl-only: {exc}") from None


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember which checks survived deselection, so only those (and what they need) run."""
    if not session.config.getoption("--hitl-agent"):
        return
    ids = [i.check_id for i in session.items if isinstance(i, ConformanceItem)]
    if ids:
        session.config.stash[_IDS] = ids
