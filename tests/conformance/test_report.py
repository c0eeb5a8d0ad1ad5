"""The conformance report: table, JSON, JUnit XML and notebook HTML, from hand-made results."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hitl_nb.conformance import CHECK_IDS
from hitl_nb.conformance._report import CheckResult, Failure, Report


def _report() -> Report:
    ok = CheckResult("CF-1", "prompt_id correlation (AC-1)", "conformance", "§Conformance")
    ok.steps = [("step 1: Activate the extension.", "passed")]
    ok.duration_ms = 12.5
    bad = CheckResult(
        "CF-3", "schema-invalid response -> 422 (AC-3)", "conformance", "§Conformance", "failed"
    )
    bad.failures.append(
        Failure("step 3", "HTTP 422 with validation_errors", "HTTP 200 <b>ok</b>", "§Acceptance")
    )
    bad.notes.append("invalid payload: required member 'approve' left out")
    err = CheckResult("EXT-ECHO", "activation header echoed", "further", "§Activation", "error")
    err.error = "AgentUnreachable: connection refused & gone"
    timed = CheckResult("CF-4", "resume latency", "conformance", "§Conformance")
    timed.metrics = {"p95_ms": 3.2, "summary": "p50 2.0 ms, p95 3.2 ms"}
    skipped = CheckResult("EXT-UNIQUE", "unique ids", "further", "S-5", "skipped")
    return Report(
        "http://agent.example",
        "JSONRPC",
        "1.0",
        "urn:x",
        "2026-01-01T00:00:00Z",
        [ok, bad, timed, err, skipped],
        1234.0,
        ["driver: scenario message"],
    )


def test_verdict_counts_and_lookup() -> None:
    report = _report()
    assert not report.passed
    assert report.counts() == {"passed": 2, "failed": 1, "error": 1, "skipped": 1}
    assert [r.id for r in report.failed] == ["CF-3", "EXT-ECHO"]
    assert report["CF-3"].message.startswith("step 3: expected HTTP 422")
    assert "CF-1" in report and "CF-9" not in report
    with pytest.raises(KeyError, match="ran: CF-1, CF-3"):
        report["CF-9"]
    assert report.summary().startswith("RED: 2 passed, 1 failed, 1 error, 1 skipped")
    green = Report("u", "JSONRPC", "1.0", "x", "t", [report["CF-1"]])
    assert green.passed and green.summary().startswith("GREEN")
    assert not Report("u", "JSONRPC", "1.0", "x", "t").passed  # nothing ran: not green


def test_text_table_says_expected_seen_and_section() -> None:
    text = _report().to_text()
    assert "\nCF-1        PASS    12 ms  prompt_id correlation (AC-1)\n" in text
    assert "FAIL" in text and "ERROR" in text and "SKIP" in text
    assert (
        "failed: step 3: expected HTTP 422 with validation_errors; seen HTTP 200 <b>ok</b> "
        "[§Acceptance]" in text
    )
    assert "error: AgentUnreachable" in text
    assert "p50 2.0 ms, p95 3.2 ms" in text
    assert str(_report()) == text


def test_json_lists_every_check_with_outcome(tmp_path: Path) -> None:
    report = _report()
    path = tmp_path / "report.json"
    report.write_json(path)
    data = json.loads(path.read_text("utf-8"))
    assert data == report.to_json()
    assert [r["id"] for r in data["results"]] == ["CF-1", "CF-3", "CF-4", "EXT-ECHO", "EXT-UNIQUE"]
    cf3 = data["results"][1]
    assert cf3["outcome"] == "failed"
    assert cf3["failures"] == [
        {
            "step": "step 3",
            "expected": "HTTP 422 with validation_errors",
            "seen": "HTTP 200 <b>ok</b>",
            "section": "§Acceptance",
        }
    ]
    assert data["results"][0]["steps"] == [
        {"step": "step 1: Activate the extension.", "outcome": "passed"}
    ]
    assert data["results"][2]["metrics"]["p95_ms"] == 3.2
    assert data["passed"] is False and data["a2a_version"] == "1.0"


def test_junit_xml_parses_with_one_case_per_check(tmp_path: Path) -> None:
    report = _report()
    path = tmp_path / "junit.xml"
    report.write_junit(path)
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    conf = suites["hitl-prompt/v1 conformance"]
    further = suites["hitl-prompt/v1 further"]
    assert (conf.get("tests"), conf.get("failures"), conf.get("errors")) == ("3", "1", "0")
    assert (further.get("errors"), further.get("skipped")) == ("1", "1")
    cases = {c.get("name"): c for c in root.iter("testcase")}
    failure = cases["CF-3 schema-invalid response -> 422 (AC-3)"].find("failure")
    assert failure is not None and "seen HTTP 200 <b>ok</b>" in (failure.text or "")
    error = cases["EXT-ECHO activation header echoed"].find("error")
    assert error is not None and "connection refused & gone" in error.get("message", "")
    assert cases["EXT-UNIQUE unique ids"].find("skipped") is not None
    props = {p.get("name"): p.get("value") for p in conf.iter("property")}
    assert props["agent"] == "http://agent.example"


def test_html_escapes_everything_the_agent_said() -> None:
    page = _report()._repr_html_()
    assert "<b>ok</b>" not in page and "&lt;b&gt;ok&lt;/b&gt;" in page
    assert "connection refused &amp; gone" in page
    assert page.count("<tr>") == 6  # header + five checks
    assert "RED" in page


def test_the_docs_table_lists_every_check_in_order() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "conformance.md").read_text("utf-8")
    assert re.findall(r"^\| ((?:CF|EXT)-[A-Z0-9-]+) \|", doc, re.M) == list(CHECK_IDS)


def test_repr_is_one_short_line() -> None:
    text = repr(_report())
    assert text.startswith("<Report ") and "\n" not in text and len(text) < 200
