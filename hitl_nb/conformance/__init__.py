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

# The public table (see hitl_nb._lazy): each name loads its module on first use, so that
# pytest loading the plugin (pytest_plugin, in this package) for every run of anyone who
# has hitl-nb installed costs nothing until --hitl-agent is given.
if typing.TYPE_CHECKING:
    from ._checks import CHECK_IDS as CHECK_IDS
    from ._checks import CHECKS as CHECKS
    from ._checks import select as select
    from ._cli import register_cli as register_cli
    from ._driver import CallableDriver as CallableDriver
    from ._driver import Driver as Driver
    from ._driver import MessageDriver as MessageDriver
    from ._driver import PromptInfo as PromptInfo
    from ._driver import ScenarioDriver as ScenarioDriver
    from ._driver import as_driver as as_driver
    from ._records import Settings as Settings
    from ._report import CheckResult as CheckResult
    from ._report import Failure as Failure
    from ._report import Report as Report
    from ._runner import arun as arun
    from ._runner import arun_each as arun_each
    from ._runner import run as run
    from ._runner import run_each as run_each

__getattr__, __dir__, __all__ = _lazy.attach_table(__name__, __file__)
