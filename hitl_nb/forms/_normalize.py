"""Turn a response_schema into the shapes the form builds from.

- ``$ref`` is resolved inside the schema only (``#`` and ``#/...`` pointers, which
  covers ``$defs`` and ``definitions``); anything else is unsupported, never fetched:
  the schema comes from an agent, which need not be trusted, and a fetch would let it
  send the kernel to any address. Resolution is one level at a time, so a recursive
  schema is expanded only as far as the form is opened.
- ``allOf`` is merged into one schema (properties united, ``required`` joined, bounds
  tightened); members that cannot be merged stay under ``allOf`` for the sub-field.
- ``type: [x, "null"]`` and ``anyOf``/``oneOf`` with a null branch become "nullable x".
- ``oneOf``/``anyOf`` become variants; a property holding a different ``const`` in every
  variant is the discriminator.

Nothing here mutates its input: every result is a new dict. The form's data is always
checked by :mod:`hitl_nb.validation` against the caller's original schema, so a merge
that loses a constraint costs a hint in the UI, never a wrong answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urldefrag, urljoin

from ..validation import CompiledSchema, compile_schema
from ._util import split_pointer

#: Keys the form draws from. Other keywords are annotations (``markdownDescription``,
#: ``deprecationMessage``, ``$comment``), vendor keywords (``x-*``) or constraints the
#: validator checks on submit (:data:`IGNORED`): none of them turns a subtree into JSON.
UI_KEYWORDS = frozenset(
    """type const enum properties required additionalProperties items prefixItems
    minItems maxItems uniqueItems minLength maxLength pattern format minimum maximum
    exclusiveMinimum exclusiveMaximum multipleOf oneOf anyOf allOf if then else
    dependentRequired default examples title description readOnly writeOnly deprecated
    $ref $defs definitions $schema $id $comment $anchor minProperties maxProperties
    x-hitl-conditions
    contentMediaType contentEncoding""".split()
)
#: Keywords the UI does not draw but the validator still enforces on submit.
IGNORED = frozenset(
    """not contains minContains maxContains propertyNames unevaluatedProperties
    unevaluatedItems""".split()
)
#: Keywords whose subtree the widgets cannot follow: it is edited as JSON.
UNDRAWN = ("$dynamicRef", "$recursiveRef")


def upgrade(schema: dict[str, Any]) -> dict[str, Any]:
    """Drafts 4 to 2019-09 written the 2020-12 way the forms read (a new dict).

    ``items`` as a list is ``prefixItems`` (and ``additionalItems`` then ``items``;
    without a list it does nothing); ``dependencies`` and ``dependentSchemas`` are
    ``dependentRequired`` (name lists) and conditions (``if: {required: [name]}``);
    a boolean ``exclusiveMinimum``/``exclusiveMaximum`` (draft 4) moves its
    ``minimum``/``maximum`` over. The validator reads the schema as it was written.
    """
    out = schema
    if isinstance(out.get("items"), list) or "additionalItems" in out:
        out = dict(out)
        extra = out.pop("additionalItems", True)
        if isinstance(out.get("items"), list):
            out["prefixItems"] = out.pop("items")
            if extra is not True:
                out["items"] = extra
    for key in ("dependencies", "dependentSchemas"):
        deps = out.get(key)
        if not isinstance(deps, Mapping):
            continue
        out = dict(out)
        del out[key]
        required = dict(out.get("dependentRequired") or {})
        conditions = list(out.get(CONDITIONS, []))
        for name, dep in deps.items():
            if isinstance(dep, list):
                required[name] = [*required.get(name, []), *dep]
            elif isinstance(dep, (Mapping, bool)):
                conditions.append({"if": {"required": [name]}, "then": dep, "else": True})
        if required:
            out["dependentRequired"] = required
        if conditions:
            out[CONDITIONS] = conditions
    for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if isinstance(out.get(flag), bool):
            out = dict(out)
            if out.pop(flag) and bound in out:
                out[flag] = out.pop(bound)
    return out


class Unsupported(Exception):
    """This subtree cannot be drawn as widgets; it becomes a JSON text field."""


_MIN_KEYS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_MAX_KEYS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
_SUBSCHEMA_KEYS = ("items", "additionalProperties", "not")
#: Where a resolved schema keeps its ``if``/``then``/``else`` triples: ``allOf`` may
#: bring several, and each is decided on its own (two merged into one ``if`` lost the
#: members of both branches).
CONDITIONS = "x-hitl-conditions"


def lift_conditions(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with its ``if``/``then``/``else`` moved into :data:`CONDITIONS`.

    ``then`` and ``else`` without ``if`` do nothing (JSON Schema) and are dropped.
    """
    out = dict(schema)
    if not any(k in out for k in ("if", "then", "else")):
        return out
    cond = out.pop("if", None)
    then, other = out.pop("then", True), out.pop("else", True)
    if "if" in schema:
        out[CONDITIONS] = [*out.get(CONDITIONS, []), {"if": cond, "then": then, "else": other}]
    return out


def _merge_types(a: Any, b: Any) -> Any:
    la = [a] if isinstance(a, str) else list(a)
    lb = [b] if isinstance(b, str) else list(b)
    both = [t for t in la if t in lb or (t == "number" and "integer" in lb)]
    both += [t for t in lb if t == "integer" and "number" in la and t not in both]
    if not both:
        raise Unsupported(f"allOf asks for type {a!r} and type {b!r}: no value fits")
    return both[0] if len(both) == 1 else both


def merge(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Merge schema ``b`` into ``a`` as ``allOf: [a, b]`` would constrain (new dict).

    Annotations (title, description, default, hints) of ``a`` win.
    """
    out: dict[str, Any] = lift_conditions(a)
    for key, vb in lift_conditions(b).items():
        if key not in out:
            out[key] = vb
            continue
        va = out[key]
        if va == vb:
            continue
        if key == "properties" and isinstance(va, Mapping) and isinstance(vb, Mapping):
            props = dict(va)
            for name, sub in vb.items():
                props[name] = {"allOf": [props[name], sub]} if name in props else sub
            out[key] = props
        elif key == "required" and isinstance(va, list) and isinstance(vb, list):
            out[key] = va + [r for r in vb if r not in va]
        elif key == "type":
            out[key] = _merge_types(va, vb)
        elif key == "enum" and isinstance(va, list) and isinstance(vb, list):
            out[key] = [v for v in va if v in vb]
        elif key == "const":
            raise Unsupported("allOf asks for two different const values")
        elif key in _MIN_KEYS and _is_num(va) and _is_num(vb):
            out[key] = max(va, vb)
        elif key in _MAX_KEYS and _is_num(va) and _is_num(vb):
            out[key] = min(va, vb)
        elif key in _SUBSCHEMA_KEYS:
            out[key] = {"allOf": [va, vb]}
        elif key in ("$defs", "definitions") and isinstance(va, Mapping):
            out[key] = {**vb, **va}
        elif key == "dependentRequired" and isinstance(va, Mapping) and isinstance(vb, Mapping):
            out[key] = {**vb, **va}
        elif key == CONDITIONS and isinstance(va, list) and isinstance(vb, list):
            out[key] = [*va, *vb]
        elif key in ("oneOf", "anyOf"):
            rest = out.setdefault("allOf", [])
            out["allOf"] = [*rest, {key: vb}]
        # anything else: ``a`` wins; the validator still checks ``b``'s constraint
    return out


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


#: The options of a schema that allows any value drawn as widgets (``null`` is a
#: checkbox beside them, a list or an object JSON text: :data:`STRUCTURED`).
ANY_TYPES = ("string", "number", "boolean")
#: Marks the option of an any-value schema that holds a list or an object as JSON.
STRUCTURED = "x-hitl-structured"

#: What kind of field draws a schema (the registry's first key).
Kind = Literal[
    "string",
    "number",
    "integer",
    "boolean",
    "enum",
    "const",
    "null",
    "object",
    "array",
    "tuple",
    "variant",
    "json",
]


_SIMPLE_KINDS: dict[str, Kind] = {
    "string": "string",
    "number": "number",
    "integer": "integer",
    "boolean": "boolean",
    "null": "null",
}


@dataclass
class Node:
    """A resolved schema and what kind of field draws it."""

    kind: Kind
    schema: dict[str, Any]
    nullable: bool = False
    options: list[dict[str, Any]] = field(default_factory=list)
    discriminator: str | None = None
    note: str | None = None
    #: The hints the registry read for this node (so fields need not read them again).
    hints: Any = None
    #: The options as the schema wrote them (matched against values: the merged
    #: ``options`` only draw them).
    raw_options: list[Any] = field(default_factory=list)
    #: The schema names no ``type``: the kind was read from its keywords, and values
    #: of any other type are valid too (a field for them is made when one is set).
    loose: bool = False


class Resolver:
    """Resolves schemas against the root schema of one form (local references only)."""

    def __init__(
        self,
        root: Mapping[str, Any],
        max_depth: int = 32,
        *,
        compiled: CompiledSchema | None = None,
    ) -> None:
        self.root = root
        self.max_depth = max_depth
        self._nesting = 0
        self._root_compiled = compiled

    def deref(self, ref: str) -> Any:
        """The subschema a local ``$ref`` names; raises Unsupported for anything else.

        A reference by the root's own URI (``catalog-info.json#/definitions/entity``
        under ``$id: https://json.schemastore.org/catalog-info.json``) is local too.
        """
        if isinstance(ref, str) and not ref.startswith("#"):
            ref = self._own(ref)
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
            raise Unsupported(f"$ref {ref!r} is not a local JSON Pointer reference")
        node: Any = self.root
        for seg in split_pointer(ref[1:]):
            seg = seg.replace("%25", "%")
            if isinstance(node, Mapping) and seg in node:
                node = node[seg]
            elif isinstance(node, list) and seg.isdigit() and int(seg) < len(node):
                node = node[int(seg)]
            else:
                raise Unsupported(f"$ref {ref!r} points at nothing")
        return node

    def _own(self, ref: str) -> str:
        """``ref`` as a fragment when it names the root by its ``$id`` (``id`` in draft
        4), else as it was."""
        base = self.root.get("$id", self.root.get("id"))
        if not isinstance(base, str):
            return ref
        try:
            target, fragment = urldefrag(urljoin(base, ref))
        except ValueError:
            return ref
        return "#" + fragment if target == urldefrag(base)[0] else ref

    def resolve(self, schema: Any, _chain: tuple[str, ...] = ()) -> Any:
        """``schema`` with its top-level ``$ref`` and ``allOf`` folded in (a new dict)."""
        if isinstance(schema, bool) or not isinstance(schema, Mapping):
            return schema
        if len(_chain) > self.max_depth:
            raise Unsupported("$ref chain too long")
        out: dict[str, Any] = upgrade(lift_conditions(schema))
        ref = out.pop("$ref", None)
        if ref is not None:
            if ref in _chain:
                raise Unsupported(f"$ref {ref!r} refers to itself")
            target = self.resolve(self.deref(ref), (*_chain, ref))
            if target is False:
                raise Unsupported(f"$ref {ref!r} allows no value")
            if isinstance(target, Mapping):
                out = merge(out, target)
        members = out.pop("allOf", None)
        if isinstance(members, list):
            for member in members:
                resolved = self.resolve(member, _chain)
                if resolved is False:
                    raise Unsupported("allOf has a member that allows no value")
                if isinstance(resolved, Mapping):
                    out = merge(out, resolved)
            if "allOf" in out:  # merge() parked a second oneOf/anyOf here
                parked = out.pop("allOf")
                out.setdefault("x-hitl-parked", parked)
        return out

    def matches(self, schema: Any, value: Any) -> bool:
        """Whether ``value`` validates against ``schema``, a part of the root schema.

        The part is read as the root reads it (its ``$schema`` dialect, its ``$ref``
        resolved in the root): an option compiled on its own was read as draft
        2020-12, with every root definition copied in.
        """
        compiled = self._root_compiled
        if compiled is None:
            compiled = self._root_compiled = compile_schema(self.root)
        return not compiled.validate_part(schema, value)

    def classify(self, schema: Any) -> Node:
        """Resolve ``schema`` and decide which kind of field draws it."""
        try:
            return self._classify(schema)
        except Unsupported as exc:
            raw = dict(schema) if isinstance(schema, Mapping) else {}
            return Node("json", raw, note=str(exc))

    def _classify(self, schema: Any) -> Node:
        # A one-option oneOf/anyOf is classified as its option, which may lead back to
        # the same schema ({"oneOf": [{"$ref": "#"}]}): that recursed until RecursionError.
        if self._nesting > self.max_depth:
            raise Unsupported("oneOf/anyOf refers back to itself")
        self._nesting += 1
        try:
            return self._classify_resolved(schema)
        finally:
            self._nesting -= 1

    def _classify_resolved(self, schema: Any) -> Node:
        if schema is True:
            return self._any({})
        if schema is False:
            raise Unsupported("the schema allows no value here")
        if not isinstance(schema, Mapping):
            raise Unsupported("not a schema")
        s = self.resolve(schema)
        if s.get(STRUCTURED) is True:
            return Node("json", s, note="a list or an object, of values of any type")
        for key in UNDRAWN:
            if key in s:
                raise Unsupported(f"{key} is not followed by the widgets")
        if "x-hitl-parked" in s:
            raise Unsupported("allOf combines several oneOf/anyOf/if: not drawn as widgets")
        if "const" in s:
            return Node("const", s)
        if isinstance(s.get("enum"), list):
            if not s["enum"]:
                raise Unsupported("empty enum allows no value")
            return Node("enum", s)
        for key in ("oneOf", "anyOf"):
            if isinstance(s.get(key), list) and s[key]:
                return self._variants(s, key)
        types = s.get("type")
        if isinstance(types, list):
            nullable = "null" in types
            rest = [t for t in types if t != "null"]
            if not rest:
                return Node("null", s)
            if len(rest) == 1:
                node = self._by_type({**s, "type": rest[0]})
                node.nullable = nullable
                return node
            options = [{**s, "type": t} for t in rest]
            return Node("variant", s, nullable=nullable, options=options, raw_options=options)
        return self._by_type(s)

    def _by_type(self, s: dict[str, Any]) -> Node:
        t = s.get("type")
        loose = t is None
        if loose:
            t = _infer_type(s)
        node = self._typed(s, t)
        node.loose = loose and node.kind not in ("json", "variant")
        return node

    def _typed(self, s: dict[str, Any], t: Any) -> Node:
        if t == "object":
            return Node("object", s)
        if t == "array":
            if isinstance(s.get("prefixItems"), list):
                return Node("tuple", s)
            return Node("array", s)
        simple = _SIMPLE_KINDS.get(t) if isinstance(t, str) else None
        if simple is not None:
            return Node(simple, s)
        if t is None:
            return self._any(s)
        raise Unsupported(f"type {t!r} is not a JSON Schema type")

    def _any(self, s: dict[str, Any]) -> Node:
        """A schema whose keywords allow every JSON value (``{}``, ``true``, annotations
        only): a choice of the value's type, or None. Text, numbers and booleans get
        their widgets; a list or an object of values of any type is JSON text (its
        members could be anything again, and nested so deep they were unreadable)."""
        base = _annotations_dropped(s)
        options = [{**base, "type": t} for t in ANY_TYPES]
        options.append({**base, "title": "list or object", STRUCTURED: True})
        raws: list[Any] = [{"type": t} for t in ANY_TYPES]
        raws.append({"type": ["array", "object"]})
        return Node("variant", s, nullable=True, options=options, raw_options=raws)

    def _variants(self, s: dict[str, Any], key: str) -> Node:
        base = {k: v for k, v in s.items() if k not in ("oneOf", "anyOf")}
        options: list[dict[str, Any]] = []
        raws: list[Any] = []
        nullable = False
        for raw in s[key]:
            opt = self.resolve(raw)
            if opt is False:
                continue
            if opt is True:
                opt = {}
            if opt.get("type") == "null" or ("const" in opt and opt["const"] is None):
                nullable = True
                continue
            merged = merge(_annotations_dropped(base), opt)
            options.append(merged)
            raws.append(raw)
        if not options:
            return Node("null", base)
        if len(options) == 1:
            node = self._classify(merge(base, options[0]))
            node.nullable = node.nullable or nullable
            return node
        return Node(
            "variant",
            s,
            nullable=nullable,
            options=options,
            discriminator=self.discriminator(options),
            raw_options=raws,
        )

    def discriminator(self, options: list[dict[str, Any]]) -> str | None:
        """A property holding a distinct ``const`` in every option, if there is one."""
        first = options[0].get("properties")
        if not isinstance(first, Mapping):
            return None
        for name in first:
            seen: list[Any] = []
            for opt in options:
                props = opt.get("properties")
                if not isinstance(props, Mapping) or name not in props:
                    break
                try:
                    sub = self.resolve(props[name])
                except Unsupported:
                    break
                if not isinstance(sub, Mapping) or "const" not in sub or sub["const"] in seen:
                    break
                seen.append(sub["const"])
            else:
                return str(name)
        return None


def _annotations_dropped(base: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v
        for k, v in base.items()
        if k not in ("title", "description", "default", "examples") and not k.startswith("x-ui-")
    }


def _infer_type(s: Mapping[str, Any]) -> str | None:
    if any(
        k in s
        for k in (
            "properties",
            "additionalProperties",
            "required",
            "dependentRequired",
            "minProperties",
            "maxProperties",
        )
    ):
        return "object"
    if any(k in s for k in ("items", "prefixItems", "minItems", "maxItems", "uniqueItems")):
        return "array"
    if any(k in s for k in ("minLength", "maxLength", "pattern", "format")):
        return "string"
    if any(
        k in s for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
    ):
        return "number"
    return None
