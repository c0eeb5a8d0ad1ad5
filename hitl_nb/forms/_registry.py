"""Which field draws which schema: a registry keyed by (kind, format, widget hint).

The kind comes from :meth:`Resolver.classify` (``string``, ``number``, ``integer``,
``boolean``, ``enum``, ``const``, ``null``, ``object``, ``array``, ``tuple``,
``variant``, ``json``). Lookups prefer, in order: a higher ``priority``, an entry that
names the widget hint, an entry that names the format. Register your own factory to
change how a kind is drawn::

    registry = default_registry().copy()
    registry.register("string", MyColorField, format="color")
    Form(schema, registry=registry)

A factory is called as ``factory(slot)`` with a :class:`~hitl_nb.forms.Slot` (the
form's context, the classified schema node, pointer, ui hints, required, name) and
returns a :class:`~hitl_nb.forms.Field`; a field class is such a factory.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ._arrays import ArrayField
from ._base import MAX_FIELDS, Field, FormContext, Slot
from ._choices import CheckboxField, ChoiceField, ConstField, MultiChoiceField, YesNoField
from ._dates import DateField, DateTimeField, TimeField
from ._fields import JsonField, NumberField, StringField
from ._hints import Hints, hints_for
from ._loose import LooseField
from ._normalize import Kind, Node, Unsupported
from ._objects import ObjectField
from ._util import split_pointer
from ._variants import NullableField, VariantField

_log = logging.getLogger(__name__)

#: ``factory(slot) -> Field`` (a field class is one).
Factory = Callable[[Slot], Field]

#: Beyond this many pointer segments a subtree is edited as JSON (spec S-2 depth bound).
MAX_FIELD_DEPTH = 32


@dataclass(frozen=True)
class Entry:
    """One registration: the factory for ``kind`` (narrowed by format and widget hint)."""

    kind: Kind
    factory: Factory
    format: str | None = None
    widget: str | None = None
    priority: int = 0


def _boolean(slot: Slot) -> Field:
    # A required boolean without default must not be silently false: Yes / No, unset.
    if slot.required and "default" not in slot.node.schema:
        return YesNoField(slot)
    return CheckboxField(slot)


def _multi_choice_or_list(slot: Slot) -> Field:
    """``widget: checkboxes``: a SelectMultiple when the items are enum values."""
    items = slot.ctx.resolver.resolve(slot.node.schema.get("items", {}))
    if isinstance(items, dict) and isinstance(items.get("enum"), list) and items["enum"]:
        return MultiChoiceField(slot)
    return ArrayField(slot)


class Registry:
    """Field factories by (kind, format, widget hint), with explicit priorities."""

    def __init__(self, entries: list[Entry] | None = None) -> None:
        self._entries: list[Entry] = list(entries or [])

    def register(
        self,
        kind: Kind,
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
        ctx: FormContext,
        schema: Any,
        pointer: str,
        ui: Mapping[str, Any] | None,
        required: bool,
        name: str = "",
        headless: bool = False,
    ) -> Field:
        """Build, wrap for ``null`` and pre-fill the default of the field for ``schema``.

        Never raises for a schema: whatever cannot be drawn becomes a JSON field with a
        note saying why.
        """
        node = ctx.resolver.classify(schema)
        room = ctx.room_for_field()
        if len(split_pointer(pointer)) > MAX_FIELD_DEPTH:
            node = Node("json", node.schema, note=f"nested deeper than {MAX_FIELD_DEPTH}")
        elif not room:
            node = Node("json", node.schema, note=f"the form already has {MAX_FIELDS} fields")
        slot = Slot(ctx, node, pointer, ui, required, name, headless)
        try:
            node.hints = hints_for(node.schema, ui)
            field = self.lookup(node, node.hints)(slot)
            if node.nullable and not _null_fits(node):
                field = NullableField(field)
            elif node.loose:
                field = LooseField(field)
        except RecursionError:
            field = JsonField(slot.but(node=Node("json", node.schema, note="nested too deeply")))
        except Unsupported as exc:
            field = JsonField(slot.but(node=Node("json", node.schema, note=str(exc))))
        except Exception as exc:  # noqa: BLE001 - a part that cannot be drawn must not
            # take the whole form down: edit it as JSON, and leave a trace for developers
            _log.warning("forms: %s drawn as JSON after %r", pointer or "/", exc)
            note = f"could not be drawn ({type(exc).__name__})"
            field = JsonField(slot.but(node=Node("json", node.schema, note=note)))
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


def _null(slot: Slot) -> Field:
    return ConstField(slot.but(node=Node("const", {**slot.node.schema, "const": None})))


_DEFAULT = Registry()
_BY_KIND: tuple[tuple[Kind, Factory], ...] = (
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
)
for _kind, _factory in _BY_KIND:
    _DEFAULT.register(_kind, _factory)
_DEFAULT.register("string", DateField, format="date")
_DEFAULT.register("string", DateTimeField, format="date-time")
_DEFAULT.register("string", TimeField, format="time")
_DEFAULT.register("string", StringField, format="time", widget="text")
_DEFAULT.register("string", StringField, format="date", widget="text")
_DEFAULT.register("string", StringField, format="date-time", widget="text")
_DEFAULT.register("boolean", YesNoField, widget="radio")
_DEFAULT.register("boolean", CheckboxField, widget="checkbox")
_DEFAULT.register("array", _multi_choice_or_list, widget="checkboxes")


def default_registry() -> Registry:
    """The registry forms use unless given another (copy it before registering)."""
    return _DEFAULT
