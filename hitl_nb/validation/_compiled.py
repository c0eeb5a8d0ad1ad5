"""A compiled response_schema: validating payloads within the S-2 bounds.

jsonschema and the bounded keywords (``hitl_nb._keywords``) are imported by the first
compiled schema, not by importing this module.
"""

from __future__ import annotations

import gc
import json
import time
from typing import Any

from .._json import json_depth, lone_surrogate
from .._pointer import pointer
from ._formats import format_checker
from ._issue import ValidationIssue, issue_for
from ._limits import MAX_DEPTH, MAX_ISSUES, MAX_PAYLOAD_BYTES

__all__ = ["CompiledSchema", "pattern_search", "payload_bounds"]


class CompiledSchema:
    """A response_schema checked against the S-2 bounds, ready to validate payloads.

    Get one with :func:`compile_schema` (cached). It keeps its own copy of the schema,
    so changing the caller's dict afterwards changes nothing here.
    """

    def __init__(self, canonical: str) -> None:
        self.schema: dict[str, Any] = json.loads(canonical)
        self.size = len(canonical.encode("utf-8"))
        # First: _keywords imports jsonschema with its slow format libraries deferred.
        from .._keywords import REGISTRY, bounded_class, resolver_for

        # isort: split
        from jsonschema import Draft202012Validator
        from jsonschema.validators import validator_for

        cls = validator_for(self.schema, default=Draft202012Validator)
        self._validator = bounded_class(cls)(
            self.schema,
            registry=REGISTRY,
            format_checker=format_checker(),
            _resolver=resolver_for(cls, self.schema),
        )

    def validate(self, payload: Any, *, budget: float | None = None) -> list[ValidationIssue]:
        """Every issue with ``payload`` (at most :data:`MAX_ISSUES`); ``[]`` when valid.

        ``budget`` is in seconds; None means the S-2 default, 250 ms
        (``hitl_nb._keywords.TIME_BUDGET`` as it is at call time).
        """
        return self._run(self._validator, payload, budget)

    def validate_part(
        self, subschema: Any, payload: Any, *, budget: float | None = None
    ) -> list[ValidationIssue]:
        """Issues of ``payload`` against ``subschema``, a part of this schema.

        The part is read as this schema reads it: in its dialect (``$schema`` of the
        root), its ``$ref`` resolved inside this schema. Paths are relative to the
        part. ``subschema`` must be made of this schema's subschemas (forms pass the
        options of a ``oneOf``, the ``if`` of a condition).
        """
        return self._run(self._validator.evolve(schema=subschema), payload, budget)

    def _run(self, validator: Any, payload: Any, budget: float | None) -> list[ValidationIssue]:
        from referencing.exceptions import Unresolvable  # loaded: the schema is compiled

        from .. import _keywords

        BudgetExceeded, clock = _keywords.BudgetExceeded, _keywords.clock
        if budget is None:
            budget = _keywords.TIME_BUDGET
        issues: list[ValidationIssue] = []
        # A full garbage collection of a big process (a kernel full of widgets) can take
        # longer than the whole budget; one landing inside a validation would turn a
        # valid answer into a timeout. Collection waits the few ms until we are done.
        collecting = gc.isenabled()
        if collecting:
            gc.disable()
        clock.deadline = time.perf_counter() + budget
        try:
            bound = payload_bounds(payload)
            if bound is not None:
                return [bound]
            for error in validator.iter_errors(payload):
                issues.append(issue_for(error))
                if len(issues) >= MAX_ISSUES:
                    break
        except BudgetExceeded as exc:
            why = str(exc) or f"validation stopped after {budget * 1000:.0f} ms"
            issues.append(ValidationIssue("", "timeout", why))
        except RecursionError:
            issues.append(ValidationIssue("", "depth", "schema references recurse too deeply"))
        except Unresolvable as exc:
            # Compiling resolves every reference it can see; this is the last guard.
            issues.append(ValidationIssue("", "$ref", f"a reference does not resolve: {exc}"))
        finally:
            clock.deadline = None
            if collecting:
                gc.enable()
        return issues

    def is_valid(self, payload: Any) -> bool:
        """True when :meth:`validate` finds nothing."""
        return not self.validate(payload)


def payload_bounds(payload: Any) -> ValidationIssue | None:
    """The issue of a payload nested too deep, too large or not JSON (a lone UTF-16
    surrogate in a string made by code, say); None if within bounds."""
    if json_depth(payload, MAX_DEPTH) > MAX_DEPTH:
        return ValidationIssue("", "depth", f"payload is nested deeper than {MAX_DEPTH} levels")
    try:
        # Unsorted: only the size and JSON-ness matter here.
        text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return ValidationIssue("", "json", f"payload is not JSON: {exc}")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        # Text read off a wire cannot hold one (parse_json refuses it); a str made by code
        # can, and no UTF-8 encoder takes it: said here, never an UnicodeEncodeError.
        found = lone_surrogate(payload)
        path, code = found if found is not None else ([], "a surrogate")
        return ValidationIssue(
            pointer(path),
            "json",
            f"payload is not JSON: it holds a lone UTF-16 surrogate ({code}), "
            "which is not a Unicode character",
        )
    if size > MAX_PAYLOAD_BYTES:
        return ValidationIssue(
            "", "size", f"payload of {size} bytes is over the limit of {MAX_PAYLOAD_BYTES}"
        )
    return None


def pattern_search(pattern: str, text: str) -> bool:
    """Whether the ECMA 262 ``pattern`` matches somewhere in ``text``, as the validator
    runs ``pattern`` and ``patternProperties`` (RE2, else ``regex`` with the default
    time budget as its timeout). Raises SchemaRejected for a pattern no engine runs."""
    from .. import _keywords

    return _keywords._search(pattern, text)
