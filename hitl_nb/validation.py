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
import gc
import ipaddress
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag, urljoin

from jsonschema import Draft202012Validator, FormatChecker, ValidationError
from jsonschema.exceptions import SchemaError, best_match
from jsonschema.validators import validator_for
from referencing.exceptions import Unresolvable

from . import _keywords
from ._json import dumps_compact, json_depth
from ._keywords import (
    REGISTRY,
    BudgetExceeded,
    bounded_class,
    clock,
    resolver_for,
)
from ._messages import json_type, message_for
from ._patterns import MAX_PATTERN_PROGRAM, compile_pattern, pattern_cost
from ._pointer import pointer
from .errors import SchemaRejected

#: S-2: the largest response_schema accepted, in bytes of compact UTF-8 JSON.
MAX_SCHEMA_BYTES = 64 * 1024
#: S-2: how deep subschemas may nest, and how deep a payload may nest.
MAX_DEPTH = 32
#: How many subschemas (``true``/``false`` included) a response_schema may hold: each
#: costs about 0.2 ms to check against the metaschema when the schema is compiled.
MAX_SUBSCHEMAS = 2048
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
            path if isinstance(path, str) else pointer(path) if isinstance(path, list) else "",
            str(obj.get("keyword", "unknown")),
            str(obj.get("message", "")),
        )


# --- formats ---------------------------------------------------------------------------


def _iri_char_allowed(char: str, in_query: bool) -> bool:
    """RFC 3987 ``ucschar`` anywhere, ``iprivate`` in the query only."""
    code = ord(char)
    plane, low = code >> 16, code & 0xFFFF
    if plane == 0:
        if 0xA0 <= code <= 0xD7FF or 0xF900 <= code <= 0xFDCF or 0xFDF0 <= code <= 0xFFEF:
            return True
        return in_query and 0xE000 <= code <= 0xF8FF
    if plane <= 13:
        return low <= 0xFFFD
    if plane == 14:
        return 0x1000 <= low <= 0xFFFD
    return in_query and low <= 0xFFFD


def _ip_literal_ok(text: str) -> bool:
    """An IPv6 host in brackets is a real IPv6 address (rfc3986-validator's pattern let
    an embedded IPv4 part with a leading zero through: ``[::ffff:192.168.0.01]``)."""
    start = text.find("//[")
    if start < 0:
        return True
    end = text.find("]", start)
    host = text[start + 3 : end] if end > 0 else ""
    if not host or host[:1] in "vV":  # IPvFuture: left to the grammar
        return True
    try:
        ipaddress.IPv6Address(host.split("%25", 1)[0])
    except ValueError:
        return False
    return True


def _iri(rule: str, *, iri: bool = True) -> Any:
    """``iri`` / ``iri-reference`` in linear time (``uri`` / ``uri-reference`` as well).

    jsonschema checks these with an Earley parser (``rfc3987-syntax``): 0.3 to 0.6 ms
    per character, 7 s for one 8 KiB string. RFC 3987 §3.1 maps an IRI to a URI by
    percent-encoding its non-ASCII characters; so: check those characters are ones an
    IRI allows, encode them, and check the URI grammar (``rfc3986-validator``).
    """

    def check(instance: object) -> bool:
        if not isinstance(instance, str):
            return True
        if not _ip_literal_ok(instance):
            return False
        if instance.endswith("\n"):
            # rfc3986-validator's pattern ends in ``$``, which also matches before a
            # final newline.
            return False
        if instance.isascii():
            return bool(_rfc3986()(instance, rule=rule))
        if not iri:
            return False
        fragment = instance.find("#")
        query = instance.find("?", 0, fragment if fragment >= 0 else len(instance))
        out = []
        for index, char in enumerate(instance):
            if char.isascii():
                out.append(char)
                continue
            in_query = query >= 0 and index > query and (fragment < 0 or index < fragment)
            if not _iri_char_allowed(char, in_query):
                return False
            out.append("".join(f"%{byte:02X}" for byte in char.encode("utf-8")))
        return bool(_rfc3986()("".join(out), rule=rule))

    return check


def is_regex(instance: object) -> bool:
    """Format ``regex``: a pattern the engines that run ``pattern`` can run.

    One decision for both: the metaschema's check of a schema's ``pattern`` and the
    search that runs it (Python's ``re`` refused ECMA's ``(?<name>...)`` and
    ``\\p{Letter}``, which RE2 runs). See :func:`hitl_nb._patterns.ecma_to_re2`.
    """
    if not isinstance(instance, str):
        return True
    try:
        compile_pattern(instance)
    except SchemaRejected:
        return False
    return True


def _rfc3986() -> Any:
    # Imported on first use: the grammar compiles about 25 ms of regular expressions.
    from rfc3986_validator import validate_rfc3986  # type: ignore[import-untyped]

    return validate_rfc3986


def _bounded_format_checker() -> FormatChecker:
    base = Draft202012Validator.FORMAT_CHECKER
    checker = FormatChecker(formats=())
    own = {
        "iri": (_iri("URI"), ValueError),
        "iri-reference": (_iri("URI_reference"), ValueError),
        "uri": (_iri("URI", iri=False), ValueError),
        "uri-reference": (_iri("URI_reference", iri=False), ValueError),
        "regex": (is_regex, ()),
    }
    for name, (func, raises) in {**base.checkers, **own}.items():

        def bounded(instance: object, _func: Any = func) -> bool:
            if isinstance(instance, str) and len(instance) > MAX_FORMAT_LENGTH:
                return False
            try:
                return bool(_func(instance))
            except RecursionError:
                # format "regex": Python's re recurses once per nested group.
                return False

        checker.checkers[name] = (bounded, raises)
    return checker


#: The format checker shared by the validator and the forms: the draft 2020-12 formats
#: (date, date-time, time, email, uri, uuid, ...), each refusing strings over
#: :data:`MAX_FORMAT_LENGTH` characters.
FORMAT_CHECKER = _bounded_format_checker()


_UNKNOWN: Any = object()


@functools.lru_cache(maxsize=8)
def _metaschema_checker(cls: Any) -> FormatChecker:
    """The format checker a dialect's metaschema is checked with, ``regex`` ours."""
    checker = FormatChecker(formats=())
    meta = validator_for(cls.META_SCHEMA, default=cls)
    checker.checkers = {**meta.FORMAT_CHECKER.checkers, "regex": (is_regex, ())}
    return checker


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
    return ValidationIssue(pointer(error.absolute_path), keyword, message_for(error))


# --- compiling a schema -----------------------------------------------------------------

_SCHEMA_KEYWORDS = (
    "additionalProperties", "items", "contains", "not", "if", "then", "else",
    "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems",
)  # fmt: skip
#: ``dependencies`` (drafts 4 to 7) mixes subschemas and name lists: the walk skips lists.
_SCHEMA_MAPS = (
    "properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
    "dependencies",
)  # fmt: skip
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")


@dataclass
class _Seen:
    """What the compile walk found in a response_schema."""

    #: Subschemas met, ``true``/``false`` included.
    count: int = 0
    #: ``id()`` of each subschema object walked (a ``$ref`` must land on one of them).
    walked: set[int] = field(default_factory=set)
    #: The absolute ``$id`` of each embedded resource.
    ids: set[str] = field(default_factory=set)
    #: ``(base URI, reference)`` of each ``$ref`` and ``$dynamicRef``.
    refs: list[tuple[str, str]] = field(default_factory=list)
    #: Every ``pattern`` and ``patternProperties`` key.
    patterns: set[str] = field(default_factory=set)


def _join(base: str, ref: str) -> str:
    """``ref`` resolved against ``base``, also where ``urljoin`` cannot (``urn:`` bases).

    ``urljoin`` only resolves against the schemes it lists as hierarchical: against
    ``urn:uuid:...`` it returned ``#/$defs/a`` unchanged, which then pointed into the
    root instead of the embedded resource.
    """
    if ref.startswith("#"):
        return urldefrag(base)[0] + ref
    return urljoin(base, ref)


def _walk(schema: Any, base: str, depth: int, seen: _Seen, id_of: Any = None) -> None:
    """Collect $id, $ref and patterns; refuse subschemas nested deeper than MAX_DEPTH.

    Also counts subschemas: checking a schema against the metaschema costs about 0.2 ms
    for each, however small (``allOf`` of 16,000 ``true`` fits in 64 KiB: 3.7 s).
    """
    if not isinstance(schema, (dict, bool)):
        return
    seen.count += 1
    if seen.count > MAX_SUBSCHEMAS:
        raise SchemaRejected(f"response_schema has more than {MAX_SUBSCHEMAS} subschemas")
    if isinstance(schema, bool):
        return
    if depth > MAX_DEPTH:
        raise SchemaRejected(f"response_schema nests subschemas deeper than {MAX_DEPTH} levels")
    seen.walked.add(id(schema))
    # The dialect says where an identifier is: ``id`` in draft 4, and in drafts 4 to 7
    # none beside a ``$ref`` (which overrides its siblings there).
    found = id_of(schema) if id_of is not None else schema.get("$id")
    if isinstance(found, str):
        base = _join(base, found)
        seen.ids.add(urldefrag(base)[0])
    for key in ("$ref", "$dynamicRef"):
        if isinstance(schema.get(key), str):
            seen.refs.append((base, schema[key]))
    if isinstance(schema.get("pattern"), str):
        seen.patterns.add(schema["pattern"])
    for key in _SCHEMA_KEYWORDS:
        _walk(schema.get(key), base, depth + 1, seen, id_of)
    for key in _SCHEMA_MAPS:
        sub = schema.get(key)
        if isinstance(sub, dict):
            if key == "patternProperties":
                seen.patterns.update(sub)
            for child in sub.values():
                _walk(child, base, depth + 1, seen, id_of)
    for key in _SCHEMA_LISTS:
        sub = schema.get(key)
        if isinstance(sub, list):
            for child in sub:
                _walk(child, base, depth + 1, seen, id_of)


#: Maps whose values are subschemas and whose keys the metaschemas leave free.
_FREE_KEY_MAPS = ("properties", "$defs", "definitions")


#: Annotations the metaschemas only ask to be strings.
_TEXT_ANNOTATIONS = ("title", "description", "$comment")


def _shape(value: Any) -> Any:
    """What the metaschema check sees of a subschema: its text annotations blanked
    and its ``default``/``const`` values (which any value satisfies) dropped."""
    if isinstance(value, list):
        return [_shape(item) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in _TEXT_ANNOTATIONS and isinstance(item, str):
            out[key] = ""
        elif key in ("default", "const"):
            out[key] = None
        elif key in ("enum", "examples"):
            out[key] = item  # draft 4 asks enum values to be unique: kept as they are
        else:
            out[key] = _shape(item)
    return out


def _distinct(schema: Any) -> Any:
    """``schema`` with repeated subschemas left out of its ``properties``/``$defs``
    maps, for the metaschema check only.

    The metaschema judges a subschema by its contents, wherever it stands, and leaves
    the names in these maps free: one copy of each distinct subschema (told apart by
    :func:`_shape`, so titles and descriptions do not count) gets the verdict of all.
    The first copy keeps its name, so an error names the first place it is found.
    """
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    for key in _SCHEMA_KEYWORDS:
        if key in out:
            out[key] = _distinct(out[key])
    for key in _SCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_distinct(item) for item in out[key]]
    for key in _SCHEMA_MAPS:
        value = out.get(key)
        if not isinstance(value, dict):
            continue
        if key not in _FREE_KEY_MAPS:
            out[key] = {name: _distinct(sub) for name, sub in value.items()}
            continue
        kept: dict[str, Any] = {}
        texts: set[str] = set()
        for name, sub in value.items():
            text = json.dumps(_shape(sub), sort_keys=True, separators=(",", ":"))
            if text not in texts:
                texts.add(text)
                kept[name] = _distinct(sub)
        out[key] = kept
    return out


def _follow_refs(schema: dict[str, Any], cls: Any, root: str, seen: _Seen) -> None:
    """Refuse remote and dangling references, and those that point at no subschema.

    A ``$ref`` must land on a subschema (a place the schema's keywords define, such as
    ``$defs`` or ``properties``), which the metaschema check and the walk have seen.
    Anything else is refused here, at compile time, so that no reference fails in the
    middle of a validation (``PointerToNowhere``, or a ``TypeError`` for
    ``{"type": 5}`` inside an ``enum``) or hides a remote reference or a bad pattern
    from the compile-time checks (draft 2020-12 leaves references to non-schemas
    undefined).
    """
    resolver = resolver_for(cls, schema)
    for base, ref in seen.refs:
        if not ref.startswith("#"):
            target = urldefrag(_join(base, ref))[0]
            if target not in seen.ids and target != root:
                raise SchemaRejected(f"remote $ref {ref!r} is not allowed: only local references")
        try:
            contents = resolver.lookup(_join(base, ref)).contents
        except Unresolvable:
            raise SchemaRejected(f"$ref {ref!r} points at nothing in the schema") from None
        if isinstance(contents, bool):
            continue
        if not isinstance(contents, dict) or id(contents) not in seen.walked:
            raise SchemaRejected(
                f"$ref {ref!r} points at a JSON {json_type(contents)} that is not a subschema"
            )


class CompiledSchema:
    """A response_schema checked against the S-2 bounds, ready to validate payloads.

    Get one with :func:`compile_schema` (cached). It keeps its own copy of the schema,
    so changing the caller's dict afterwards changes nothing here.
    """

    def __init__(self, canonical: str) -> None:
        self.schema: dict[str, Any] = json.loads(canonical)
        self.size = len(canonical.encode("utf-8"))
        cls = validator_for(self.schema, default=Draft202012Validator)
        self._validator = bounded_class(cls)(
            self.schema,
            registry=REGISTRY,
            format_checker=FORMAT_CHECKER,
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
            bound = _payload_bounds(payload)
            if bound is not None:
                return [bound]
            for error in validator.iter_errors(payload):
                issues.append(_issue(error))
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
    seen = _Seen()
    cls: Any = validator_for(schema, default=Draft202012Validator)
    root = cls.ID_OF(schema)
    _walk(schema, "", 0, seen, cls.ID_OF)
    _follow_refs(schema, cls, root if isinstance(root, str) else "", seen)
    program = 0
    for pattern in seen.patterns:
        program += pattern_cost(pattern)
        if program > MAX_PATTERN_PROGRAM:
            raise SchemaRejected(
                f"response_schema's regular expressions are too large together: over "
                f"{MAX_PATTERN_PROGRAM} instructions"
            )
    try:
        cls.check_schema(_distinct(schema), format_checker=_metaschema_checker(cls))
    except SchemaError as exc:
        where = pointer(exc.absolute_path)
        raise SchemaRejected(
            f"response_schema is not a valid JSON Schema at '{where}': {exc.message}"
        ) from None
    return CompiledSchema(canonical)


def pattern_search(pattern: str, text: str) -> bool:
    """Whether the ECMA 262 ``pattern`` matches somewhere in ``text``, as the validator
    runs ``pattern`` and ``patternProperties`` (RE2, else ``regex`` with the default
    time budget as its timeout). Raises SchemaRejected for a pattern no engine runs."""
    return _keywords._search(pattern, text)


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
