"""Run the checks against an agent: :func:`run` (blocking) and :func:`arun` (async) on
one interface; :func:`run_each` and :func:`arun_each` once on every binding the card
declares (JSON-RPC, HTTP+JSON, gRPC), one report each."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from typing import Any

from hitl_nb._sync import run_sync
from hitl_nb.a2a import AgentCard, BindingChoice, VersionChoice, binding_choice, grpc_missing
from hitl_nb.client import NoUsableInterface, Trace
from hitl_nb.errors import A2AError, HitlError, TransportError
from hitl_nb.spec import EXTENSION_URI

from ._checks import select
from ._context import CheckContext, CheckFailed, CheckSpec
from ._driver import Driver, as_driver
from ._records import Settings
from ._report import CheckResult, Report
from ._session import Session

__all__ = ["arun", "arun_each", "declared_bindings", "run", "run_each"]

DriverSpec = Driver | str | Mapping[str, Any] | Callable[..., Any] | None


def _budget(spec: CheckSpec, s: Settings) -> float:
    """How long one check may take in all before it is called an error (seconds)."""
    base = 30 + 4 * (s.drive_timeout + s.transition_timeout + s.replay_timeout)
    if spec.id == "CF-4":
        return base + s.trials * (s.drive_timeout + s.resume_timeout)
    return base


def _at_step(result: CheckResult) -> str:
    if not result.steps:
        return ""
    number, _, text = result.steps[-1][0].partition(": ")
    return f"{number} ({text.rstrip('.')}): "


async def run_check(spec: CheckSpec, session: Session, done: list[CheckResult]) -> CheckResult:
    """Run one check and return its result; never raises for what the agent does."""
    result = CheckResult(spec.id, spec.title, spec.group, spec.section)
    ctx = CheckContext(spec, session, result, done)
    t0 = time.perf_counter()
    budget = _budget(spec, session.settings)
    try:
        await asyncio.wait_for(spec.run(ctx), budget)
    except CheckFailed as exc:
        result.failures.append(exc.failure)
    except asyncio.TimeoutError:
        result.error = f"{_at_step(result)}the check did not finish within {budget:g} s"
    except A2AError as exc:
        result.error = (
            f"{_at_step(result)}the agent answered with an unexpected error: "
            f"{type(exc).__name__} (code {exc.code}): {exc}"
        )
    except TransportError as exc:
        result.error = f"{_at_step(result)}{type(exc).__name__}: {exc}"
    except (HitlError, RuntimeError, ValueError, TypeError) as exc:
        result.error = f"{_at_step(result)}{type(exc).__name__}: {exc}"
    result.duration_ms = (time.perf_counter() - t0) * 1000
    if result.error is not None:
        result.outcome = "error"
        if result.steps and result.steps[-1][1] == "passed":
            result.steps[-1] = (result.steps[-1][0], "error")
    elif result.failures:
        result.outcome = "failed"
    return result


def _now() -> str:
    """A report's start: UTC, to the second, RFC 3339 with ``Z``."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def _recorder(trace: bool | Trace) -> Trace | None:
    """The trace a run records into: the caller's, a new one (``True``) or none."""
    if not isinstance(trace, (bool, Trace)):
        raise TypeError(f"trace must be True, False or a Trace, got {type(trace).__name__}")
    return trace if isinstance(trace, Trace) else (Trace() if trace else None)


async def arun(
    url: str,
    *,
    binding: BindingChoice = "auto",
    version: VersionChoice = "auto",
    trials: int | None = None,
    only: Iterable[str] | None = None,
    driver: DriverSpec = None,
    headers: Mapping[str, str] | None = None,
    settings: Settings | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
    trace: bool | Trace = False,
) -> Report:
    """The async form of :func:`run`; ``on_result`` sees each result as it is made."""
    base = settings or Settings()
    settings = dataclasses.replace(
        base,
        binding=binding if binding != "auto" else base.binding,
        version=version if version != "auto" else base.version,
        trials=trials if trials is not None else base.trials,
        headers={**base.headers, **(headers or {})},
    )
    checks = select(only)
    the_driver = as_driver(driver)
    started = _now()
    t0 = time.perf_counter()
    recorder = _recorder(trace)
    session = Session(url, settings, the_driver, recorder)
    report = Report(url, settings.binding, settings.version, EXTENSION_URI, started)
    report.trace = recorder
    report.notes.append(f"driver: {the_driver.description}")
    try:
        try:
            await session.open()
        except TransportError as exc:
            report.unreachable = f"cannot talk to the agent: {type(exc).__name__}: {exc}"
            for spec in checks:
                result = CheckResult(spec.id, spec.title, spec.group, spec.section, "error")
                result.error = report.unreachable
                report.results.append(result)
                if on_result is not None:
                    on_result(result)
            return report
        report.binding, report.version = session.binding, session.version
        report.notes.append(
            f"interface: {session.binding} A2A {session.version} at {session.interface_url}"
        )
        done: list[CheckResult] = []
        for spec in checks:
            result = await run_check(spec, session, done)
            done.append(result)
            report.results.append(result)
            if on_result is not None:
                on_result(result)
    finally:
        report.notes[1:1] = session.notes
        await session.close()
        report.duration_ms = (time.perf_counter() - t0) * 1000
    return report


def declared_bindings(card: AgentCard) -> list[BindingChoice]:
    """The bindings the card's interfaces name, once each, in the card's order (those this
    package does not speak left out)."""
    out: list[BindingChoice] = []
    for iface in card.supported_interfaces:
        try:
            binding = binding_choice(iface.protocol_binding)
        except ValueError:
            continue
        if binding != "auto" and binding not in out:
            out.append(binding)
    return out


def _not_checked(url: str, binding: str, version: str, only: Any, why: str) -> Report:
    """A report of a binding the run cannot check here: every check skipped, saying why."""
    started = _now()
    report = Report(url, binding, version, EXTENSION_URI, started)
    report.notes.append(why)
    for spec in select(only):
        result = CheckResult(spec.id, spec.title, spec.group, spec.section, "skipped")
        result.notes.append(why)
        report.results.append(result)
    return report


async def arun_each(
    url: str,
    *,
    version: VersionChoice = "auto",
    trials: int | None = None,
    only: Iterable[str] | None = None,
    driver: DriverSpec = None,
    headers: Mapping[str, str] | None = None,
    settings: Settings | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
    trace: bool | Trace = False,
) -> list[Report]:
    """The async form of :func:`run_each`."""
    recorder = _recorder(trace)
    base = settings or Settings()
    probe = Session(
        url,
        dataclasses.replace(base, headers={**base.headers, **(headers or {})}),
        as_driver(driver),
    )
    try:
        card = await probe.read_card()
    except (TransportError, HitlError):
        card = None  # arun says why, as a report
    finally:
        await probe.close()
    bindings: list[BindingChoice] = ["auto"]
    if card is not None:
        bindings = declared_bindings(card) or bindings
    reports = []
    for binding in bindings:
        if binding == "GRPC" and grpc_missing() is not None:
            why = f"the card lists a gRPC interface, not checked here: {grpc_missing()}"
            reports.append(_not_checked(url, binding, version, only, why))
            continue
        try:
            report = await arun(
                url,
                binding=binding,
                version=version,
                trials=trials,
                only=only,
                driver=driver,
                headers=headers,
                settings=settings,
                on_result=on_result,
                trace=recorder if recorder is not None else False,
            )
        except NoUsableInterface as exc:  # e.g. HTTP+JSON or gRPC for version="0.3"
            if len(bindings) == 1:
                raise
            report = _not_checked(url, binding, version, only, str(exc))
        reports.append(report)
    return reports


def run_each(
    url: str,
    *,
    version: VersionChoice = "auto",
    trials: int | None = None,
    only: Iterable[str] | None = None,
    driver: DriverSpec = None,
    headers: Mapping[str, str] | None = None,
    settings: Settings | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
    trace: bool | Trace = False,
) -> list[Report]:
    """Run the checks once on every binding the agent's card declares: one
    :class:`~hitl_nb.conformance._report.Report` per binding, in the card's order.

    The arguments are :func:`run`'s (``version`` picks the A2A version on each binding);
    ``trace=True`` records every run in one :class:`~hitl_nb.client.Trace`, which each
    report's ``trace`` is. A gRPC interface where ``hitl-nb[grpc]`` is not installed
    gets a report whose checks are all skipped, saying so (it is not green). When the card
    cannot be read, the one report says why, as :func:`run` does. A binding with no
    interface for ``version`` (HTTP+JSON and gRPC for ``"0.3"``) is reported skipped too.
    """
    return run_sync(
        arun_each(
            url,
            version=version,
            trials=trials,
            only=only,
            driver=driver,
            headers=headers,
            settings=settings,
            on_result=on_result,
            trace=trace,
        )
    )


def run(
    url: str,
    *,
    binding: BindingChoice = "auto",
    version: VersionChoice = "auto",
    trials: int | None = None,
    only: Iterable[str] | None = None,
    driver: DriverSpec = None,
    headers: Mapping[str, str] | None = None,
    settings: Settings | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
    trace: bool | Trace = False,
) -> Report:
    """Run the hitl-prompt/v1 conformance checks against the agent at ``url``.

    ``binding`` (``"auto"``, ``"JSONRPC"``, ``"HTTP+JSON"``, ``"GRPC"``) and ``version``
    (``"auto"``, ``"1.0"``, ``"0.3"``) pick the interface, as for the client; ``trials``
    is the number of CF-4 trials (default 20, the least the spec allows); ``only`` selects
    checks by id (``["CF-3", "EXT-ECHO"]``; CF-7 brings CF-1..CF-6); ``driver`` says how
    a task is started (see :mod:`hitl_nb.conformance._driver`; default: the mock agent's
    ``approval`` scenario); ``headers`` go on every request (authentication);
    ``settings`` holds the timeouts; ``trace=True`` records every exchange of the run
    in ``report.trace`` (a :class:`~hitl_nb.client.Trace`: shown as a timeline in a
    notebook, exported with ``write_har``).

    Returns a :class:`~hitl_nb.conformance._report.Report` (a table in a notebook).
    Raises ``ValueError`` for a bad argument and
    :class:`~hitl_nb.client.NoUsableInterface` when the card offers no interface that
    fits; everything the agent does wrong ends up in the report. Safe in a notebook
    cell: the run uses a private event loop thread.
    """
    return run_sync(
        arun(
            url,
            binding=binding,
            version=version,
            trials=trials,
            only=only,
            driver=driver,
            headers=headers,
            settings=settings,
            on_result=on_result,
            trace=trace,
        )
    )
