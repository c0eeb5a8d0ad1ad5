"""Which field draws which schema: a registry keyed by (kind, format, widget hint).

The kind comes from :meth:`Resolver.classify` (``string``, ``number``, ``integer``,
``boolean``, ``enum``, ``const``, ``null``, ``object``, ``array``, ``tuple``,
``variant``, ``json``). Lookups prefer, in order: a higher ``priority``, an entry that
names the widget hint, an entry that names the format. Register your own factory to
change how a kind is drawn::

    registry = default_registry().copy()
    registry.register("string", MyColorField, format="color")
    Form(schema, registry=registry)

A factory is called as ``factory(ctx, node, pointer, ui, required, name)`` and returns
a :class:`~hitl_nb.forms._base.Field`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ._arrays import ArrayField
from ._base import Context, Field
from ._choices import CheckboxField, ChoiceField, ConstField, YesNoField, multi_choice_or_list
from ._dates import DateField, DateTimeField
from ._fields import JsonField, NumberField, StringField
from ._hints import Hints, hints_for
from ._normalize import Node, Unsupported
from ._objects import ObjectField
from ._util import split_pointer
from ._variants import NullableField, VariantField

_log = logging.getLogger(__name__)

#: ``factory(ctx, node, pointer, ui, required, name) -> Field``
Factory = Callable[[Context, Node, str, "Mapping[str, Any] | None", bool, str], Field]

#: Beyond this many pointer segments a subtree is edited as JSON (spec S-2 depth bound).
MAX_FIELD_DEPTH = 32
#: How many fields one form builds with widgets of their own; past it, each further
#: part is edited as JSON. Required sections are built at once, so a schema whose
#: required members refer back to it (``{"required": ["a", "b"], "properties": {"a":
#: {"$ref": "#"}, "b": {"$ref": "#"}}}``) asked for 2**32 fields and never returned.
MAX_FIELDS = 2500


@dataclass(frozen=True)
class Entry:
    """One registration: the factory for ``kind`` (narrowed by format and widget hint)."""

    kind: str
    factory: Factory
    format: str | None = None
    widget: str | None = None
    priority: int = 0


def _boolean(ctx: Context, node: Node, pointer: str, ui: Any, required: bool, name: str) -> Field:
    # A required boolean without default must not be silently false: Yes / No, unset.
    if required and "default" not in node.schema:
        return YesNoField(ctx, node, pointer, ui, required, name)
    return CheckboxField(ctx, node, pointer, ui, required, name)


class Registry:
    """Field factories by (kind, format, widget hint), with explicit priorities."""

    def __init__(self, entries: list[Entry] | None = None) -> None:
        self._entries: list[Entry] = list(entries or [])

    def register(
        self,
        kind: str,
        factory: Factory,
        *,
        format: str | None = None,
        widget: str | None = None,
        priority: int = 0,
    ) -> None:
        """Add a factory; later registrations win ties."""
        self._entries.append(Entry(kind, factory, format, widget, priority))

    def copy(self) -> Registry:
        """An independent registry with the same entries."""
        return Registry(self._entries)

    def lookup(self, node: Node, hints: Hints) -> Factory:
        """The factory for ``node``; the JSON field when nothing is registered."""
        best: tuple[tuple[int, bool, bool, int], Factory] | None = None
        fmt = node.schema.get("format")
        for n, e in enumerate(self._entries):
            if e.kind != node.kind:
                continue
            if e.format is not None and e.format != fmt:
                continue
            if e.widget is not None and e.widget != hints.widget:
                continue
            score = (e.priority, e.widget is not None, e.format is not None, n)
            if best is None or score > best[0]:
                best = (score, e.factory)
        return best[1] if best is not None else JsonField

    def build(
        self,
        ctx: Context,
        schema: Any,
        pointer: str,
        ui: Mapping[str, Any] | None,
        required: bool,
        name: str = "",
    ) -> Field:
        """Build, wrap for ``null`` and pre-fill the default of the field for ``schema``.

        Never raises for a schema: whatever cannot be drawn becomes a JSON field with a
        note saying why.
        """
        node = ctx.resolver.classify(schema)
        ctx.fields_built += 1
        if len(split_pointer(pointer)) > MAX_FIELD_DEPTH:
            node = Node("json", node.schema, note=f"nested deeper than {MAX_FIELD_DEPTH}")
        elif ctx.fields_built > MAX_FIELDS:
            node = Node("json", node.schema, note=f"the form already has {MAX_FIELDS} fields")
        try:
            node.hints = hints_for(node.schema, ui)
            field = self.lookup(node, node.hints)(ctx, node, pointer, ui, required, name)
            if node.nullable and not _null_fits(node):
                field = NullableField(field)
        except RecursionError:
            node = Node("json", node.schema, note="nested too deeply")
            field = JsonField(ctx, node, pointer, ui, required, name)
        except Unsupported as exc:
            field = JsonField(
                ctx, Node("json", node.schema, note=str(exc)), pointer, ui, required, name
            )
        except Exception as exc:  # noqa: BLE001 - a part that cannot be drawn must not
            # take the whole form down: edit it as JSON, and leave a trace for developers
            _log.warning("forms: %s drawn as JSON after %r", pointer or "/", exc)
            note = f"could not be drawn ({type(exc).__name__})"
            field = JsonField(
                ctx, Node("json", node.schema, note=note), pointer, ui, required, name
            )
        field.apply_default()
        return field


def _null_fits(node: Node) -> bool:
    """Whether the field drawn for ``node`` can already hold ``null``."""
    if node.kind in ("json", "null"):
        return True
    if node.kind == "enum":
        return any(v is None for v in node.schema["enum"])
    if node.kind == "const":
        return node.schema["const"] is None
    return False


def _null(ctx: Context, node: Node, pointer: str, ui: Any, required: bool, name: str) -> Field:
    return ConstField(
        ctx, Node("const", {**node.schema, "const": None}), pointer, ui, required, name
    )


_DEFAULT = Registry()
for _kind, _factory in (
    ("string", StringField),
    ("number", NumberField),
    ("integer", NumberField),
    ("boolean", _boolean),
    ("enum", ChoiceField),
    ("const", ConstField),
    ("null", _null),
    ("object", ObjectField),
    ("array", ArrayField),
    ("tuple", ArrayField),
    ("variant", VariantField),
    ("json", JsonField),
):
    _DEFAULT.register(_kind, _factory)
_DEFAULT.register("string", DateField, format="date")
_DEFAULT.register("string", DateTimeField, format="date-time")
_DEFAULT.register("string", StringField, format="date", widget="text")
_DEFAULT.register("string", StringField, format="date-time", widget="text")
_DEFAULT.register("boolean", YesNoField, widget="radio")
_DEFAULT.register("boolean", CheckboxField, widget="checkbox")
_DEFAULT.register("array", multi_choice_or_list, widget="checkboxes")


def default_registry() -> Registry:
    """The registry forms use unless given another (copy it before registering)."""
    return _DEFAULT
