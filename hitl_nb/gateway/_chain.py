"""The audit trail's hash chain: what an entry's hash covers, and the one statement that
appends an entry to it.

Each entry of the ``audit`` table carries three more columns (schema version 7):

- ``seq``: its place in the chain (1, 2, 3, ...: no gaps, unlike ``id``, which a
  PostgreSQL transaction that rolled back skips);
- ``prev_hash``: the ``hash`` of entry ``seq - 1`` (:data:`GENESIS`, 64 zeros, for the
  first);
- ``hash``: the SHA-256 (hex) of the UTF-8 text
  ``{"entry":"<digest>","prev":"<prev_hash>","seq":<seq>}`` (canonical JSON: sorted
  keys, no whitespace), where ``<digest>`` is the SHA-256 (hex) of the entry's fields
  as canonical JSON (:func:`content_digest`: the fields an export shows, without
  ``id``, ``seq`` and the hashes).

So an entry edited after it was written no longer matches its hash; one removed leaves
a gap in ``seq`` and a ``prev_hash`` that names nothing; two swapped come in the wrong
order. The link's text holds only hex and a number, so the database computes it itself
in the statement that appends the entry (:func:`append`): the previous hash is read in
that statement, after the trail's lock was taken in the same transaction (PostgreSQL's
advisory lock :data:`~hitl_nb.gateway._sql.AUDIT_LOCK`; SQLite has one writer), and a
unique index on ``seq`` refuses a fork should any writer forget the lock. The digest is
computed here, in Python, from the same values the row holds.

What a chain proves: the order and integrity of the entries it holds, each against the
one before. It does not prove that whoever runs the database did not rewrite the whole
chain from some entry on: an export kept elsewhere (its last ``hash``) is what shows that.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from hitl_nb.gateway._sql import Dialect, Statement

__all__ = [
    "COLUMNS",
    "CONTENT",
    "GENESIS",
    "append",
    "content_digest",
    "link_hash",
]

#: The previous hash of the first entry.
GENESIS = "0" * 64

#: The audit table's columns an entry's content is made of, in the order the store
#: writes them, each with the name an export (and ``GET api/audit``) gives it.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("at", "at"),
    ("reg_id", "registration"),
    ("task_id", "task_id"),
    ("agent_url", "agent_url"),
    ("prompt_id", "prompt_id"),
    ("responder", "responder"),
    ("display", "display_name"),
    ("action", "action"),
    ("status", "status"),
    ("reason", "reason"),
    ("payload_sha256", "payload_sha256"),
    ("schema_sha256", "response_schema_sha256"),
    ("responders", "responders"),
    ("agent_reply", "agent_reply"),
)
#: The fields an entry's digest covers, by their export names.
CONTENT = tuple(name for _, name in COLUMNS)


def _canonical(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_digest(fields: Mapping[str, Any]) -> str:
    """The SHA-256 (hex) of an entry's content: the :data:`CONTENT` fields of
    ``fields`` (export names) as canonical JSON, ``at`` as a float and ``status`` as an
    integer, and an empty text counted as none (a CSV cell cannot tell them apart).

    Raises ``ValueError`` (or ``TypeError``) for a field of the wrong kind."""
    content: dict[str, Any] = {}
    for name in CONTENT:
        value = fields.get(name)
        if value == "":
            value = None
        content[name] = value
    content["at"] = float(content["at"])
    content["status"] = int(content["status"])
    if not isinstance(content["responders"], list):
        raise ValueError("responders is not a list")
    return _sha256(_canonical(content))


def link_text(digest: str, prev_hash: str, seq: int) -> str:
    """The text an entry's hash is the SHA-256 of (see the module docstring)."""
    return f'{{"entry":"{digest}","prev":"{prev_hash}","seq":{int(seq)}}}'


def link_hash(digest: str, prev_hash: str, seq: int) -> str:
    """The hash of entry ``seq`` whose content has ``digest``, after ``prev_hash``."""
    return _sha256(link_text(digest, prev_hash, seq).encode("utf-8"))


#: The chain's head as the appending statement reads it (after the lock).
_HEAD_SEQ = "(SELECT coalesce(max(seq), 0) FROM audit)"
_HEAD_HASH = (
    f"coalesce((SELECT hash FROM audit WHERE seq = (SELECT max(seq) FROM audit)), '{GENESIS}')"
)


def _insert(dialect: Dialect) -> str:
    # Braces are doubled: the text goes through Dialect.sql's str.format.
    text = (
        '\'{{"entry":"\' || ? || \'","prev":"\' || '
        f"{_HEAD_HASH} || '\",\"seq\":' || ({_HEAD_SEQ} + 1) || '}}}}'"
    )
    columns = ", ".join(c for c, _ in COLUMNS)
    marks = ", ".join("?" * len(COLUMNS))
    return (
        f"INSERT INTO audit ({columns}, seq, prev_hash, hash) VALUES ({marks}, "
        f"{_HEAD_SEQ} + 1, {_HEAD_HASH}, {dialect.sha256.replace('{}', text)})"
    )


_INSERTS: dict[str, str] = {}


def append(dialect: Dialect, values: Mapping[str, Any]) -> Statement:
    """The statement that appends an entry (``values``: by column name, ``responders``
    a list and ``agent_reply`` a dict or None) as the chain's next link. Run it after
    the trail's lock, in the transaction of what it records."""
    sql = _INSERTS.get(dialect.param)
    if sql is None:
        sql = _INSERTS[dialect.param] = _insert(dialect)
    digest = content_digest({name: values[column] for column, name in COLUMNS})
    args = [values[column] for column, _ in COLUMNS]
    args[12] = json.dumps(values["responders"])
    args[13] = None if values["agent_reply"] is None else json.dumps(values["agent_reply"])
    return sql, (*args, digest)
