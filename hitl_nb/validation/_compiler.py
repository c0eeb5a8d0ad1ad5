"""Compiling a response_schema (checked against the S-2 bounds, cached by its JSON), and
validating a payload against one."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from .._json import dumps_compact, json_depth
from .._messages import json_type
from .._pointer import pointer
from ..errors import SchemaRejected
from ._compiled import CompiledSchema
from ._issue import ValidationIssue
from ._limits import MAX_DEPTH, MAX_SCHEMA_BYTES

__all__ = ["compile_schema", "validate_payload"]

_UNKNOWN: Any = object()


def _canonical_schema(schema: Any) -> str:
    if not isinstance(schema, Mapping):
        raise SchemaRejected(f"response_schema must be a JSON object, got {json_type(schema)}")
    try:
        return dumps_compact(schema)
    except (TypeError, ValueError) as exc:
        raise SchemaRejected(f"response_schema is not JSON: {exc}") from None
    except RecursionError:
        raise SchemaRejected(
            f"response_schema nests deeper than {4 * MAX_DEPTH} JSON levels"
        ) from None


def compile_schema(schema: Mapping[str, Any]) -> CompiledSchema:
    """Check ``schema`` against the S-2 bounds and compile it (cached by its JSON).

    Raises :class:`~hitl_nb.errors.SchemaRejected` naming the problem: not an object,
    over 64 KiB, nested deeper than 32, not a valid JSON Schema, an unknown ``$schema``
    dialect, a remote ``$ref``, an invalid regular expression, a lone UTF-16 surrogate.
    """
    return _compile(_canonical_schema(schema))


@functools.lru_cache(maxsize=256)
def _compile(canonical: str) -> CompiledSchema:
    from .. import _keywords  # noqa: F401  # first: jsonschema's slow format libraries wait

    # isort: split
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    from .._patterns import MAX_PATTERN_PROGRAM, pattern_cost
    from ._distinct import distinct
    from ._formats import metaschema_checker
    from ._walk import Seen, follow_refs, walk

    try:
        size = len(canonical.encode("utf-8"))
    except UnicodeEncodeError as exc:  # a schema made by code (parse_json refuses the text)
        code = f"\\u{ord(canonical[exc.start]):04x}"
        raise SchemaRejected(
            f"response_schema holds a lone UTF-16 surrogate ({code}), "
            "which is not a Unicode character"
        ) from None
    if size > MAX_SCHEMA_BYTES:
        raise SchemaRejected(
            f"response_schema is {size} bytes, over the {MAX_SCHEMA_BYTES}-byte limit (S-2)"
        )
    schema = json.loads(canonical)
    # Only on a cache miss: how deep the JSON itself nests (enum/const/default values
    # included), before anything recursive walks it.
    if json_depth(schema, 4 * MAX_DEPTH) > 4 * MAX_DEPTH:
        raise SchemaRejected(f"response_schema nests deeper than {4 * MAX_DEPTH} JSON levels")
    dialect = schema.get("$schema")
    if dialect is not None and not isinstance(dialect, str):
        # validator_for would raise TypeError (unhashable) or AttributeError on it.
        raise SchemaRejected(f"$schema must be a string (a dialect URI), got {json_type(dialect)}")
    if dialect is not None:
        known = validator_for(schema, default=_UNKNOWN)
        if known is _UNKNOWN:
            raise SchemaRejected(f"unknown $schema dialect {dialect!r}")
    seen = Seen()
    cls: Any = validator_for(schema, default=Draft202012Validator)
    root = cls.ID_OF(schema)
    walk(schema, "", 0, seen, cls.ID_OF)
    follow_refs(schema, cls, root if isinstance(root, str) else "", seen)
    program = 0
    for pattern in seen.patterns:
        program += pattern_cost(pattern)
        if program > MAX_PATTERN_PROGRAM:
            raise SchemaRejected(
                f"response_schema's regular expressions are too large together: over "
                f"{MAX_PATTERN_PROGRAM} instructions"
            )
    checker = metaschema_checker(cls)
    try:
        cls.check_schema(distinct(schema), format_checker=checker)
    except SchemaError as exc:
        where = pointer(exc.absolute_path)
        raise SchemaRejected(
            f"response_schema is not a valid JSON Schema at '{where}': {exc.message}"
        ) from None
    for ref, target in seen.adopted:  # objects a $ref reads as schemas (follow_refs)
        try:
            cls.check_schema(distinct(target), format_checker=checker)
        except SchemaError as exc:
            raise SchemaRejected(
                f"$ref {ref!r} points at a JSON object that is not a subschema: {exc.message}"
            ) from None
    return CompiledSchema(canonical)


def validate_payload(
    schema: Mapping[str, Any] | CompiledSchema, payload: Any, *, budget: float | None = None
) -> list[ValidationIssue]:
    """Validate ``payload`` against ``schema``; ``[]`` means valid.

    ``schema`` is a response_schema (compiled and cached on first use) or a
    :class:`CompiledSchema`. A schema that cannot be used raises
    :class:`~hitl_nb.errors.SchemaRejected`; everything wrong with the payload comes back
    as issues, including ``depth``, ``size``, ``json`` and ``timeout`` ones.
    """
    compiled = schema if isinstance(schema, CompiledSchema) else compile_schema(schema)
    return compiled.validate(payload, budget=budget)
