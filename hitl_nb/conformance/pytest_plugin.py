"""pytest plugin: ``pytest --hitl-agent URL`` runs the conformance checks as test items.

Each check (``CF-1`` .. ``CF-7``, ``EXT-*``) becomes one item,
``hitl-conformance::CF-3``, so ``-k``, ``--junitxml`` and CI reports work as usual.
The checks run once, together, when the first item runs; each item then reports its
own result. An agent that cannot be reached (or a run that cannot start) is one ERROR,
on the first item, with the reason; the other items are skipped.

Without ``--hitl-agent`` the plugin adds its options and the fixtures of
:mod:`hitl_nb.testing.pytest_plugin` (``mock_agent``, ``hitl_client``,
``conversation``; nothing runs until a test asks for one) and nothing else: no items,
no network.

The options match ``hitl-nb conformance`` (with a ``--hitl-`` prefix):
``--hitl-agent URL``, ``--hitl-binding JSONRPC|HTTP+JSON|GRPC``, ``--hitl-a2a-version
1.0|0.3``, ``--hitl-trials N``, ``--hitl-only ID,ID``, ``--hitl-scenario NAME`` /
``--hitl-text TEXT`` / ``--hitl-data JSON`` (how tasks are started),
``--hitl-header NAME:VALUE``, ``--hitl-resume-timeout S``, ``--hitl-json FILE``,
``--hitl-har FILE`` (every exchange, HAR 1.2); and
``--hitl-xfail ID,ID``: checks expected to fail (agents built on the SDKs cannot echo
``A2A-Extensions``: ``--hitl-xfail EXT-ECHO``), reported as xfailed, or XPASS when
they pass after all.

pytest loads this plugin in every run of anyone who has hitl-nb installed, so it imports
only its options at first (no client, forms, widgets or web server): the harness loads
when ``--hitl-agent`` is given, the fixtures' modules when a test asks for one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from hitl_nb.testing import pytest_plugin as _testing_plugin

from ._options import TRANSPORT_OPTIONS

if TYPE_CHECKING:
    from ._driver import Driver
    from ._records import Settings
    from ._report import CheckResult, Report

__all__ = [
    "ConformanceFailed",
    "ConformanceItem",
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_configure",
]


@dataclass(frozen=True)
class _Plan:
    """The checked options of one run."""

    driver: Driver
    headers: dict[str, str]
    only: list[str] | None
    xfail: frozenset[str]
    settings: Settings


_PLAN = pytest.StashKey[_Plan]()
_REPORT = pytest.StashKey["Report"]()
_IDS = pytest.StashKey[list[str]]()
_FAILED = pytest.StashKey[str]()
_FAILED_SHOWN = pytest.StashKey[str]()


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
        help="run the hitl-prompt/v1 conformance checks against the A2A agent at URL "
        "(the hitl_client and conversation fixtures use it too)",
    )
    for name, spec in TRANSPORT_OPTIONS.items():
        group.addoption(f"--hitl-{name}", **spec)
    group.addoption("--hitl-trials", type=int, default=20, metavar="N", help="CF-4 trials")
    group.addoption("--hitl-only", default=None, metavar="IDS", help="e.g. CF-1,CF-3,EXT-ECHO")
    group.addoption(
        "--hitl-xfail",
        action="append",
        default=[],
        metavar="IDS",
        help="checks expected to fail, e.g. EXT-ECHO (repeatable, or comma-separated)",
    )
    group.addoption(
        "--hitl-scenario",
        default=None,
        metavar="NAME",
        help='start tasks with a data part {"scenario": NAME} (default approval)',
    )
    group.addoption("--hitl-text", default=None, metavar="TEXT", help="start tasks with this text")
    group.addoption(
        "--hitl-data", default=None, metavar="JSON", help="start tasks with this JSON object"
    )
    group.addoption(
        "--hitl-header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="an extra request header, e.g. Authorization (repeatable)",
    )
    group.addoption(
        "--hitl-resume-timeout",
        type=float,
        default=5.0,
        metavar="S",
        help="seconds one CF-4 trial may wait for the task to resume (default 5)",
    )
    group.addoption(
        "--hitl-json", default=None, metavar="FILE", help="write the conformance report as JSON"
    )
    group.addoption(
        "--hitl-har",
        default=None,
        metavar="FILE",
        help="write every exchange of the conformance run as HAR 1.2",
    )


def pytest_configure(config: pytest.Config) -> None:
    """With ``--hitl-agent``: check every ``--hitl-*`` option once, as a usage error."""
    if not config.getoption("--hitl-agent"):
        return
    from ._cli import make_driver, parse_headers, parse_ids
    from ._records import Settings

    opt = config.getoption
    only = opt("--hitl-only")
    try:
        plan = _Plan(
            driver=make_driver(
                opt("--hitl-scenario"), opt("--hitl-text"), opt("--hitl-data"), prefix="--hitl-"
            ),
            headers=parse_headers(opt("--hitl-header"), "--hitl-header"),
            only=parse_ids([only], "--hitl-only") if only else None,
            xfail=frozenset(parse_ids(opt("--hitl-xfail"), "--hitl-xfail")),
            settings=Settings(
                trials=opt("--hitl-trials"), resume_timeout=opt("--hitl-resume-timeout")
            ),
        )
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[_PLAN] = plan


class ConformanceFailed(Exception):
    """A check did not pass; the message lists each failure."""


class ConformanceItem(pytest.Item):
    """One check of the conformance run."""

    def __init__(self, *, check_id: str, title: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check_id = check_id
        self.title = title

    def _report(self) -> Report | None:
        """The run's report (made by the first item that asks); None if it could not run."""
        config = self.config
        report = config.stash.get(_REPORT, None)
        if report is not None or _FAILED in config.stash:
            return report
        from ._runner import run

        plan = config.stash[_PLAN]
        opt = config.getoption
        try:
            report = run(
                opt("--hitl-agent"),
                binding=opt("--hitl-binding"),
                version=opt("--hitl-a2a-version"),
                only=config.stash.get(_IDS, None) or plan.only,
                driver=plan.driver,
                headers=plan.headers,
                settings=plan.settings,
                trace=bool(opt("--hitl-har")),
            )
        except Exception as exc:  # bad options, no usable interface: once, for all items
            config.stash[_FAILED] = (
                f"the conformance run against {opt('--hitl-agent')} could not start: "
                f"{type(exc).__name__}: {exc}"
            )
            return None
        if report.unreachable is not None:
            config.stash[_FAILED] = (
                f"the conformance run against {report.agent} could not start: {report.unreachable}"
            )
        config.stash[_REPORT] = report
        return report

    def setup(self) -> None:
        """Run the checks (first item); an agent that cannot be reached is one ERROR."""
        self._report()
        failed = self.config.stash.get(_FAILED, None)
        if failed is None:
            return
        first = self.config.stash.get(_FAILED_SHOWN, None)
        if first is None:
            self.config.stash[_FAILED_SHOWN] = self.nodeid
            pytest.fail(failed, pytrace=False)  # in setup: reported as an ERROR
        pytest.skip(f"not run: the agent could not be reached (see the error of {first})")

    def _result(self) -> CheckResult:
        report = self._report()
        assert report is not None  # setup() skipped or errored otherwise
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
        from ._checks import select

        plan = self.config.stash[_PLAN]
        items: list[pytest.Item] = []
        for spec in select(plan.only):
            item = ConformanceItem.from_parent(
                self, name=spec.id, check_id=spec.id, title=spec.title
            )
            if spec.id in plan.xfail:
                # Only a failed check counts as the expected failure: an agent that
                # cannot be reached is still an error.
                reason = f"--hitl-xfail {spec.id}"
                item.add_marker(pytest.mark.xfail(reason=reason, raises=ConformanceFailed))
            items.append(item)
        return items


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
    items.extend(parent.collect())


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember which checks survived deselection, so only those (and what they need) run."""
    if not session.config.getoption("--hitl-agent"):
        return
    ids = [i.check_id for i in session.items if isinstance(i, ConformanceItem)]
    if ids:
        session.config.stash[_IDS] = ids


def pytest_sessionfinish(session: pytest.Session) -> None:
    """With ``--hitl-json FILE`` / ``--hitl-har FILE``: write the report / the wire trace
    (when the checks ran)."""
    config = session.config
    report = config.stash.get(_REPORT, None)
    if report is None or not config.getoption("--hitl-agent"):
        return
    target = config.getoption("--hitl-json", None)
    if target:
        report.write_json(target)
    har = config.getoption("--hitl-har", None)
    if har and report.trace is not None:
        report.trace.write_har(har)
