"""Object fields: properties in order, collapsible sections built on first opening,
``if``/``then``/``else`` and ``dependentRequired``, and a key/value editor for
``additionalProperties``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import ipywidgets as W

from ._base import Context, Errors, Field, route
from ._hints import child_ui
from ._maps import MapEditor
from ._normalize import Node, Unsupported
from ._util import MISSING, FormValueError, child_pointer, esc, json_type, layout, make


def _order(names: list[str], order: tuple[str, ...]) -> list[str]:
    """RJSF ``ui:order``: listed names first, ``*`` stands for the rest."""
    if not order:
        return names
    rest = [n for n in names if n not in order]
    out: list[str] = []
    for name in order:
        if name == "*":
            out.extend(rest)
        elif name in names:
            out.append(name)
    if "*" not in order:
        out.extend(rest)
    return out


class ObjectField(Field):
    """A section for an object. Optional nested sections start collapsed and are built
    when opened (or given a value), which also bounds recursive schemas."""

    kind = "object"

    def __init__(
        self,
        ctx: Context,
        node: Node,
        pointer: str,
        ui: Mapping[str, Any] | None,
        required: bool,
        name: str = "",
    ) -> None:
        super().__init__(ctx, node, pointer, ui, required, name)
        self.fields: dict[str, Field] = {}
        self.visible: list[str] = []
        self.explicit = False
        self.built = False
        self.pending: Any = MISSING
        self.map: MapEditor | None = None
        self.is_root = pointer == ""
        s = self.schema
        props = s.get("properties")
        self.props: Mapping[str, Any] = props if isinstance(props, Mapping) else {}
        req = s.get("required")
        self.base_required = (
            {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()
        )
        self.branches = self._branches()
        deps = s.get("dependentRequired")
        self.dependent: Mapping[str, Any] = deps if isinstance(deps, Mapping) else {}
        collapsed = self.hints.collapsed
        self.collapsed = (not required) if collapsed is None else collapsed
        if self.is_root:
            self.collapsed = False
        lay = "hidden" if self.hints.hidden else "default"
        self.label = make(W.HTML, self.classes("hitl-label"), value=self.label_html())
        self.body = make(
            W.VBox,
            self.classes("hitl-body"),
            "hidden" if self.collapsed else ("default" if self.is_root else "indent"),
        )
        header: list[W.Widget] = [self.label]
        self.toggle: W.Button | None = None
        if not self.is_root:
            self.toggle = make(
                W.Button,
                self.classes("hitl-toggle"),
                description=self._arrow(),
                tooltip=self.help or self.title,
            )
            self.toggle.on_click(self._on_toggle)
            header = [self.toggle, self.label]
        self.box = make(W.VBox, self.classes("hitl-object"), lay, children=[*header, self.body])
        self.widgets = [self.box]
        if not (self.collapsed and not required):
            self.build()

    def _branches(self) -> list[tuple[Any, dict[str, Any], dict[str, Any]]]:
        if "if" not in self.schema:
            return []
        out = []
        resolver = self.ctx.resolver
        try:
            then = resolver.resolve(self.schema.get("then", {}))
            other = resolver.resolve(self.schema.get("else", {}))
        except Unsupported:
            return []  # not drawn; the validator still applies the condition
        then = then if isinstance(then, dict) else {}
        other = other if isinstance(other, dict) else {}
        out.append((self.schema["if"], then, other))
        return out

    def _arrow(self) -> str:
        return ("▸ " if self.collapsed else "▾ ") + self.title

    def label_html(self, suffix: str = "") -> str:
        if self.pointer and not self.built and self.pending is MISSING and not self.required:
            suffix = ' <span style="color:#666">(optional section, closed)</span>'
        if self.pointer:  # the title is on the open/close button
            req = ' <span class="hitl-required">* (required)</span>' if self.required else ""
            parts = [req + suffix] if req or suffix else []
            if self.help:
                parts.append(f'<div style="color:#666;font-size:90%">{esc(self.help)}</div>')
            parts += [
                f'<div class="hitl-error" style="color:#b00020">⚠ {esc(m)}</div>'
                for m in self.messages
            ]
            return "".join(parts)
        # the form itself: its title (if any), help and the messages about the whole
        title = self.schema.get("title")
        parts = [f"<h4>{esc(title)}</h4>"] if isinstance(title, str) and title else []
        if self.help:
            parts.append(f'<div style="color:#666">{esc(self.help)}</div>')
        parts += [
            f'<div class="hitl-error" style="color:#b00020">⚠ {esc(m)}</div>' for m in self.messages
        ]
        return "".join(parts)

    # --- building ------------------------------------------------------------------------
    def build(self) -> None:
        """Create the property fields (once)."""
        if self.built:
            return
        self.built = True
        names = list(self.props)
        for _if, then, other in self.branches:
            for branch in (then, other):
                extra = branch.get("properties")
                if isinstance(extra, Mapping):
                    names += [n for n in extra if n not in names]
        for name in _order(names, self.hints.order):
            schema = self.props.get(name)
            if schema is None:
                for _if, then, other in self.branches:
                    for branch in (then, other):
                        extra = branch.get("properties")
                        if schema is None and isinstance(extra, Mapping) and name in extra:
                            schema = extra[name]
            child = self.ctx.build(
                schema,
                child_pointer(self.pointer, name),
                child_ui(self.ui, name),
                name in self.base_required,
                name,
            )
            child.parent_hook = self._relayout
            self.fields[name] = child
        extra_schema = self.schema.get("additionalProperties")
        if isinstance(extra_schema, Mapping) or extra_schema is True:
            self._make_map(extra_schema, can_add=True)
        if self.branches or self.dependent:
            self.ctx.reactors.append(self)
        self.visible = list(self.fields)
        self.react()
        self._relayout()
        if self.pending is not MISSING:
            pending, self.pending = self.pending, MISSING
            self.set(pending)
        if self.readonly or self.disabled:
            self.set_disabled(self.disabled)
        self.refresh_label()

    def _make_map(self, schema: Any, can_add: bool) -> MapEditor:
        if self.map is None:
            self.map = MapEditor(self, schema if schema is not None else True, can_add)
            self._relayout()
        return self.map

    def _relayout(self) -> None:
        kids: list[W.Widget] = []
        for name in self.visible:
            kids.extend(self.fields[name].widgets)
        if self.map is not None:
            kids.append(self.map.box)
        self.body.children = kids

    def _on_toggle(self, _button: Any) -> None:
        self.collapsed = not self.collapsed
        if not self.collapsed:
            self.build()
        self.body.layout = layout("hidden" if self.collapsed else "indent")
        if self.toggle is not None:
            self.toggle.description = self._arrow()
        self.ctx.changed()

    # --- conditionals ----------------------------------------------------------------------
    def react(self) -> None:
        if not self.built:
            return
        required = set(self.base_required)
        visible = [n for n in self.fields if n in self.props]
        current = self._collect([n for n in self.fields if n in self.props])
        for cond, then, other in self.branches:
            branch = then if self.ctx.resolver.matches(cond, current) else other
            extra = branch.get("properties")
            if isinstance(extra, Mapping):
                visible += [n for n in extra if n not in visible]
            req = branch.get("required")
            if isinstance(req, list):
                required |= {r for r in req if isinstance(r, str)}
        for trigger, names in self.dependent.items():
            if trigger in current and isinstance(names, list):
                required |= {n for n in names if isinstance(n, str)}
        visible = [n for n in self.fields if n in visible]
        for name, field in self.fields.items():
            field.set_required(name in required)
        if visible != self.visible:
            self.visible = visible
            self._relayout()

    # --- value -----------------------------------------------------------------------------
    def _collect(self, names: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in names:
            value = self.fields[name].get()
            if value is not MISSING:
                out[name] = value
        if self.map is not None:
            for key, value in self.map.entries().items():
                out.setdefault(key, value)
        return out

    def touched(self) -> bool:
        if not self.built:
            return self.pending is not MISSING
        if self.explicit:
            return True
        if self.map is not None and self.map.rows:
            return True
        return any(f.touched() for f in self.fields.values())

    def get(self) -> Any:
        if not self.built:
            return copy.deepcopy(self.pending)
        if not (self.required or self.touched()):
            return MISSING
        return self._collect(self.visible)

    def set(self, value: Any) -> None:
        if value is not MISSING and not isinstance(value, dict):
            raise FormValueError(self.pointer, f"expected object, got {json_type(value)}")
        if not self.built:
            if value is not MISSING:
                self.build()
            else:
                self.pending = MISSING
                self.refresh_label()
                return
        self.explicit = value is not MISSING
        given = value if isinstance(value, dict) else {}
        extra_schema = self.schema.get("additionalProperties")
        extras = {k: v for k, v in given.items() if k not in self.fields}
        if extras and extra_schema is False:
            key = next(iter(extras))
            raise FormValueError(child_pointer(self.pointer, key), "this member is not allowed")
        for name, field in self.fields.items():
            field.set(given.get(name, MISSING))
        if self.map is not None or extras:
            self._make_map(extra_schema, can_add=isinstance(extra_schema, Mapping)).set(extras)
        self.react()

    def untouch(self) -> None:
        pass  # an object default counts as the agent's proposal: it is sent

    # --- errors, state -------------------------------------------------------------------
    def local_errors(self) -> list[tuple[str, str]]:
        if not self.built:
            return []
        out: list[tuple[str, str]] = []
        for name in self.visible:
            for pointer, msg in self.fields[name].local_errors():
                out.append((child_pointer("", name) + pointer, msg))
        if self.map is not None:
            out += self.map.local_errors()
        return out

    def show_errors(self, errors: Errors) -> None:
        own, below = route(errors)
        if self.built:
            for name in self.visible:
                self.fields[name].show_errors(below.pop(name, {}))
            if self.map is not None:
                below = self.map.show_errors(below)
        for seg, sub in below.items():  # nowhere to show them: say so on the section
            for rel, msgs in sub.items():
                own += [(k, f"{child_pointer('', seg) + rel}: {m}") for k, m in msgs]
        self.show_own(own)

    def refresh_label(self) -> None:
        self.label.value = self.label_html()

    def set_disabled(self, disabled: bool) -> None:
        self.disabled = disabled
        inner = disabled or self.readonly  # readOnly on a section covers its members
        for field in self.fields.values():
            field.set_disabled(inner)
        if self.map is not None:
            self.map.set_disabled(inner)

    def children(self) -> list[Field]:
        kids = [self.fields[n] for n in self.visible]
        if self.map is not None:
            kids += [f for _k, f, _b in self.map.rows]
        return kids
