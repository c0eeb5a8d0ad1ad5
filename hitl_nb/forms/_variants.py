"""Choice between schemas: ``oneOf``/``anyOf`` variants and nullable values.

A variant selector shows one option at a time, open; options are built when first
chosen. An optional variant whose first option is one an enclosing variant is building
(a recursive schema: a JSON-e template's ``$else`` is again a template) starts with no
option chosen (or whose first option is a section an enclosing section is drawing),
so nothing is sent for it and nothing is built until the person picks an option or a
value needs one: building every level at once built thousands of fields.
When a value is set, a ``const`` discriminator picks the option, else the first option
the value validates against. Switching options keeps what still fits: the members the
new option declares (when their values validate there), or the whole value when it
validates against the new option.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import ipywidgets as W

from ._base import Errors, Field, FieldKind, Slot, route
from ._theme import LayoutName, heading_html, make, set_html
from ._util import MISSING, FormValueError, child_pointer, json_equal, json_type, short_json

#: What each form is building now, innermost last (by ``id()`` of the form's context):
#: the raw options of variants and the ``properties`` of sections, by ``id()`` (resolving
#: keeps them the root schema's own objects). An option met again below itself is a
#: recursion.
_BUILDING: dict[int, list[int]] = {}


@contextmanager
def building(ctx: Any, key: Any) -> Iterator[None]:
    """Note ``key`` (an option or a section's ``properties``) as being built in ``ctx``."""
    path = _BUILDING.setdefault(id(ctx), [])
    path.append(id(key))
    try:
        yield
    finally:
        path.pop()
        if not path:
            del _BUILDING[id(ctx)]


def _recursive(ctx: Any, raw: Any, option: Any) -> bool:
    path = _BUILDING.get(id(ctx), [])
    props = option.get("properties") if isinstance(option, Mapping) else None
    return id(raw) in path or (isinstance(props, Mapping) and id(props) in path)


_KIND_TYPES = {
    "object": dict,
    "array": list,
    "tuple": list,
    "string": str,
    "boolean": bool,
}


def _fits_kind(kind: str, value: Any) -> bool:
    if kind in ("number", "integer"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    t = _KIND_TYPES.get(kind)
    return t is not None and isinstance(value, t)


class VariantField(Field):
    """A selector for ``oneOf``/``anyOf`` options (and ``type`` lists)."""

    kind: FieldKind = "variant"

    def __init__(self, slot: Slot) -> None:
        super().__init__(slot)
        self.options = slot.node.options
        # what values are matched against: the options as the schema wrote them
        self.raw_options = slot.node.raw_options or slot.node.options
        self.disc = slot.node.discriminator
        self.built: dict[int, Field] = {}
        #: The option shown (None: none chosen yet, nothing sent).
        self.current: int | None = 0
        if not self.required and _recursive(self.ctx, self.raw_options[0], self.options[0]):
            self.current = None
        lay: LayoutName = "hidden" if self.hints.hidden else "default"
        self.label = make(W.HTML, self.classes("hitl-label"), value="")
        set_html(self.label, self.label_html())
        self.selector = make(
            W.Dropdown,
            self.classes("hitl-variant"),
            "field",
            options=list(zip(self._titles(), range(len(self.options)), strict=True)),
            value=self.current,
            tooltip=self.help or f"which kind of {self.title}",
            description=self.label_text(),
        )
        self.selector.observe(self._on_select, names="value")
        self.body = make(W.VBox, self.classes("hitl-body"), "indent")
        self.box = make(
            W.VBox,
            self.classes("hitl-variants"),
            lay,
            children=[self.selector, self.label, self.body],
        )
        self.widgets = [self.box]
        self._show(self.current)

    def _titles(self) -> list[str]:
        names = self.hints.enum_names
        if len(names) == len(self.options):
            return list(names)
        out = []
        for i, opt in enumerate(self.options):
            title = opt.get("title")
            if isinstance(title, str) and title:
                out.append(title)
            elif self.disc is not None:
                sub = self.ctx.resolver.resolve(opt["properties"][self.disc])
                const = sub.get("const")
                out.append(const if isinstance(const, str) else short_json(const))
            elif isinstance(opt.get("type"), str):
                out.append(opt["type"])
            else:
                out.append(f"option {i + 1}")
        return out

    def _field(self, index: int) -> Field:
        field = self.built.get(index)
        if field is None:
            # the chosen option is shown open, under the selector that names it
            with building(self.ctx, self.raw_options[index]):
                field = self.ctx.build(
                    self.options[index],
                    self.pointer,
                    self.ui,
                    self.required,
                    self.selector.options[index][0],
                    headless=True,
                )
            self.built[index] = field
            field.parent_hook = lambda: self._show(self.current)
            field.set_disabled(self.disabled)
        return field

    def _show(self, index: int | None) -> None:
        self.current = index
        self.body.children = [] if index is None else list(self._field(index).widgets)

    def _on_select(self, change: Any) -> None:
        if self.ctx.is_quiet or change["new"] is None:
            return
        old = MISSING
        if self.current is not None and self.current in self.built:
            old = self.built[self.current].get()
        self._show(change["new"])
        self._carry(old)
        self.ctx.changed()

    def _carry(self, old: Any) -> None:
        """Move what still fits from the previous option into the current one."""
        if old is MISSING or self.current is None:
            return
        field = self._field(self.current)
        option = self.options[self.current]
        resolver = self.ctx.resolver
        if isinstance(old, dict) and field.kind == "object":
            props = option.get("properties")
            props = props if isinstance(props, Mapping) else {}
            keep = {
                k: v
                for k, v in old.items()
                if k in props and k != self.disc and resolver.matches(props[k], v)
            }
            current = field.get()
            merged = {**(current if isinstance(current, dict) else {}), **keep}
            if merged:
                self._quiet_set(field, merged)
        elif resolver.matches(self.raw_options[self.current], old):
            self._quiet_set(field, old)

    def _quiet_set(self, field: Field, value: Any) -> None:
        try:
            field.set(value)
        except FormValueError:
            field.set(MISSING)

    def _pick(self, value: Any) -> int:
        if self.disc is not None and isinstance(value, dict) and self.disc in value:
            for i, opt in enumerate(self.options):
                sub = self.ctx.resolver.resolve(opt["properties"][self.disc])
                if json_equal(sub.get("const"), value[self.disc]):
                    return i
        for i, raw in enumerate(self.raw_options):
            if self.ctx.resolver.matches(raw, value):
                return i
        for i, opt in enumerate(self.options):
            if _fits_kind(self.ctx.resolver.classify(opt).kind, value):
                return i
        current = self.current
        if current is not None and self.ctx.resolver.classify(self.options[current]).kind == "json":
            return current
        raise FormValueError(self.pointer, f"{json_type(value)} fits none of the options")

    def get(self) -> Any:
        if self.current is None:
            return MISSING
        return self._field(self.current).get()

    def set(self, value: Any) -> None:
        if value is MISSING:
            if self.current is not None:
                self._field(self.current).set(MISSING)
            return
        index = self._pick(value)
        with self.ctx.quietly():
            self.selector.value = index
        self._show(index)
        self._field(index).set(value)

    def touched(self) -> bool:
        return self.current is not None and self._field(self.current).touched()

    def untouch(self) -> None:
        if self.current is not None:
            self._field(self.current).untouch()

    def local_errors(self) -> list[tuple[str, str]]:
        if self.current is None:
            return []
        return self._field(self.current).local_errors()

    def show_errors(self, errors: Errors) -> None:
        own, below = route(errors)
        if self.current is None:  # no option shown: the selector shows them all
            own += [m for sub in below.values() for msgs in sub.values() for m in msgs]
            self.show_own(own)
            return
        rest = {child_pointer("", k) + p: m for k, sub in below.items() for p, m in sub.items()}
        self._field(self.current).show_errors(rest)
        self.show_own(own)

    def label_html(self) -> str:
        """Help and messages under the selector (the selector's label is the title)."""
        return heading_html("", False, self.help, self.messages)

    def refresh_label(self) -> None:
        set_html(self.label, self.label_html())
        if self.selector.description != self.label_text():
            self.selector.description = self.label_text()

    def set_disabled(self, disabled: bool) -> None:
        self.disabled = disabled
        self.selector.disabled = disabled or self.readonly
        for field in self.built.values():
            field.set_disabled(disabled)

    def children(self) -> list[Field]:
        return [] if self.current is None else [self._field(self.current)]

    def is_built(self) -> bool:
        return self.current is not None

    def build_if_needed(self) -> None:
        """Show the first option when none is chosen yet (not an answer: nothing is
        sent for it until something in it is filled in)."""
        if self.current is None:
            with self.ctx.quietly():
                self.selector.value = 0
            self._show(0)


class NullableField(Field):
    """A field whose schema also allows ``null``: the field plus a "null" checkbox."""

    kind: FieldKind = "nullable"

    def __init__(self, inner: Field) -> None:
        super().__init__(inner.slot)
        self.title = inner.title
        self.inner = inner
        self._touched = False
        self.check = make(
            W.Checkbox,
            self.classes("hitl-null"),
            value=False,
            indent=True,
            description="None",
            tooltip=f"no value for {inner.title} (sent as null)",
        )
        self.check.observe(self._on_check, names="value")
        self.widgets = [*inner.widgets, self.check]
        inner.parent_hook = self._inner_changed

    def _inner_changed(self) -> None:
        self.widgets = [*self.inner.widgets, self.check]
        self.widgets_changed()

    def _on_check(self, change: Any) -> None:
        self.inner.set_disabled(self.disabled or bool(change["new"]))
        if self.ctx.is_quiet:
            return
        self._touched = True
        self.ctx.changed()

    def get(self) -> Any:
        return None if self.check.value else self.inner.get()

    def set(self, value: Any) -> None:
        with self.ctx.quietly():
            self.check.value = value is None
        self.inner.set(MISSING if value is None else value)
        self._touched = value is None

    def touched(self) -> bool:
        return self._touched and bool(self.check.value) or self.inner.touched()

    def untouch(self) -> None:
        self._touched = False
        self.inner.untouch()

    def apply_default(self) -> None:
        if "default" in self.schema and self.schema["default"] is None:
            self.set(None)  # a null default is a value like any other
            self._touched = False
        else:
            self.inner.apply_default()

    def local_errors(self) -> list[tuple[str, str]]:
        return [] if self.check.value else self.inner.local_errors()

    def show_errors(self, errors: Errors) -> None:
        self.inner.show_errors(errors)

    def set_required(self, required: bool) -> None:
        self.required = required
        self.inner.set_required(required)

    def set_disabled(self, disabled: bool) -> None:
        self.disabled = disabled
        self.check.disabled = disabled or self.readonly
        self.inner.set_disabled(disabled or bool(self.check.value))

    def children(self) -> list[Field]:
        return [self.inner]
