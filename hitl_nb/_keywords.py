"""The jsonschema keywords hitl-nb runs differently, and the time budget behind them.

- ``required``, ``dependentRequired``, ``additionalProperties`` (false) and ``properties``
  (false subschemas) report the member at fault in the error's path, not its parent;
- ``pattern`` and ``patternProperties`` run as ECMA 262 patterns (:mod:`hitl_nb._patterns`)
  on RE2 (linear time); a pattern RE2 cannot compile runs on the ``regex`` engine with
  a timeout;
- ``uniqueItems`` hashes values instead of comparing every pair;
- every keyword that applies subschemas checks the time budget first (S-2).
"""

from __future__ import annotations

import functools
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

# Before jsonschema: its slow format libraries load on first use (see _deferred).
from . import _deferred  # noqa: F401  # isort: skip

import attrs
import referencing.jsonschema
from jsonschema import ValidationError
from jsonschema.validators import create, validator_for
from referencing import Registry
from referencing.exceptions import NoSuchResource

from ._patterns import compile_pattern

#: S-2: the time budget of one validation, in seconds; also the timeout of a pattern
#: search that runs outside a validation (no deadline set). The one place it is set.
TIME_BUDGET = 0.25


class BudgetExceeded(Exception):
    """Raised inside a validation when its time budget is spent (or would be)."""


#: Per-thread deadline of the validation running on that thread (None: unbounded).
clock = threading.local()


def _tick() -> None:
    deadline = getattr(clock, "deadline", None)
    if deadline is not None and time.perf_counter() > deadline:
        raise BudgetExceeded


# --- regular expressions ---------------------------------------------------------------

#: RE2 searches in time ``len(text) x programsize`` at worst (its DFA gives up on
#: patterns such as ``(a|b|.){999}z``, 28 s on 1 MB); a search whose worst case exceeds
#: the remaining budget at this many seconds per unit is not started.
SECONDS_PER_UNIT = 3e-9


def _search(pattern: str, text: str) -> bool:
    compiled = compile_pattern(pattern)
    deadline = getattr(clock, "deadline", None)
    # ``regex`` is imported only when a pattern needs it (hitl_nb._patterns).
    backtracking = sys.modules.get("regex")
    if backtracking is not None and isinstance(compiled, backtracking.Pattern):
        timeout = max(deadline - time.perf_counter(), 0.001) if deadline else TIME_BUDGET
        try:
            return compiled.search(text, timeout=timeout) is not None
        except TimeoutError:
            raise BudgetExceeded from None
    if deadline is not None:
        worst = len(text) * compiled.programsize * SECONDS_PER_UNIT
        if worst > 0.01 and worst > deadline - time.perf_counter():
            # RE2 cannot be interrupted: refuse a long search that might not fit in the
            # budget (a short one just runs; the next check of the budget stops it).
            raise BudgetExceeded(
                f"pattern {pattern[:40]!r} on {len(text)} characters could take longer than "
                "the time budget"
            )
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
    extras = []
    for key in instance:
        # keys x patterns searches: 20,000 keys against 1,000 patterns took 40 s unticked.
        _tick()
        if key not in properties and not any(_search(p, key) for p in patterns):
            extras.append(key)
    return extras


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
                _tick()
                if _search(pattern, key):
                    yield from _descend(validator, value, subschema, key)


def _multiple_of(validator: Any, dB: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """jsonschema's ``multipleOf``, exact where floats overflow.

    jsonschema divides first: an integer beyond the float range (``10**400``, valid JSON)
    against a float ``multipleOf`` raised ``OverflowError`` out of the validation.
    """
    if not validator.is_type(instance, "number"):
        return
    if isinstance(dB, float):
        try:
            quotient = instance / dB
            failed = int(quotient) != quotient
        except (OverflowError, ValueError):
            failed = (Fraction(instance) / Fraction(dB)).denominator != 1
    else:
        failed = instance % dB != 0
    if failed:
        yield ValidationError(f"must be a multiple of {dB}")


_HASH_MODULUS = 2**61 - 1


def _freeze(value: Any) -> Any:
    """Hashable key with JSON equality: 1 and 1.0 are equal, true and 1 are not.

    Numbers are keyed by their text: Python hashes an int modulo 2**61 - 1, so the
    multiples of that number all collide, and 42,000 distinct ones (1 MB of JSON) took
    45 s to insert; string hashes are salted per process.
    """
    if isinstance(value, bool) or value is None:
        return (0, value)
    if isinstance(value, float):
        if not value.is_integer():
            return (1, repr(value))
        value = int(value)
    if isinstance(value, int):
        # Below the modulus an int hashes to itself: no collisions to craft.
        return (1, value if -_HASH_MODULUS < value < _HASH_MODULUS else str(value))
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


def _passes(validator: Any, instance: Any, subschema: Any) -> bool:
    return next(iter(validator.descend(instance, subschema)), None) is None


#: How many subschemas deep the search for evaluated members may go (a `$ref` cycle
#: would otherwise recurse forever).
_EVALUATION_DEPTH = 64


def _evaluated(validator: Any, instance: Mapping[str, Any], schema: Any, depth: int) -> set[str]:
    """The members of ``instance`` that ``schema`` evaluates (draft 2020-12 annotations).

    Patterns run through :func:`_search` (RE2 / budgeted), never Python's ``re``: this is
    why ``unevaluatedProperties`` is replaced at all (S-2).
    """
    if not isinstance(schema, dict):
        return set()
    if depth > _EVALUATION_DEPTH:
        raise RecursionError("unevaluatedProperties: references nest too deeply")
    _tick()
    found: set[str] = set()
    for key in ("$ref", "$dynamicRef"):
        if isinstance(schema.get(key), str):
            # jsonschema keeps the resolver of the current scope in ``_resolver``; a
            # resolved reference carries its own, for references inside it.
            resolved = validator._resolver.lookup(schema[key])
            inner = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
            found |= _evaluated(inner, instance, resolved.contents, depth + 1)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        found |= properties.keys() & instance.keys()
    for key in ("additionalProperties", "unevaluatedProperties"):
        if key in schema:
            found |= {k for k, v in instance.items() if _passes(validator, v, schema[key])}
    for pattern in schema.get("patternProperties", {}) or {}:
        _tick()
        found |= {k for k in instance if _search(pattern, k)}
    for prop, subschema in (schema.get("dependentSchemas") or {}).items():
        if prop in instance:
            found |= _evaluated(validator, instance, subschema, depth + 1)
    for key in ("allOf", "anyOf", "oneOf"):
        for subschema in schema.get(key) or []:
            if _passes(validator, instance, subschema):
                found |= _evaluated(validator, instance, subschema, depth + 1)
    if "if" in schema:
        branch = "then" if _passes(validator, instance, schema["if"]) else "else"
        if branch == "then":
            found |= _evaluated(validator, instance, schema["if"], depth + 1)
        found |= _evaluated(validator, instance, schema.get(branch), depth + 1)
    return found


def _unevaluated_properties(validator: Any, up: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated(validator, instance, schema, 0)
    for key in instance:
        if key in evaluated:
            continue
        if up is False:
            yield ValidationError(f"unevaluated property {key!r} is not permitted", path=(key,))
        else:
            yield from _descend(validator, instance[key], up, key)


OWN_KEYWORDS = {
    "unevaluatedProperties": _unevaluated_properties,
    "properties": _properties,
    "required": _required,
    "dependentRequired": _dependent_required,
    "additionalProperties": _additional_properties,
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "uniqueItems": _unique_items,
    "multipleOf": _multiple_of,
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
        "$ref",
        "$dynamicRef",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "properties",
        "patternProperties",
        "additionalProperties",
        "dependentSchemas",
        "propertyNames",
        "items",
        "prefixItems",
        "contains",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
        "dependencies",
        "extends",
        "type",
    }
)


def _ticking(applicable: Any) -> Any:
    """``applicable_validators`` that checks the budget first.

    jsonschema calls it each time a (sub)schema is applied to a value (``descend``,
    ``evolve``), before looking at any keyword: so the budget is checked once per item
    even when the item's subschema holds no keyword at all (5,000 unknown members
    applied to 200,000 items took 96 s) or only leaf keywords (``maximum`` and friends
    on 500,000 items: 9 s).
    """

    def applicable_validators(schema: Any) -> Any:
        _tick()
        return applicable(schema)

    return applicable_validators


#: The classes :func:`bounded_class` made (so a bounded class is never wrapped again).
_BOUNDED: set[type] = set()


def _staying_bounded(cls: Any) -> Any:
    """An ``evolve`` that never leaves the bounded classes.

    jsonschema's own ``evolve`` picks the class of each subschema it descends into with
    ``validator_for(subschema)``: a subschema (or a ``$ref`` target such as ``#``) that
    names a ``$schema`` dialect was validated by the plain, unbounded class of that
    dialect, with Python's ``re`` for ``pattern``: ``^(a+)+$`` on 28 characters took
    10 s, doubling with each character (S-2).
    """
    fields = [(f.name, f.alias) for f in attrs.fields(cls) if f.init]

    def evolve(self: Any, **changes: Any) -> Any:
        schema = changes.setdefault("schema", self.schema)
        target = validator_for(schema, default=type(self))
        if target not in _BOUNDED:
            target = bounded_class(target)
        for name, alias in fields:
            if alias not in changes:
                changes[alias] = getattr(self, name)
        return target(**changes)

    return evolve


@functools.lru_cache(maxsize=8)
def bounded_class(base: type) -> Any:
    """``base`` (a jsonschema validator class) with the keywords above and the budget."""
    if base in _BOUNDED:
        return base
    keywords = dict(base.VALIDATORS)  # type: ignore[attr-defined]
    keywords.update({k: f for k, f in OWN_KEYWORDS.items() if k in keywords})
    wrapped = {k: _timed(f) if k in _DESCENDING else f for k, f in keywords.items()}
    # What ``jsonschema.validators.extend`` does, with a budgeted applicable_validators.
    cls: Any = create(
        meta_schema=base.META_SCHEMA,  # type: ignore[attr-defined]
        validators=wrapped,
        type_checker=base.TYPE_CHECKER,  # type: ignore[attr-defined]
        format_checker=base.FORMAT_CHECKER,  # type: ignore[attr-defined]
        id_of=base.ID_OF,  # type: ignore[attr-defined]
        applicable_validators=_ticking(base._APPLICABLE_VALIDATORS),  # type: ignore[attr-defined]
    )
    cls.evolve = _staying_bounded(cls)
    _BOUNDED.add(cls)
    return cls


def _no_retrieval(uri: str) -> Any:
    # Never fetch a $ref: the schema comes from an agent, which need not be trusted, and a
    # retrieval would let it send this process to any address and keep it waiting there
    # (the spec's S-2 bounds what a response_schema may cost). Only references into the
    # schema itself resolve.
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


REGISTRY: Registry[Any] = Registry(retrieve=_no_retrieval)  # type: ignore[call-arg]


def _schemas_only(subresources_of: Any) -> Any:
    """``subresources_of`` that yields subschemas only.

    referencing's drafts 4 to 7 take every value of ``dependencies`` for a subschema as
    soon as the first one is: ``{"dependencies": {"a": {...}, "b": ["c"]}}`` (the array
    form beside the schema form) crashed the crawl of the schema with AttributeError.
    """

    def subresources(contents: Any) -> Iterator[Any]:
        for each in subresources_of(contents):
            if isinstance(each, (Mapping, bool)):
                yield each

    return subresources


@functools.lru_cache(maxsize=16)
def _specification(cls: Any) -> Any:
    spec = referencing.jsonschema.specification_with(
        cls.ID_OF(cls.META_SCHEMA), default=referencing.Specification.OPAQUE
    )
    return attrs.evolve(spec, subresources_of=_schemas_only(spec.subresources_of))  # type: ignore[misc]


def resolver_for(cls: Any, schema: Any) -> Any:
    """The ``$ref`` resolver of ``schema`` read in the dialect of validator class ``cls``,
    on :data:`REGISTRY` (which never fetches)."""
    return REGISTRY.resolver_with_root(_specification(cls).create_resource(schema))
