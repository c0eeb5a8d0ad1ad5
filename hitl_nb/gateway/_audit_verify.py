"""The audit chain checked: what :func:`verify` finds in a run of entries, in words.

Given entries as an export shows them (:meth:`~hitl_nb.gateway._store.Chained.to_json`,
from the database or read back from a file), in the order they were written, it
recomputes each entry's hash (:mod:`hitl_nb.gateway._chain`) and each link, and names
what is wrong, by the entry's place in the chain (``seq``) and its time:

- an entry **changed** after it was written: its hash does not match its content;
- an entry **removed**: a gap in the places (or, at the very start, entries before the
  first one missing);
- entries **out of order**: listed in another order than the chain's;
- an entry whose previous hash is not the hash of the entry before it (one of the two
  was rewritten with a new hash, or entries were removed and the rest renumbered);
- an entry listed twice.

A run that does not start at the chain's first entry (an export of a time range) is
checked as a segment: its first entry's previous hash is taken as given, and said so.
An export of one registration's entries holds only some places of the chain: each
entry's own hash is checked, and the gaps between them (other registrations' entries)
are said, not counted against it.

What it cannot find: the last entries removed (nothing comes after them to notice), or
a chain recomputed from some entry on by whoever can write the database. Keep the last
hash of an export elsewhere and compare.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from hitl_nb.gateway._chain import GENESIS, content_digest, link_hash

__all__ = ["Finding", "Verdict", "verify"]


def _when(at: Any) -> str:
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(float(at)))
    except (TypeError, ValueError, OverflowError, OSError):
        return "an unreadable time"


@dataclass(frozen=True)
class Finding:
    """One thing wrong with the chain, at place ``seq`` (None: an entry with no place)."""

    seq: int | None
    problem: str

    def __str__(self) -> str:
        return self.problem


@dataclass
class Verdict:
    """What :func:`verify` found: ``findings`` (empty: the chain is whole), ``notes``
    (what was taken as given), how many entries, the first and last place and the last
    hash (to keep, and compare a later export with)."""

    entries: int = 0
    first: int | None = None
    last: int | None = None
    last_hash: str | None = None
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def whole(self) -> bool:
        """No entry edited, removed or out of order."""
        return not self.findings

    def lines(self) -> list[str]:
        """The verdict in words, one line each."""
        out = [str(f) for f in self.findings] + list(self.notes)
        if self.entries == 0:
            out.append("no entries to check")
        elif self.whole:
            out.append(
                f"the chain is whole: {self.entries} entries, {self.first} to {self.last}; "
                f"the last hash is {self.last_hash}"
            )
        else:
            n = len(self.findings)
            out.append(
                f"the chain is broken: {n} problem{'s' * (n != 1)} in {self.entries} entries"
            )
        return out


def _entry(seq: int | None, row: Mapping[str, Any]) -> str:
    where = f"entry {seq}" if seq is not None else f"the entry with id {row.get('id')}"
    return f"{where} ({_when(row.get('at'))})"


def verify(
    rows: Iterable[Mapping[str, Any]], *, segment: bool = False, registration: str | None = None
) -> Verdict:
    """Check ``rows`` (see the module docstring). ``segment``: the rows may start after
    the chain's first entry (an export of a time range); ``registration``: the rows are
    that registration's only (gaps are other registrations' entries)."""
    verdict = Verdict()
    placed: list[tuple[int, Mapping[str, Any]]] = []
    before: int | None = None
    for row in rows:
        verdict.entries += 1
        seq = row.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
            verdict.findings.append(Finding(None, f"{_entry(None, row)} has no place in the chain"))
            continue
        try:
            digest = content_digest(row)
            intact = link_hash(digest, str(row.get("prev_hash")), seq) == row.get("hash")
        except (TypeError, ValueError):
            intact = False
        if not intact:
            verdict.findings.append(
                Finding(
                    seq,
                    f"{_entry(seq, row)} was changed after it was written "
                    "(its hash does not match its content)",
                )
            )
        if registration is not None and row.get("registration") != registration:
            verdict.findings.append(
                Finding(seq, f"{_entry(seq, row)} is not of registration {registration}")
            )
        if before is not None and seq < before:
            verdict.findings.append(Finding(seq, f"entries {seq} and {before} are out of order"))
        before = seq
        placed.append((seq, row))
    placed.sort(key=lambda p: p[0])
    _links(placed, verdict, segment=segment, registration=registration)
    return verdict


def _links(
    placed: list[tuple[int, Mapping[str, Any]]],
    verdict: Verdict,
    *,
    segment: bool,
    registration: str | None,
) -> None:
    """Check each entry against the one before it in the chain's order."""
    if not placed:
        return
    first_seq, first = placed[0]
    verdict.first, verdict.last = first_seq, placed[-1][0]
    verdict.last_hash = str(placed[-1][1].get("hash"))
    if first_seq == 1:
        if first.get("prev_hash") != GENESIS:
            verdict.findings.append(
                Finding(1, f"{_entry(1, first)} does not start the chain (its previous hash)")
            )
    elif segment or registration is not None:
        verdict.notes.append(
            f"the entries start at entry {first_seq}: its previous hash "
            f"{first.get('prev_hash')} is taken as given"
        )
    else:
        missing = "entry 1 is" if first_seq == 2 else f"entries 1 to {first_seq - 1} are"
        verdict.findings.append(
            Finding(first_seq, f"{missing} missing before {_entry(first_seq, first)}")
        )
    skipped = 0
    for (p_seq, prev), (seq, row) in pairwise(placed):
        if seq == p_seq:
            verdict.findings.append(Finding(seq, f"entry {seq} is listed twice"))
        elif seq > p_seq + 1:
            if registration is not None:
                skipped += seq - p_seq - 1
            elif seq == p_seq + 2:
                verdict.findings.append(
                    Finding(p_seq + 1, f"an entry is missing between {p_seq} and {seq}")
                )
            else:
                verdict.findings.append(
                    Finding(
                        p_seq + 1,
                        f"entries {p_seq + 1} to {seq - 1} are missing (between {p_seq} and {seq})",
                    )
                )
        elif row.get("prev_hash") != prev.get("hash"):
            verdict.findings.append(
                Finding(
                    seq,
                    f"{_entry(seq, row)} does not follow entry {p_seq}: its previous hash is "
                    f"not entry {p_seq}'s hash (one of them was rewritten, or entries were "
                    "removed and the rest renumbered)",
                )
            )
    if skipped:
        verdict.notes.append(
            f"{skipped} entries of other registrations lie between these; the links across "
            "them are not checked (verify a whole export for that)"
        )
