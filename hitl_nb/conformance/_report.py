"""The outcome of a conformance run: one :class:`CheckResult` per scenario or check.

A :class:`Report` renders as a terminal table (``str(report)``), a notebook table
(``_repr_html_``), JSON (:meth:`Report.to_json`) and JUnit XML (:meth:`Report.to_junit`).
Every failure is a :class:`Failure`: which step, what was expected, what was seen, and
the spec section the rule comes from.
"""

from __future__ import annotations

import html
import json
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "GROUP_CONFORMANCE",
    "GROUP_FURTHER",
    "CheckResult",
    "CheckStatus",
    "Failure",
    "Report",
]

#: How a check (or one of its steps) came out.
CheckStatus = Literal["passed", "failed", "error", "skipped"]

#: The scenarios of the spec's §Conformance (CF-1 .. CF-7).
GROUP_CONFORMANCE = "conformance"
#: MUSTs stated outside §Conformance (EXT-*).
GROUP_FURTHER = "further"

_MARK = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "skipped": "SKIP"}
_COLOUR = {"passed": "#1a7f37", "failed": "#cf222e", "error": "#9a6700", "skipped": "#6e7781"}


@dataclass(frozen=True)
class Failure:
    """One broken rule: the step, what was expected, what was seen, and where it is from."""

    step: str
    expected: str
    seen: str
    section: str

    def __str__(self) -> str:
        where = f"{self.step}: " if self.step else ""
        return f"{where}expected {self.expected}; seen {self.seen} [{self.section}]"

    def to_json(self) -> dict[str, str]:
        """The failure as a JSON object."""
        return {
            "step": self.step,
            "expected": self.expected,
            "seen": self.seen,
            "section": self.section,
        }


@dataclass
class CheckResult:
    """The result of one scenario (``CF-n``) or further check (``EXT-...``).

    ``outcome`` is ``"passed"``, ``"failed"`` (the agent broke a rule: see
    ``failures``), ``"error"`` (the check could not finish: ``error`` says why, e.g. the
    agent was unreachable) or ``"skipped"``. ``steps`` lists the steps reached with
    their outcome; ``warnings`` are departures from a SHOULD (or from the spec's exact
    wording) that do not fail the check; ``notes`` are remarks; ``metrics`` holds
    measurements (CF-4: ``p50_ms``, ``p95_ms``, ``max_ms``, ``trials_ms``).
    """

    id: str
    title: str
    group: str
    section: str
    outcome: CheckStatus = "passed"
    duration_ms: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    steps: list[tuple[str, CheckStatus]] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when the check passed."""
        return self.outcome == "passed"

    @property
    def message(self) -> str:
        """One line saying why the check did not pass ("" when it passed)."""
        if self.error:
            return self.error
        return str(self.failures[0]) if self.failures else ""

    def describe(self) -> list[str]:
        """Every failure, error and note as text lines."""
        lines = [f"error: {self.error}"] if self.error else []
        lines += [f"failed: {f}" for f in self.failures]
        lines += [f"warning: {w}" for w in self.warnings]
        lines += [f"note: {n}" for n in self.notes]
        return lines

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON object."""
        return {
            "id": self.id,
            "title": self.title,
            "group": self.group,
            "section": self.section,
            "outcome": self.outcome,
            "duration_ms": round(self.duration_ms, 3),
            "failures": [f.to_json() for f in self.failures],
            "error": self.error,
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "steps": [{"step": s, "outcome": o} for s, o in self.steps],
            "metrics": self.metrics,
        }


@dataclass
class Report:
    """Everything a conformance run found, in the order the checks ran.

    ``report["CF-3"]`` gives one result; ``report.passed`` is true only when every
    selected check passed. ``notes`` are remarks about the run itself (for example the
    interface chosen). ``unreachable`` says why, when the run could not talk to the
    agent at all (every result is then an error with that reason).
    """

    agent: str
    binding: str
    version: str
    extension: str
    started_at: str
    results: list[CheckResult] = field(default_factory=list)
    duration_ms: float = 0.0
    notes: list[str] = field(default_factory=list)
    unreachable: str | None = None
    #: The wire trace of the run (``run(..., trace=True)``), else None.
    trace: Any = field(default=None, repr=False, compare=False)

    @property
    def passed(self) -> bool:
        """True when at least one check ran and every one passed."""
        return bool(self.results) and all(r.passed for r in self.results)

    @property
    def failed(self) -> list[CheckResult]:
        """The results that did not pass (failed or error)."""
        return [r for r in self.results if r.outcome in ("failed", "error")]

    def __getitem__(self, check_id: str) -> CheckResult:
        for result in self.results:
            if result.id == check_id:
                return result
        raise KeyError(f"no result for {check_id!r}; ran: {', '.join(self.ids())}")

    def __contains__(self, check_id: object) -> bool:
        return any(r.id == check_id for r in self.results)

    def __repr__(self) -> str:
        # The plain-text face in a notebook without HTML, and in tracebacks: short.
        return f"<Report {self.agent} {self.binding} A2A {self.version}: {self.summary()}>"

    def ids(self) -> list[str]:
        """The ids of the checks that ran, in order."""
        return [r.id for r in self.results]

    def counts(self) -> dict[str, int]:
        """How many checks ended in each outcome."""
        out = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
        for r in self.results:
            out[r.outcome] += 1
        return out

    def summary(self) -> str:
        """One line: the verdict and the counts."""
        c = self.counts()
        verdict = "GREEN" if self.passed else "RED"
        parts = [f"{c[k]} {k}" for k in ("passed", "failed", "error", "skipped") if c[k]]
        return f"{verdict}: {', '.join(parts) or 'nothing ran'} ({_ms(self.duration_ms)})"

    # -- renderings ------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The whole report as a JSON object (every check by id, with its outcome)."""
        return {
            "agent": self.agent,
            "binding": self.binding,
            "a2a_version": self.version,
            "extension": self.extension,
            "started_at": self.started_at,
            "duration_ms": round(self.duration_ms, 3),
            "passed": self.passed,
            "counts": self.counts(),
            "notes": list(self.notes),
            "unreachable": self.unreachable,
            "results": [r.to_json() for r in self.results],
        }

    def to_text(self) -> str:
        """A plain-text table, with the reasons under each check that did not pass."""
        head = [
            f"hitl-prompt/v1 conformance: {self.agent}",
            f"binding {self.binding}, A2A {self.version}, extension {self.extension}",
        ]
        head += [f"note: {n}" for n in self.notes]
        rows = [("ID", "RESULT", "TIME", "CHECK")]
        for r in self.results:
            rows.append((r.id, _MARK[r.outcome], _ms(r.duration_ms), r.title))
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        lines = head + [""]
        for i, row in enumerate(rows):
            lines.append(
                "  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=True))
                + "  "
                + row[3]
            )
            if i == 0:
                lines.append("-" * (sum(widths) + 6 + max(len(r[3]) for r in rows)))
                continue
            result = self.results[i - 1]
            if not result.passed:
                lines += [f"    {text}" for text in result.describe()]
            else:
                if result.metrics.get("summary"):
                    lines.append(f"    {result.metrics['summary']}")
                lines += [f"    warning: {w}" for w in result.warnings]
        lines += ["", self.summary()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        esc = html.escape
        rows = []
        for r in self.results:
            colour = _COLOUR[r.outcome]
            badge = (
                f"<span style='color:white;background:{colour};padding:1px 6px;"
                f"border-radius:3px;font-weight:bold'>{_MARK[r.outcome]}</span>"
            )
            details = r.describe()
            if r.metrics.get("summary"):
                details.insert(0, str(r.metrics["summary"]))
            body = "<br>".join(esc(d) for d in details)
            rows.append(
                f"<tr><td><code>{esc(r.id)}</code></td><td>{badge}</td>"
                f"<td style='text-align:right'>{esc(_ms(r.duration_ms))}</td>"
                f"<td style='text-align:left'>{esc(r.title)}<br><small>{esc(r.section)}</small>"
                f"</td><td style='text-align:left'><small>{body}</small></td></tr>"
            )
        verdict = _COLOUR["passed" if self.passed else "failed"]
        notes = "".join(f"<li>{esc(n)}</li>" for n in self.notes)
        return (
            "<div class='hitl-conformance'>"
            f"<p><b style='color:{verdict}'>{esc(self.summary())}</b><br>"
            f"<code>{esc(self.agent)}</code> &middot; {esc(self.binding)} &middot; "
            f"A2A {esc(self.version)}</p>"
            + (f"<ul>{notes}</ul>" if notes else "")
            + "<table><thead><tr><th>ID</th><th>Result</th><th>Time</th><th>Check</th>"
            "<th>Details</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>"
        )

    def to_junit(self) -> str:
        """JUnit XML: one test suite per group, one test case per check."""
        suites = ET.Element("testsuites", name="hitl-prompt/v1 conformance")
        for group in (GROUP_CONFORMANCE, GROUP_FURTHER):
            members = [r for r in self.results if r.group == group]
            if not members:
                continue
            counts = {k: sum(r.outcome == k for r in members) for k in _MARK}
            suite = ET.SubElement(
                suites,
                "testsuite",
                name=f"hitl-prompt/v1 {group}",
                tests=str(len(members)),
                failures=str(counts["failed"]),
                errors=str(counts["error"]),
                skipped=str(counts["skipped"]),
                time=f"{sum(r.duration_ms for r in members) / 1000:.3f}",
                timestamp=self.started_at,
            )
            props = ET.SubElement(suite, "properties")
            for name, value in (
                ("agent", self.agent),
                ("binding", self.binding),
                ("a2a_version", self.version),
                ("extension", self.extension),
            ):
                ET.SubElement(props, "property", name=name, value=value)
            for r in members:
                case = ET.SubElement(
                    suite,
                    "testcase",
                    classname=f"hitl_prompt_v1.{group}",
                    name=f"{r.id} {r.title}",
                    time=f"{r.duration_ms / 1000:.3f}",
                )
                text = "\n".join(r.describe())
                if r.outcome == "failed":
                    ET.SubElement(case, "failure", message=r.message[:500]).text = text
                elif r.outcome == "error":
                    ET.SubElement(case, "error", message=r.message[:500]).text = text
                elif r.outcome == "skipped":
                    why = r.message or (r.notes[0] if r.notes else "")
                    ET.SubElement(case, "skipped", message=why[:500])
                elif text:
                    ET.SubElement(case, "system-out").text = text
        ET.indent(suites)
        return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, "unicode") + "\n"

    def write_json(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_json` to ``path`` (UTF-8, indented)."""
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_json(), fh, indent=2, ensure_ascii=False)
            fh.write("\n")

    def write_junit(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_junit` to ``path``."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.to_junit())


def _ms(value: float) -> str:
    # Always milliseconds: one unit to read, and one pattern for output sanitizers.
    return f"{value:.0f} ms"
