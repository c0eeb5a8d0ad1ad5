"""``hitl-nb conformance URL``: run the checks, print the table, exit 0 only when green.

Exit status: 0 every selected check passed, 1 something failed, 2 bad arguments or no
usable interface. ``--json FILE`` and ``--junit FILE`` write the report as well.
By default (``--binding all``) the checks run once on every binding the card declares
(JSON-RPC, HTTP+JSON, gRPC), a table for each; it exits 0 only when every one is green
(``--json`` then writes ``{"passed": ..., "reports": [...]}``, ``--junit`` every
binding's suites). ``--binding auto`` or a binding's name checks one: ``--json`` is then
that one report.

While the checks run, a terminal shows one live line on stderr (rewritten in place,
erased before the table); off a terminal nothing but the table is written, once.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any, TextIO

from hitl_nb.errors import HitlError

from ._checks import CHECK_IDS, select
from ._driver import Driver, MessageDriver, ScenarioDriver
from ._options import TRANSPORT_OPTIONS
from ._records import Settings
from ._report import CheckResult, Report
from ._runner import run, run_each

__all__ = [
    "TRANSPORT_OPTIONS",
    "add_arguments",
    "build_parser",
    "main",
    "make_driver",
    "parse_headers",
    "parse_ids",
    "register_cli",
    "run_cli",
]

_DESCRIPTION = (
    "Run the hitl-prompt/v1 conformance scenarios CF-1..CF-7 and the further MUST checks "
    f"({', '.join(i for i in CHECK_IDS if i.startswith('EXT'))}) against the A2A agent at "
    "URL. By default each task is started with the mock agent's convention, a data part "
    '{"scenario": "approval"}; use --scenario, --text or --data for other agents.'
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the conformance options to ``parser``."""
    parser.add_argument("url", help="the agent's base URL (its card is read from it)")
    for name, spec in TRANSPORT_OPTIONS.items():
        if name == "binding":
            spec = {
                **spec,
                "choices": (*spec["choices"], "all"),
                # The command checks every binding the card declares unless told one.
                "default": "all",
                "help": "protocol binding (default all: each binding the card declares, in "
                "turn; auto: the card's first usable interface)",
            }
        parser.add_argument(f"--{name}", **spec)
    parser.add_argument(
        "--trials", type=int, default=20, metavar="N", help="CF-4 trials (default 20)"
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="ID",
        help=f"run only these checks (CF-7 brings CF-1..CF-6): {' '.join(CHECK_IDS)}",
    )
    parser.add_argument("--json", metavar="FILE", help="write the report as JSON")
    parser.add_argument("--junit", metavar="FILE", help="write the report as JUnit XML")
    parser.add_argument(
        "--har",
        metavar="FILE",
        help="write every exchange of the run as an HTTP Archive (HAR 1.2; browser tools open it)",
    )
    drive = parser.add_mutually_exclusive_group()
    drive.add_argument(
        "--scenario", metavar="NAME", help='start tasks with a data part {"scenario": NAME}'
    )
    drive.add_argument("--text", metavar="TEXT", help="start tasks with this text message")
    drive.add_argument("--data", metavar="JSON", help="start tasks with this JSON object")
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="an extra request header, e.g. Authorization (repeatable)",
    )
    parser.add_argument(
        "--resume-timeout",
        type=float,
        default=5.0,
        metavar="S",
        help="seconds one CF-4 trial may wait for the task to resume (default 5)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the summary line")


def register_cli(sub: Any) -> None:
    """Add the ``conformance`` subcommand to the ``hitl-nb`` subparsers."""
    parser = sub.add_parser(
        "conformance",
        help="run the hitl-prompt/v1 conformance harness against an agent",
        description=_DESCRIPTION,
    )
    add_arguments(parser)
    parser.set_defaults(func=run_cli)


def make_driver(
    scenario: str | None, text: str | None, data: str | None, prefix: str = "--"
) -> Driver:
    """The driver named by ``--scenario``, ``--text`` or ``--data`` (at most one given).

    Raises ``ValueError`` naming the option (``prefix`` + name) for a bad value.
    """
    given = [
        prefix + name
        for name, value in (("scenario", scenario), ("text", text), ("data", data))
        if value is not None
    ]
    if len(given) > 1:
        raise ValueError(f"give at most one of {', '.join(given)}")
    if data is not None:
        try:
            value = json.loads(data)
        except ValueError as exc:
            raise ValueError(f"{prefix}data is not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise ValueError(f"{prefix}data must be a JSON object")
        return MessageDriver(data=value)
    if text is not None:
        return MessageDriver(text=text)
    return ScenarioDriver(scenario or "approval")


def parse_headers(values: Sequence[str], option: str = "--header") -> dict[str, str]:
    """``NAME:VALUE`` strings as a header dict (``ValueError`` for a malformed one)."""
    out = {}
    for raw in values:
        name, sep, value = raw.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"{option} wants NAME:VALUE, got {raw!r}")
        out[name.strip()] = value.strip()
    return out


def parse_ids(values: Sequence[str], option: str) -> list[str]:
    """Check ids given as repeated and/or comma-separated values (any case), each known."""
    ids = [p.strip().upper() for value in values for p in value.split(",") if p.strip()]
    unknown = [i for i in ids if i not in CHECK_IDS]
    if unknown:
        raise ValueError(
            f"{option}: unknown check id(s) {', '.join(unknown)}; known: {' '.join(CHECK_IDS)}"
        )
    return ids


class _LiveLine:
    """Progress on a terminal: one line, rewritten with ``\r`` as each check ends.

    Off a terminal (a pipe, a file, a CI log) it writes nothing: the table that follows
    says it all, and a log of half-finished lines would only repeat it.
    """

    def __init__(self, stream: TextIO, ids: Sequence[str], *, quiet: bool = False) -> None:
        self._stream = stream
        self._ids = list(ids)
        self._counts: dict[str, int] = {}
        self._shown = 0  # characters now on the line
        self._live = not quiet and _is_terminal(stream)

    def show(self) -> None:
        """Draw the line for what is done so far."""
        if not self._live:
            return
        done = sum(self._counts.values())
        counts = ", ".join(f"{n} {outcome}" for outcome, n in self._counts.items())
        text = f"{done} of {len(self._ids)} checks done"
        text += f" ({counts})" if counts else ""
        text += f", running {self._ids[done]}" if done < len(self._ids) else ""
        # A line wider than the terminal wraps, and "\r" then rewrites only its tail.
        text = text[: max(_columns(self._stream) - 1, 1)]
        self._write("\r" + text + " " * (self._shown - len(text)))
        self._shown = len(text)

    def ended(self, result: CheckResult) -> None:
        """One check has ended: count it and redraw (``--binding all``: the count starts
        again with each binding's first check)."""
        if sum(self._counts.values()) >= len(self._ids):
            self._counts = {}
        self._counts[result.outcome] = self._counts.get(result.outcome, 0) + 1
        self.show()

    def erase(self) -> None:
        """Leave the line blank, the cursor at its start, for what is printed next."""
        if self._shown:
            self._write("\r" + " " * self._shown + "\r")
            self._shown = 0

    def _write(self, text: str) -> None:
        self._stream.write(text)
        self._stream.flush()


def _columns(stream: TextIO) -> int:
    """The width of the terminal ``stream`` writes to (stdout may be a pipe meanwhile)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns if columns > 0 else shutil.get_terminal_size().columns


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def run_cli(args: argparse.Namespace) -> int:
    """Run from parsed arguments; returns the exit status."""
    out = sys.stdout
    try:
        ids = [spec.id for spec in select(args.only)]
    except ValueError as exc:
        print(f"hitl-nb conformance: error: {exc}", file=sys.stderr)
        return 2
    line = _LiveLine(sys.stderr, ids, quiet=args.quiet)

    # The report says what the client would warn about (a missing echo, ...): keep the
    # terminal to the table while the run lasts.
    client_log = logging.getLogger("hitl_nb.client")
    level = client_log.level
    client_log.setLevel(logging.ERROR)
    try:
        settings = Settings(trials=args.trials, resume_timeout=args.resume_timeout)
        driver = make_driver(args.scenario, args.text, args.data)
        headers = parse_headers(args.header)
        line.show()
        options: dict[str, Any] = {
            "version": args.a2a_version,
            "only": args.only,
            "driver": driver,
            "headers": headers,
            "settings": settings,
            "on_result": line.ended,
            "trace": bool(args.har),
        }
        if args.binding == "all":
            reports = run_each(args.url, **options)
        else:
            reports = [run(args.url, binding=args.binding, **options)]
    except (ValueError, HitlError) as exc:
        line.erase()
        print(f"hitl-nb conformance: error: {exc}", file=sys.stderr)
        return 2
    finally:
        line.erase()  # also when stopped with Ctrl-C: no half line left behind
        client_log.setLevel(level)
    for i, report in enumerate(reports):
        if args.quiet:
            lead = f"{report.binding}: " if len(reports) > 1 else ""
            print(lead + report.summary(), file=out)
        else:
            print(("\n" if i else "") + report.to_text(), file=out)
    passed = all(r.passed for r in reports)
    if len(reports) > 1 and not args.quiet:
        counts = ", ".join(f"{r.binding} {'GREEN' if r.passed else 'RED'}" for r in reports)
        print(f"\nevery binding the card declares: {counts}", file=out)
    try:
        if args.json:
            _write_json(reports, args.json, several=args.binding == "all")
        if args.junit:
            _write_junit(reports, args.junit)
        trace = reports[0].trace if reports else None
        if args.har and trace is not None:
            trace.write_har(args.har)  # one trace holds every binding's run
    except OSError as exc:
        print(f"hitl-nb conformance: cannot write the report: {exc}", file=sys.stderr)
        return 2
    return 0 if passed else 1


def _write_json(reports: list[Report], path: str, *, several: bool) -> None:
    """One report as it is; with ``--binding all``, ``{"reports": [...]}``."""
    if not several:
        reports[0].write_json(path)
        return
    doc = {"passed": all(r.passed for r in reports), "reports": [r.to_json() for r in reports]}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")


def _write_junit(reports: list[Report], path: str) -> None:
    """Every report's test suites in one ``<testsuites>`` document."""
    if len(reports) == 1:
        reports[0].write_junit(path)
        return
    root = ET.Element("testsuites", name="hitl-prompt/v1 conformance")
    for report in reports:
        for suite in ET.fromstring(report.to_junit().encode()):
            suite.set("name", f"{suite.get('name')} ({report.binding})")
            root.append(suite)
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def build_parser() -> argparse.ArgumentParser:
    """A stand-alone parser (``python -m hitl_nb.conformance._cli URL``)."""
    parser = argparse.ArgumentParser(prog="hitl-nb conformance", description=_DESCRIPTION)
    add_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run; returns the exit status."""
    return run_cli(build_parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
