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
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urldefrag, urljoin

import re2
import regex
from jsonschema import Draft202012Validator, FormatChecker, ValidationError
from jsonschema.exceptions import SchemaError, best_match
from jsonschema.validators import extend, validator_for
from referencing import Registry
from referencing.exceptions import NoSuchResource

from ._json import dumps_compact, json_depth
from .errors import SchemaRejected

#: S-2: the largest response_schema accepted, in bytes of compact UTF-8 JSON.
MAX_SCHEMA_BYTES = 64 * 1024
#: S-2: how deep subschemas may nest, and how deep a payload may nest.
MAX_DEPTH = 32
#: S-2: the time budget of one validation, in seconds.
TIME_BUDGET = 0.25
#: The largest payload accepted, in bytes of compact UTF-8 JSON.
MAX_PAYLOAD_BYTES = 1024 * 1024
#: Strings longer than this fail every ``format`` (no valid date, email, uri... is).
MAX_FORMAT_LENGTH = 8192
#: Validation stops collecting after this many issues.
MAX_ISSUES = 100

DIALECT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True)
class ValidationIssue:
    """One reason a payload is invalid: ``path`` (JSON Pointer), ``keyword``, ``message``."""

    path: str
    keyword: str
    message: str

    def to_json(self) -> dict[str, str]:
        """The spec's ``validation_errors`` entry."""
        return {"path": self.path, "keyword": self.keyword, "message": self.message}

    @classmethod
    def from_json(cls, obj: Any) -> ValidationIssue:
        """Read a ``validation_errors`` entry an agent sent; tolerant of odd members."""
        if not isinstance(obj, Mapping):
            return cls("", "unknown", str(obj))
        path = obj.get("path", "")
        return cls(
            path if isinstance(path, str) else json_pointer(path) if isinstance(path, list) else "",
            str(obj.get("keyword", "unknown")),
            str(obj.get("message", "")),
        )


def json_pointer(parts: Any) -> str:
    """RFC 6901 pointer for a sequence of keys and indexes (``[]`` is the root, ``""``)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


# --- formats ---------------------------------------------------------------------------


def _bounded_format_checker() -> FormatChecker:
    base = Draft202012Validator.FORMAT_CHECKER
    checker = FormatChecker(formats=())
    for name, (func, raises) in base.checkers.items():

        def bounded(instance: object, _func: Any = func) -> bool:
            if isinstance(instance, str) and len(instance) > MAX_FORMAT_LENGTH:
                return False
            return bool(_func(instance))

        checker.checkers[name] = (bounded, raises)
    return checker


#: The format checker shared by the validator and the forms: the draft 2020-12 formats
#: (date, date-time, time, email, uri, uuid, ...), each refusing strings over
#: :data:`MAX_FORMAT_LENGTH` characters.
FORMAT_CHECKER = _bounded_format_checker()


# --- the time budget -------------------------------------------------------------------


class _BudgetExceeded(Exception):
    pass


_budget = threading.local()


def _tick() -> None:
    deadline = getattr(_budget, "deadline", None)
    if deadline is not None and time.perf_counter() > deadline:
        raise _BudgetExceeded


# --- regular expressions ---------------------------------------------------------------

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


@functools.lru_cache(maxsize=1024)
def _compile_pattern(pattern: str) -> Any:
    """RE2 when it can; otherwise the ``regex`` engine (searched with a timeout)."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error:
        pass
    try:
        return regex.compile(pattern, regex.V0)
    except regex.error as exc:
        raise SchemaRejected(f"invalid regular expression {pattern!r}: {exc}") from None


def _search(pattern: str, text: str) -> bool:
    compiled = _compile_pattern(pattern)
    if isinstance(compiled, regex.Pattern):
        deadline = getattr(_budget, "deadline", None)
        timeout = max(deadline - time.perf_counter(), 0.001) if deadline else TIME_BUDGET
        try:
            return compiled.search(text, timeout=timeout) is not None
        except TimeoutError:
            raise _BudgetExceeded from None
    return compiled.search(text) is not None


# --- keywords replaced so errors name the member and nothing runs unbounded ----------


def _required(validator: Any, required: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "object"):
        for name in required:
            if name not in instance:
                yield ValidationError(f"required property {name!r} is missing", path=(name,))


def _dependent_required(validator: Any, dep: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "object"):
        for prop, needed in dep.items():
            if prop in instance:
                for name in needed:
                    if name not in instance:
                        yield ValidationError(
                            f"required property {name!r} is missing (needed with {prop!r})",
                            path=(name,),
                        )


def _extras(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [
        key
        for key in instance
        if key not in properties and not any(_search(p, key) for p in patterns)
    ]


def _additional_properties(validator: Any, ap: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    extras = _extras(instance, schema)
    if validator.is_type(ap, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], ap, path=extra)
    elif ap is False:
        for extra in extras:
            yield ValidationError(f"additional property {extra!r} is not permitted", path=(extra,))


def _descend(validator: Any, value: Any, subschema: Any, key: str) -> Iterator[Any]:
    # jsonschema yields the error of a `false` subschema without its path; add it.
    if subschema is False:
        yield ValidationError("no value is allowed here", path=(key,), validator_value=False)
    else:
        yield from validator.descend(value, subschema, path=key, schema_path=key)


def _properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "object"):
        for name, subschema in properties.items():
            if name in instance:
                yield from _descend(validator, instance[name], subschema, name)


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"must match the pattern {pattern!r}")


def _pattern_properties(validator: Any, pp: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "object"):
        for pattern, subschema in pp.items():
            for key, value in instance.items():
                if _search(pattern, key):
                    yield from _descend(validator, value, subschema, key)


def _freeze(value: Any) -> Any:
    """Hashable key with JSON equality: 1 and 1.0 are equal, true and 1 are not."""
    if isinstance(value, bool) or value is None:
        return (0, value)
    if isinstance(value, (int, float)):
        return (1, int(value) if isinstance(value, float) and value.is_integer() else value)
    if isinstance(value, str):
        return (2, value)
    if isinstance(value, list):
        return (3, tuple(_freeze(v) for v in value))
    if isinstance(value, dict):
        return (4, frozenset((k, _freeze(v)) for k, v in value.items()))
    return (5, repr(value))


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: dict[Any, int] = {}
    for index, item in enumerate(instance):
        if index % 256 == 0:
            _tick()
        key = _freeze(item)
        if key in seen:
            yield ValidationError(f"duplicate of item {seen[key]}", path=(index,))
        else:
            seen[key] = index


_OWN_KEYWORDS = {
    "properties": _properties,
    "required": _required,
    "dependentRequired": _dependent_required,
    "additionalProperties": _additional_properties,
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "uniqueItems": _unique_items,
}


def _timed(func: Any) -> Any:
    def keyword(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        _tick()
        return func(validator, value, instance, schema)

    return keyword


# Keywords that apply subschemas (or loop over members): the budget is checked each time
# one runs. Leaf keywords (type, maximum, maxLength, ...) do constant or linear work on
# one value between two checks, so they run unwrapped.
_DESCENDING = frozenset(
    {
        "$ref", "$dynamicRef", "allOf", "anyOf", "oneOf", "not", "if", "properties",
        "patternProperties", "additionalProperties", "dependentSchemas", "propertyNames",
        "items", "prefixItems", "contains", "unevaluatedItems", "unevaluatedProperties",
        "additionalItems", "dependencies", "extends", "type",
    }
)  # fmt: skip


@functools.lru_cache(maxsize=8)
def _bounded_class(base: type) -> Any:
    keywords = dict(base.VALIDATORS)  # type: ignore[attr-defined]
    keywords.update({k: f for k, f in _OWN_KEYWORDS.items() if k in keywords})
    wrapped = {k: _timed(f) if k in _DESCENDING else f for k, f in keywords.items()}
    return extend(base, wrapped)  # type: ignore[no-untyped-call]


_UNKNOWN: Any = object()


def _no_retrieval(uri: str) -> Any:
    # Never fetch: a schema comes from an untrusted agent (S-2, STYLE: local $ref only).
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


_REGISTRY: Registry[Any] = Registry(retrieve=_no_retrieval)  # type: ignore[call-arg]


# --- messages ---------------------------------------------------------------------------

_JSON_TYPES = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
    type(None): "null",
}


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _short(value: Any, limit: int = 60) -> str:
    text: str = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _message(error: ValidationError) -> str:
    kw, want, got = error.validator, error.validator_value, error.instance
    if kw in _OWN_KEYWORDS and kw != "properties":
        return error.message
    if kw is None or (kw == "properties" and want is False):  # the schema `false`
        return "no value is allowed here"
    if kw == "type":
        expected = " or ".join(want) if isinstance(want, list) else str(want)
        return f"expected {expected}, got {_json_type(got)}"
    if kw == "enum":
        options = want if isinstance(want, list) else []
        return "must be one of " + ", ".join(_short(v, 30) for v in options[:10])
    if kw == "const":
        return f"must be {_short(want)}"
    if kw == "minLength":
        return f"must be at least {want} characters"
    if kw == "maxLength":
        return f"must be at most {want} characters"
    if kw == "minimum":
        return f"must be at least {want}"
    if kw == "maximum":
        return f"must be at most {want}"
    if kw == "exclusiveMinimum":
        return f"must be greater than {want}"
    if kw == "exclusiveMaximum":
        return f"must be less than {want}"
    if kw == "multipleOf":
        return f"must be a multiple of {want}"
    if kw == "format":
        return f"is not a valid {want}"
    if kw == "minItems":
        return f"must have at least {want} items"
    if kw == "maxItems":
        return f"must have at most {want} items"
    if kw == "minProperties":
        return f"must have at least {want} properties"
    if kw == "maxProperties":
        return f"must have at most {want} properties"
    if kw == "anyOf":
        return "does not match any of the allowed forms"
    if kw == "oneOf":
        return "must match exactly one of the allowed forms"
    if kw == "not":
        return "is not allowed"
    if kw == "contains":
        return "has no item of the required kind"
    return error.message


def _issue(error: ValidationError) -> ValidationIssue:
    false_schema = error.validator is None or (
        error.validator == "properties" and error.validator_value is False
    )
    keyword = "false" if false_schema else str(error.validator)
    if keyword in ("anyOf", "oneOf") and error.context:
        # Prefer the alternative that got furthest: its error names the field at fault.
        deeper = best_match(error.context)
        if deeper is not None and len(deeper.absolute_path) > len(error.absolute_path):
            return _issue(deeper)
    return ValidationIssue(json_pointer(error.absolute_path), keyword, _message(error))


# --- compiling a schema -----------------------------------------------------------------

_SCHEMA_KEYWORDS = (
    "additionalProperties", "items", "contains", "not", "if", "then", "else",
    "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems",
)  # fmt: skip
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")


def _walk(schema: Any, base: str, depth: int, seen: dict[str, Any]) -> None:
    """Collect $id, $ref and patterns; refuse subschemas nested deeper than MAX_DEPTH."""
    if not isinstance(schema, dict):
        return
    if depth > MAX_DEPTH:
        raise SchemaRejected(f"response_schema nests subschemas deeper than {MAX_DEPTH} levels")
    if isinstance(schema.get("$id"), str):
        base = urljoin(base, schema["$id"])
        seen["ids"].add(urldefrag(base)[0])
    for key in ("$ref", "$dynamicRef"):
        if isinstance(schema.get(key), str):
            seen["refs"].append((base, schema[key]))
    if isinstance(schema.get("pattern"), str):
        seen["patterns"].add(schema["pattern"])
    for key in _SCHEMA_KEYWORDS:
        _walk(schema.get(key), base, depth + 1, seen)
    for key in _SCHEMA_MAPS:
        sub = schema.get(key)
        if isinstance(sub, dict):
            if key == "patternProperties":
                seen["patterns"].update(sub)
            for child in sub.values():
                _walk(child, base, depth + 1, seen)
    for key in _SCHEMA_LISTS:
        sub = schema.get(key)
        if isinstance(sub, list):
            for child in sub:
                _walk(child, base, depth + 1, seen)


class CompiledSchema:
    """A response_schema checked against the S-2 bounds, ready to validate payloads.

    Get one with :func:`compile_schema` (cached). It keeps its own copy of the schema,
    so changing the caller's dict afterwards changes nothing here.
    """

    def __init__(self, canonical: str) -> None:
        self.schema: dict[str, Any] = json.loads(canonical)
        self.size = len(canonical.encode("utf-8"))
        cls = validator_for(self.schema, default=Draft202012Validator)
        self._validator = _bounded_class(cls)(
            self.schema, registry=_REGISTRY, format_checker=FORMAT_CHECKER
        )

    def validate(self, payload: Any, *, budget: float = TIME_BUDGET) -> list[ValidationIssue]:
        """Every issue with ``payload`` (at most :data:`MAX_ISSUES`); ``[]`` when valid."""
        issues: list[ValidationIssue] = []
        _budget.deadline = time.perf_counter() + budget
        try:
            bound = _payload_bounds(payload)
            if bound is not None:
                return [bound]
            for error in self._validator.iter_errors(payload):
                issues.append(_issue(error))
                if len(issues) >= MAX_ISSUES:
                    break
        except _BudgetExceeded:
            issues.append(
                ValidationIssue("", "timeout", f"validation stopped after {budget * 1000:.0f} ms")
            )
        except RecursionError:
            issues.append(ValidationIssue("", "depth", "schema references recurse too deeply"))
        finally:
            _budget.deadline = None
        return issues

    def is_valid(self, payload: Any) -> bool:
        """True when :meth:`validate` finds nothing."""
        return not self.validate(payload)


def _payload_bounds(payload: Any) -> ValidationIssue | None:
    if json_depth(payload, MAX_DEPTH) > MAX_DEPTH:
        return ValidationIssue("", "depth", f"payload is nested deeper than {MAX_DEPTH} levels")
    try:
        # Unsorted: only the size and JSON-ness matter here.
        text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return ValidationIssue("", "json", f"payload is not JSON: {exc}")
    size = len(text.encode("utf-8"))
    if size > MAX_PAYLOAD_BYTES:
        return ValidationIssue(
            "", "size", f"payload of {size} bytes is over the limit of {MAX_PAYLOAD_BYTES}"
        )
    return None


def _canonical_schema(schema: Any) -> str:
    if not isinstance(schema, Mapping):
        raise SchemaRejected(f"response_schema must be a JSON object, got {_json_type(schema)}")
    if json_depth(schema, 4 * MAX_DEPTH) > 4 * MAX_DEPTH:
        raise SchemaRejected(f"response_schema nests deeper than {4 * MAX_DEPTH} JSON levels")
    try:
        return dumps_compact(schema)
    except (TypeError, ValueError) as exc:
        raise SchemaRejected(f"response_schema is not JSON: {exc}") from None


def compile_schema(schema: Mapping[str, Any]) -> CompiledSchema:
    """Check ``schema`` against the S-2 bounds and compile it (cached by its JSON).

    Raises :class:`~hitl_nb.errors.SchemaRejected` naming the problem: not an object,
    over 64 KiB, nested deeper than 32, not a valid JSON Schema, an unknown ``$schema``
    dialect, a remote ``$ref``, an invalid regular expression.
    """
    return _compile(_canonical_schema(schema))


@functools.lru_cache(maxsize=256)
def _compile(canonical: str) -> CompiledSchema:
    size = len(canonical.encode("utf-8"))
    if size > MAX_SCHEMA_BYTES:
        raise SchemaRejected(
            f"response_schema is {size} bytes, over the {MAX_SCHEMA_BYTES}-byte limit (S-2)"
        )
    schema = json.loads(canonical)
    dialect = schema.get("$schema")
    if dialect is not None:
        known = validator_for(schema, default=_UNKNOWN)
        if known is _UNKNOWN:
            raise SchemaRejected(f"unknown $schema dialect {dialect!r}")
    seen: dict[str, Any] = {"ids": set(), "refs": [], "patterns": set()}
    root = schema.get("$id") if isinstance(schema.get("$id"), str) else ""
    _walk(schema, "", 0, seen)
    for base, ref in seen["refs"]:
        if ref.startswith("#"):
            continue
        target = urldefrag(urljoin(base, ref))[0]
        if target not in seen["ids"] and target != root:
            raise SchemaRejected(f"remote $ref {ref!r} is not allowed: only local references")
    for pattern in seen["patterns"]:
        _compile_pattern(pattern)
    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        where = json_pointer(exc.absolute_path)
        raise SchemaRejected(
            f"response_schema is not a valid JSON Schema at '{where}': {exc.message}"
        ) from None
    return CompiledSchema(canonical)


def validate_payload(
    schema: Mapping[str, Any] | CompiledSchema, payload: Any, *, budget: float = TIME_BUDGET
) -> list[ValidationIssue]:
    """Validate ``payload`` against ``schema``; ``[]`` means valid.

    ``schema`` is a response_schema (compiled and cached on first use) or a
    :class:`CompiledSchema`. A schema that cannot be used raises
    :class:`~hitl_nb.errors.SchemaRejected`; everything wrong with the payload comes back
    as issues, including ``depth``, ``size``, ``json`` and ``timeout`` ones.
    """
    compiled = schema if isinstance(schema, CompiledSchema) else compile_schema(schema)
    return compiled.validate(payload, budget=budget)
