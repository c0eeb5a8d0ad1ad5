"""A response_schema as it arrives from an agent, made stable for everything above it.

Agents built on the A2A SDKs carry metadata as a protobuf ``Struct``, and that costs
two things on the way through. :func:`settle_schema` is the one place both are fixed:
the client calls it on every prompt it decodes, and ``Form`` on the schema it is given
(numbers only there: a form keeps its caller's order), so a form drawn from what an SDK
agent sent and one built directly from the same schema are the same form.

**Numbers become doubles.** ``maxLength: 1024`` arrives as ``1024.0``, ``minItems: 2``
as ``2.0``, an integer field's ``minimum: 1`` as ``1.0``. :func:`integral_numbers`
turns an integral float back into an int wherever JSON Schema means an integer: the
counting keywords (``minLength``/``maxLength``, ``minItems``/``maxItems``,
``minProperties``/``maxProperties``, ``minContains``/``maxContains``) everywhere, and
the bounds, ``multipleOf``, ``default``, ``const``, ``enum`` and ``examples`` of a node
whose ``type`` is ``integer``. ``number`` nodes keep their floats.

**Key order is lost.** A ``Struct`` is a map: the same agent sends ``approve, comment``
in one process and ``comment, approve`` in the next. :func:`stable_property_order`
reorders every ``properties`` object by a rule that does not depend on the map: first
the ``required`` names in the order of the ``required`` array (a protobuf
``ListValue`` keeps its order), then the others alphabetically. An explicit order
(``x-ui-order`` in the schema, or ``ui:order`` in the ``ui`` dict a form is given)
still wins in the form. The client applies this rule only when the agent's order
cannot be trusted (see :func:`hitl_nb.client.HitlClient`'s ``property_order``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["COUNT_KEYWORDS", "integral_numbers", "settle_schema", "stable_property_order"]

#: Keywords whose value is a non-negative integer in every JSON Schema.
COUNT_KEYWORDS = frozenset(
    "minLength maxLength minItems maxItems minProperties maxProperties minContains "
    "maxContains".split()
)
_INTEGER_VALUES = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "default",
    "const",
)
_INTEGER_LISTS = ("enum", "examples")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_ONE = (
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
)
_SCHEMA_LISTS = ("prefixItems", "allOf", "anyOf", "oneOf")
# Deeper than any schema the S-2 checks let through; a bound, not a rule.
_MAX_DEPTH = 64


def _int_if_integral(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return value


def _means_integer(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    if kind == "integer":
        return True
    return isinstance(kind, list) and "integer" in kind and "number" not in kind


def _walk(node: Any, visit: Callable[[dict[str, Any]], None], depth: int = 0) -> None:
    """Call ``visit`` on every schema object under ``node`` (itself included)."""
    if not isinstance(node, dict) or depth > _MAX_DEPTH:
        return
    visit(node)
    for key in _SCHEMA_MAPS:
        children = node.get(key)
        if isinstance(children, dict):
            for child in children.values():
                _walk(child, visit, depth + 1)
    for key in _SCHEMA_ONE:
        _walk(node.get(key), visit, depth + 1)
    for key in _SCHEMA_LISTS:
        children = node.get(key)
        if isinstance(children, list):
            for child in children:
                _walk(child, visit, depth + 1)


def _fix_numbers(node: dict[str, Any]) -> None:
    for key in COUNT_KEYWORDS.intersection(node):
        node[key] = _int_if_integral(node[key])
    if not _means_integer(node):
        return
    for key in _INTEGER_VALUES:
        if key in node:
            node[key] = _int_if_integral(node[key])
    for key in _INTEGER_LISTS:
        if isinstance(node.get(key), list):
            node[key] = [_int_if_integral(v) for v in node[key]]


def integral_numbers(schema: Any) -> Any:
    """``schema`` with integral floats made ints where JSON Schema means an integer
    (changed in place; returned for convenience)."""
    _walk(schema, _fix_numbers)
    return schema


def _order(node: dict[str, Any]) -> None:
    props = node.get("properties")
    if not isinstance(props, dict):
        return
    required = node.get("required")
    first = [n for n in required if n in props] if isinstance(required, list) else []
    first = list(dict.fromkeys(n for n in first if isinstance(n, str)))
    rest = sorted(n for n in props if n not in first)
    node["properties"] = {name: props[name] for name in first + rest}


def stable_property_order(schema: Any) -> Any:
    """``schema`` with every ``properties`` object in the stable order: required names
    as the ``required`` array lists them, then the others alphabetically (in place)."""
    _walk(schema, _order)
    return schema


def settle_schema(schema: Any, *, stable_order: bool = False) -> Any:
    """``schema`` settled for everything that reads it (in place; returned): integral
    floats made ints where JSON Schema means an integer, and with ``stable_order`` every
    ``properties`` object in the stable order. Anything but a dict is left as it is."""
    if isinstance(schema, dict):
        integral_numbers(schema)
        if stable_order:
            stable_property_order(schema)
    return schema
