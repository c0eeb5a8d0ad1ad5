"""The audit trail exported, and an export read back: JSON Lines or CSV, one entry a
line or row, each with its place in the chain, its previous hash and its own (so an
export verifies on its own: :func:`hitl_nb.gateway._audit_verify.verify`).

- **JSON Lines**: each line the entry as ``GET api/audit`` shows it, with ``seq``,
  ``prev_hash`` and ``hash``.
- **CSV**: a header row of :data:`FIELDS`, then one row an entry: numbers as text
  (``at`` as Python's shortest exact text of the float), ``responders`` and
  ``agent_reply`` as JSON, none as an empty cell.

A selection (:func:`exported`) is a time range, one registration, or both. A time range
is the run of the chain from the first entry written at or after ``since`` to the last
written at or before ``until`` (the times are the gateway's clocks: replicas' may differ
a little, the chain's order never does). Reading a file refuses what is no export (not
JSON, no header, a field missing) with :class:`BadExport`, naming the line; values of
the wrong kind are read as they are and found by the verification.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any, TextIO

from hitl_nb._json import parse_json
from hitl_nb.errors import BadJSON
from hitl_nb.gateway._chain import CONTENT
from hitl_nb.gateway._store import GatewayStore

__all__ = ["FIELDS", "FORMATS", "BadExport", "exported", "read_export", "write_export"]

#: An export's fields, in the order of a CSV's columns.
FIELDS = ("seq", "id", *CONTENT, "prev_hash", "hash")
#: The formats, by name.
FORMATS = ("jsonl", "csv")
_INTEGERS = ("seq", "id", "status")
_JSON_CELLS = ("responders", "agent_reply")


class BadExport(ValueError):
    """A file that is no audit export (in the format it was read as)."""


async def exported(
    store: GatewayStore,
    *,
    since: float | None = None,
    until: float | None = None,
    registration: str | None = None,
    page: int = 1000,
) -> AsyncIterator[dict[str, Any]]:
    """The entries of the selection (see the module docstring), in the order they were
    written, as an export's rows."""
    first, last = await store.chain_span(since, until)
    after = 0
    while True:
        chunk = await store.audit_chain(
            after=after, limit=page, registration=registration, first=first, last=last
        )
        for chained in chunk:
            yield chained.to_json()
        if len(chunk) < page:
            return
        after = chunk[-1].entry.id


def _cell(name: str, value: Any) -> str:
    if value is None:
        return ""
    if name in _JSON_CELLS:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def write_export(rows: Iterable[Mapping[str, Any]], out: TextIO, fmt: str) -> int:
    """Write ``rows`` to ``out`` as ``fmt`` (``jsonl`` or ``csv``); how many."""
    n = 0
    if fmt == "csv":
        # Lines end in CRLF (RFC 4180): a cell holding a lone CR or LF is then quoted
        # (with LF alone, a CR in a cell went unquoted and split its row when read back).
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(FIELDS)
        for row in rows:
            try:
                writer.writerow([_cell(name, row.get(name)) for name in FIELDS])
            except csv.Error as exc:  # Python 3.10's csv cannot write a NUL character
                raise BadExport(
                    f"entry {row.get('seq')} cannot be written as CSV by this Python "
                    f"({exc}); export it as JSON Lines (--format jsonl)"
                ) from None
            n += 1
        return n
    for row in rows:
        out.write(json.dumps(dict(row), ensure_ascii=False) + "\n")
        n += 1
    return n


def _number(name: str, text: str) -> Any:
    """A CSV cell back as the number it was (else the text, for the check to find)."""
    try:
        if name in _INTEGERS:
            return int(text)
        value = float(text)
        return value if math.isfinite(value) else text
    except ValueError:
        return text


def _from_csv(text: str) -> list[dict[str, Any]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header is None:
        raise BadExport("the file is empty")
    missing = [f for f in FIELDS if f not in header]
    if missing:
        raise BadExport(f"line 1 is not an audit export's header: no {', '.join(missing)} column")
    rows = []
    for cells in reader:
        if not cells:
            continue
        line = reader.line_num
        if len(cells) != len(header):
            raise BadExport(f"line {line} has {len(cells)} cells, the header {len(header)}")
        row: dict[str, Any] = {}
        for name, cell in zip(header, cells, strict=True):
            if cell == "":
                row[name] = None
            elif name in _JSON_CELLS:
                try:
                    row[name] = parse_json(cell)
                except BadJSON as exc:
                    raise BadExport(f"line {line}: {name} is not JSON ({exc})") from None
            elif name in (*_INTEGERS, "at"):
                row[name] = _number(name, cell)
            else:
                row[name] = cell
        rows.append(row)
    return rows


def _from_jsonl(text: str) -> list[dict[str, Any]]:
    rows = []
    for line, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            row = parse_json(raw)
        except BadJSON as exc:
            raise BadExport(f"line {line} is not JSON ({exc})") from None
        if not isinstance(row, dict):
            raise BadExport(f"line {line} is not a JSON object")
        missing = [f for f in FIELDS if f not in row]
        if missing:
            raise BadExport(f"line {line} is not an audit entry: no {', '.join(missing)}")
        rows.append(row)
    return rows


def read_export(data: bytes, fmt: str) -> list[dict[str, Any]]:
    """An export's rows from its bytes (``fmt``: ``jsonl`` or ``csv``); raises
    :class:`BadExport` naming the line of what is no export."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadExport(f"the file is not UTF-8 text (byte {exc.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]  # a spreadsheet's byte order mark
    return _from_csv(text) if fmt == "csv" else _from_jsonl(text)
