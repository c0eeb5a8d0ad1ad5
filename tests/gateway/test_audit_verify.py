"""The chain's verification on its own: what it finds in an export edited by hand, and
that a random edit of a random chain is always found."""

from __future__ import annotations

import copy
import io
import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hitl_nb.gateway._audit_export import BadExport, read_export, write_export
from hitl_nb.gateway._audit_verify import verify
from hitl_nb.gateway._chain import CONTENT, GENESIS, content_digest, link_hash


def chain(n: int, start: int = 1, prev: str = GENESIS) -> list[dict[str, Any]]:
    """``n`` entries linked as the database links them, from place ``start``."""
    rows = []
    for seq in range(start, start + n):
        row: dict[str, Any] = {
            "id": seq + 100,
            "at": 1_750_000_000.0 + seq * 1.25,
            "registration": f"r{seq % 3}",
            "task_id": "t",
            "agent_url": "http://agent.invalid",
            "prompt_id": f"p{seq}",
            "responder": "alice" if seq % 2 else None,
            "display_name": "Alice",
            "action": "forwarded",
            "status": 200,
            "reason": None,
            "payload_sha256": "a" * 64,
            "response_schema_sha256": None,
            "responders": ["alice"],
            "agent_reply": {"message": "ok"},
            "seq": seq,
            "prev_hash": prev,
        }
        row["hash"] = prev = link_hash(content_digest(row), prev, seq)
        rows.append(row)
    return rows


def _jsonl(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    write_export(rows, out, "jsonl")
    return out.getvalue()


def test_a_whole_chain_and_a_segment_of_it_verify() -> None:
    rows = chain(12)
    assert verify(rows).whole
    verdict = verify(rows[4:9], segment=True)
    assert verdict.whole and verdict.first == 5 and verdict.last == 9
    assert verdict.notes == [
        f"the entries start at entry 5: its previous hash {rows[3]['hash']} is taken as given"
    ]
    assert verify(rows[4:9]).findings[0].problem.startswith("entries 1 to 4 are missing")


def test_an_export_edited_by_hand_is_found() -> None:
    lines = _jsonl(chain(8)).splitlines()
    # A field changed in a text editor.
    edited = list(lines)
    edited[2] = edited[2].replace('"action": "forwarded"', '"action": "rejected"')
    (found,) = verify(read_export("\n".join(edited).encode(), "jsonl")).findings
    assert found.seq == 3 and "was changed after it was written" in found.problem
    # A line removed.
    (found,) = verify(read_export("\n".join(lines[:4] + lines[5:]).encode(), "jsonl")).findings
    assert found.problem == "an entry is missing between 4 and 6"
    # Two lines swapped.
    swapped = lines[:5] + [lines[6], lines[5]] + lines[7:]
    (found,) = verify(read_export("\n".join(swapped).encode(), "jsonl")).findings
    assert found.problem == "entries 6 and 7 are out of order"
    # An entry rewritten with a hash of its own: the next one no longer follows it.
    rows = chain(8)
    rows[3]["reason"] = "rewritten"
    rows[3]["hash"] = link_hash(content_digest(rows[3]), rows[3]["prev_hash"], 4)
    (found,) = verify(rows).findings
    assert found.seq == 5 and "does not follow entry 4" in found.problem


def test_a_cell_with_a_lone_carriage_return_comes_back_from_csv_whole() -> None:
    # Found by the property below: with lines ended by LF alone, a CR in a cell was not
    # quoted, and reading the file back split the row there.
    rows = chain(3)
    rows[1] = {**rows[1], "registration": "\r", "reason": "a\rb\nc"}
    out = io.StringIO()
    write_export(rows, out, "csv")
    back = read_export(out.getvalue().encode("utf-8"), "csv")
    assert [r["registration"] for r in back] == [r["registration"] for r in rows]
    assert back[1]["reason"] == "a\rb\nc"


def test_a_csv_edited_by_hand_is_found() -> None:
    out = io.StringIO()
    write_export(chain(5), out, "csv")
    text = out.getvalue().replace("p3,alice", "p3,mallory")
    (found,) = verify(read_export(text.encode(), "csv")).findings
    assert found.seq == 3


def test_one_registrations_entries_verify_with_the_gaps_said() -> None:
    rows = [r for r in chain(9) if r["registration"] == "r1"]
    verdict = verify(rows, registration="r1")
    assert verdict.whole
    assert any("of other registrations" in n for n in verdict.notes)
    assert not verify(rows, registration="r2").whole


_FIELDS = [*CONTENT, "seq", "prev_hash", "hash"]


@st.composite
def tampered(draw: st.DrawFn) -> tuple[list[dict[str, Any]], str]:
    """A chain and one edit of it: a field changed, an entry removed (not the last:
    nothing after it would tell), or two entries swapped."""
    rows = chain(draw(st.integers(2, 12)))
    kind = draw(st.sampled_from(["edit", "remove", "swap"]))
    i = draw(st.integers(0, len(rows) - 2))
    if kind == "remove":
        del rows[i]
        return rows, kind
    if kind == "swap":
        j = draw(st.integers(i + 1, len(rows) - 1))
        rows[i], rows[j] = rows[j], rows[i]
        return rows, kind
    i = draw(st.integers(0, len(rows) - 1))
    name = draw(st.sampled_from(_FIELDS))
    old = rows[i][name]
    if name in ("at", "status", "seq"):
        new: Any = old + draw(st.integers(1, 10**6))
    elif name == "responders":
        new = draw(st.lists(st.text(min_size=1), max_size=3).filter(lambda v: v != old))
    elif name == "agent_reply":
        new = draw(st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))
        if new == old:
            new = None
    else:
        new = draw(st.text(min_size=1).filter(lambda v: v != old))
    rows[i] = {**copy.deepcopy(rows[i]), name: new}
    return rows, kind


def _holds_nul(rows: list[dict[str, Any]]) -> bool:
    return any("\x00" in str(value) for row in rows for value in row.values())


@pytest.mark.property
@settings(max_examples=300, deadline=None)
@given(tampered())
def test_any_edit_of_a_chain_is_found(case: tuple[list[dict[str, Any]], str]) -> None:
    rows, kind = case
    assert not verify(rows).whole, kind
    # The same through a file, each format.
    for fmt in ("jsonl", "csv"):
        out = io.StringIO()
        if fmt == "csv" and sys.version_info < (3, 11) and _holds_nul(rows):
            with pytest.raises(BadExport, match="JSON Lines"):  # 3.10's csv: no NUL
                write_export(rows, out, fmt)
            continue
        write_export(rows, out, fmt)
        back = read_export(out.getvalue().encode("utf-8"), fmt)
        assert not verify(back).whole, (kind, fmt, json.dumps(rows)[:200])
