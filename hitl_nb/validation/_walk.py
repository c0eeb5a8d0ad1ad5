"""What the compile walk finds in a response_schema (its subschemas, ``$id``, ``$ref``
and patterns), and the check that every reference lands on a subschema of its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag, urljoin

from .._messages import json_type
from ..errors import SchemaRejected
from ._limits import MAX_DEPTH, MAX_SUBSCHEMAS

__all__ = ["SCHEMA_KEYWORDS", "SCHEMA_LISTS", "SCHEMA_MAPS", "Seen", "follow_refs", "walk"]

#: Keywords whose value is one subschema.
SCHEMA_KEYWORDS = (
    "additionalProperties",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
)
#: ``dependencies`` (drafts 4 to 7) mixes subschemas and name lists: the walk skips lists.
SCHEMA_MAPS = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
)
#: Keywords whose value is a list of subschemas (``items`` before draft 2020-12).
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")


@dataclass
class Seen:
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
    #: ``(reference, target)`` of each object a ``$ref`` reads as a schema where no
    #: keyword defines one (the compiler checks each against the metaschema too).
    adopted: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _join(base: str, ref: str) -> str:
    """``ref`` resolved against ``base``, also where ``urljoin`` cannot (``urn:`` bases).

    ``urljoin`` only resolves against the schemes it lists as hierarchical: against
    ``urn:uuid:...`` it returned ``#/$defs/a`` unchanged, which then pointed into the
    root instead of the embedded resource.
    """
    if ref.startswith("#"):
        return urldefrag(base)[0] + ref
    return urljoin(base, ref)


def walk(schema: Any, base: str, depth: int, seen: Seen, id_of: Any = None) -> None:
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
    for key in SCHEMA_KEYWORDS:
        walk(schema.get(key), base, depth + 1, seen, id_of)
    for key in SCHEMA_MAPS:
        sub = schema.get(key)
        if isinstance(sub, dict):
            if key == "patternProperties":
                seen.patterns.update(sub)
            for child in sub.values():
                walk(child, base, depth + 1, seen, id_of)
    for key in SCHEMA_LISTS:
        sub = schema.get(key)
        if isinstance(sub, list):
            for child in sub:
                walk(child, base, depth + 1, seen, id_of)


def follow_refs(schema: dict[str, Any], cls: Any, root: str, seen: Seen) -> None:
    """Refuse remote and dangling references, and those that point at no schema.

    A ``$ref`` that lands on an object no keyword defines as a subschema (under an
    unknown keyword: ``#/definitions/a/full``) reads it as a schema, as ``jsonschema``
    does: JSON Schema 2020-12 (Core, "Unknown keywords and subschemas") leaves this to
    the implementation. Such a target is walked here like any subschema (its own
    references followed, its patterns collected) and recorded in ``seen.adopted`` for
    the metaschema check, so that nothing fails in the middle of a validation (a
    ``TypeError`` for ``{"type": 5}`` inside an ``enum``) or hides a remote reference
    or a bad pattern from the compile-time checks. A reference to nothing, or to a
    value that is no object (``#/$defs/n/minimum``), is refused.
    """
    from referencing.exceptions import Unresolvable

    from .._keywords import resolver_for

    resolver = resolver_for(cls, schema)
    for base, ref in seen.refs:  # grows while adopted targets are walked
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
        if not isinstance(contents, dict):
            raise SchemaRejected(
                f"$ref {ref!r} points at a JSON {json_type(contents)} that is not a subschema"
            )
        if id(contents) not in seen.walked:
            seen.adopted.append((ref, contents))
            walk(contents, urldefrag(_join(base, ref))[0], 0, seen, cls.ID_OF)
