"""Validate a payload against a prompt's ``response_schema``, within bounds.

The schema comes from an agent we may not trust, so validation is bounded as
hitl-prompt/v1 §Security Considerations S-2 asks:

- a schema larger than 64 KiB (compact UTF-8 JSON) is refused;
- a schema whose subschemas nest deeper than 32, or a payload nested deeper than 32,
  is refused;
- every validation has a time budget (250 ms by default) that stops the work: the
  budget is checked each time a keyword is applied, and the keywords that could loop
  long inside one call (``uniqueItems``, ``pattern``) have linear-time versions;
- ``pattern`` and ``patternProperties`` run on RE2 (linear time, no backtracking); a
  pattern RE2 cannot compile (look-around, back-references) runs on the ``regex``
  engine with a timeout instead;
- ``$ref`` resolves inside the schema only: a remote reference is refused when the
  schema is compiled, and the registry never fetches anything.

Errors are data: each :class:`ValidationIssue` is ``{path, keyword, message}``, the
shape of the spec's ``validation_errors`` entries, with ``path`` a JSON Pointer to the
member at fault (for ``required`` and ``additionalProperties`` the missing or extra
member itself, not its parent).

The package, one concern a module: ``_limits`` (the bounds), ``_issue``
(:class:`ValidationIssue`), ``_formats`` (the ``format`` checks), ``_walk`` and
``_distinct`` (what compiling looks at), ``_compiler`` (:func:`compile_schema`) and
``_compiled`` (:class:`CompiledSchema`, which validates).
"""

from __future__ import annotations

import typing
from typing import Any

from ._compiled import CompiledSchema, pattern_search
from ._compiler import _compile as _compile  # benchmarks clear its cache
from ._compiler import compile_schema, validate_payload
from ._formats import format_checker as _format_checker
from ._formats import is_regex
from ._issue import ValidationIssue
from ._limits import (
    DIALECT_2020_12,
    MAX_DEPTH,
    MAX_FORMAT_LENGTH,
    MAX_ISSUES,
    MAX_PAYLOAD_BYTES,
    MAX_SCHEMA_BYTES,
    MAX_SUBSCHEMAS,
)

if typing.TYPE_CHECKING:
    from jsonschema import FormatChecker

    #: The format checker shared by the validator and the forms: the draft 2020-12
    #: formats (date, date-time, time, email, uri, uuid, ...), each refusing strings
    #: over :data:`MAX_FORMAT_LENGTH` characters. Built (and jsonschema imported) when
    #: first read.
    FORMAT_CHECKER: FormatChecker

__all__ = [
    "DIALECT_2020_12",
    "FORMAT_CHECKER",
    "MAX_DEPTH",
    "MAX_FORMAT_LENGTH",
    "MAX_ISSUES",
    "MAX_PAYLOAD_BYTES",
    "MAX_SCHEMA_BYTES",
    "MAX_SUBSCHEMAS",
    "CompiledSchema",
    "ValidationIssue",
    "compile_schema",
    "is_regex",
    "pattern_search",
    "validate_payload",
]


def __getattr__(name: str) -> Any:
    # PEP 562: jsonschema loads when FORMAT_CHECKER is first read, not with this package.
    if name == "FORMAT_CHECKER":
        return _format_checker()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"FORMAT_CHECKER"})
