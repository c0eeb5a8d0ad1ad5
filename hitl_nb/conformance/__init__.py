"""The hitl-prompt/v1 conformance harness: CF-1..CF-7 and further MUSTs, against any agent.

>>> from hitl_nb.conformance import run               # doctest: +SKIP
>>> report = run("http://127.0.0.1:8000", trials=20)   # doctest: +SKIP
>>> report.passed, report["CF-4"].metrics["p95_ms"]    # doctest: +SKIP

Also a command (``hitl-nb conformance URL``) and a pytest plugin
(``pytest -p hitl_nb.conformance.pytest_plugin --hitl-agent URL``). The checks are listed
in :mod:`~hitl_nb.conformance._checks`; how the agent is driven into INPUT_REQUIRED
is the contract of :mod:`~hitl_nb.conformance._driver`.
"""

import typing

from .. import _lazy

if typing.TYPE_CHECKING:  # at run time each name loads its module on first use (PEP 562)
    from ._checks import CHECK_IDS, CHECKS, select
    from ._cli import register as register_cli
    from ._driver import (
        CallableDriver,
        Driver,
        MessageDriver,
        PromptInfo,
        ScenarioDriver,
        as_driver,
    )
    from ._records import Settings
    from ._report import CheckResult, Failure, Report
    from ._runner import arun, run

__all__ = [
    "CHECKS",
    "CHECK_IDS",
    "CallableDriver",
    "CheckResult",
    "Driver",
    "Failure",
    "MessageDriver",
    "PromptInfo",
    "Report",
    "ScenarioDriver",
    "Settings",
    "arun",
    "as_driver",
    "register_cli",
    "run",
    "select",
]

# Lazy, so that pytest loading the plugin (pytest_plugin, in this package) for every
# run of anyone who has hitl-nb installed costs nothing until --hitl-agent is given.
__getattr__, __dir__ = _lazy.attach(
    __name__,
    {
        "CHECKS": "_checks",
        "CHECK_IDS": "_checks",
        "select": "_checks",
        "CallableDriver": "_driver",
        "Driver": "_driver",
        "MessageDriver": "_driver",
        "PromptInfo": "_driver",
        "ScenarioDriver": "_driver",
        "as_driver": "_driver",
        "Settings": "_records",
        "CheckResult": "_report",
        "Failure": "_report",
        "Report": "_report",
        "arun": "_runner",
        "run": "_runner",
        "register_cli": "_cli:register",
    },
)
