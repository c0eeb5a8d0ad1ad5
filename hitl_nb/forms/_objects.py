"""Object fields: properties in order, collapsible sections built on first opening,
``if``/``then``/``else`` and ``dependentRequired``, and a key/value editor for
``additionalProperties``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import ipywidgets as W

from ._base import Errors, Field, FieldKind, FieldMessage, Slot, route
from ._conditions import Condition, active_branches, all_branches, conditions_of
from ._hints import child_ui
from ._maps import MapEditor, matching_patterns
from ._theme import LayoutName, heading_html, layout, make, set_html, title_html
from ._util import MISSING, FormValueError, child_pointer, json_type
from ._variants import building
from ._wording import readable


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


def _lower_first(title: str) -> str:
    """``Owner`` -> ``owner`` for "Add owner" (``URL`` stays ``URL``)."""
    if len(title) > 1 and title[1].isupper():
        return title
    return title[:1].lower() + title[1:]


class ObjectField(Field):
    """A section for an object.

    A required section is open, under its title. An optional one starts with an "Add
    <title>" button (unless it holds a value, or the ``collapsed: false`` hint opens it)
    and is built when opened, which also bounds recursive schemas; once open, "Remove
    <title>" empties and closes it. An open optional section is sent once it was added,
    set, or something in it was touched (its members' defaults alone do not send it).
    The form itself and a variant's chosen option are drawn ``headless``: open, without
    a header of their own.
    """

    kind: FieldKind = "object"

    def __init__(self, slot: Slot) -> None:
        super().__init__(slot)
        self.fields: dict[str, Field] = {}
        self.visible: list[str] = []
        self.explicit = False
        self.built = False
        self.pending: Any = MISSING
        self.map: MapEditor | None = None
        self.is_root = slot.pointer == ""
        self.headless = slot.headless or self.is_root
        s = self.schema
        props = s.get("properties")
        self.props: Mapping[str, Any] = props if isinstance(props, Mapping) else {}
        req = s.get("required")
        self.base_required = (
            {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()
        )
        self.conditions: list[Condition] = conditions_of(self.ctx.resolver, s)
        #: Members a value put in: shown even where no active branch declares them,
        #: until a change picks other branches (``None``: not yet known).
        self.pinned: set[str] = set()
        #: Members only branches declare, declared differently: (branch, schema) each.
        self.alternatives: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        self._alt_fields: dict[tuple[str, int], Field] = {}
        self._pinned_for: list[int] | None = None
        #: Left out by the last value set (a required section is then not invented).
        self.absent = False
        patterns = s.get("patternProperties")
        self.patterns: Mapping[str, Any] = patterns if isinstance(patterns, Mapping) else {}
        deps = s.get("dependentRequired")
        self.dependent: Mapping[str, Any] = deps if isinstance(deps, Mapping) else {}
        optional = not (self.required or self.headless)
        collapsed = self.hints.collapsed
        self.collapsed = optional and collapsed is not False
        self.label = make(W.HTML, self.classes("hitl-label"), value="")
        self.body = make(
            W.VBox,
            self.classes("hitl-body", *(("hitl-headless",) if self.headless else ())),
            "hidden" if self.collapsed else ("default" if self.headless else "indent"),
        )
        self.toggle: W.Button | None = None
        self.header: W.HBox | None = None
        if optional:
            self.toggle = make(
                W.Button,
                self.classes("hitl-toggle"),
                description=self._toggle_text(),
                icon="plus" if self.collapsed else "times",
                tooltip=self.help or self.title,
            )
            self.toggle.on_click(self._on_toggle)
            self.header = make(
                W.HBox, self.classes("hitl-section-head"), "row", children=[self.label]
            )
        lay: LayoutName = "hidden" if self.hints.hidden else "default"
        self.box = make(W.VBox, self.classes("hitl-object"), lay)
        self.widgets = [self.box]
        self._arrange()
        if not self.collapsed:
            self.build()
        else:
            self.refresh_label()

    def _toggle_text(self) -> str:
        verb = "Add" if self.collapsed else "Remove"
        return f"{verb} {_lower_first(self.title)}"

    def _arrange(self) -> None:
        """Lay out header and body for the section's state."""
        if self.toggle is None or self.header is None:
            self.box.children = [self.label, self.body]
        elif self.collapsed:  # the title, then "Add owner" (as a list shows "Add entry")
            self.box.children = [self.label, self.toggle]
        else:
            self.header.children = [self.label, self.toggle]
            self.box.children = [self.header, self.body]

    def label_html(self) -> str:
        """The section's heading: title, required marker, help, messages."""
        if self.is_root:
            title = self.schema.get("title")
            text = title if isinstance(title, str) else ""
            return title_html(text, self.help, self.messages)
        if self.headless:  # a variant's option: the selector names it
            return heading_html("", False, self.help, self.messages)
        if self.collapsed:
            return heading_html(self.title, False, self.help, self.messages)
        title = self.title if self.labelled else ""
        return heading_html(title, self.required and self.star, self.help, self.messages)

    # --- building ------------------------------------------------------------------------
    def build(self) -> None:
        """Create the property fields (once)."""
        if self.built:
            return
        self.built = True
        schemas = dict(self.props)
        for branch in all_branches(self.conditions):
            extra = branch.get("properties")
            if isinstance(extra, Mapping):
                for name, sub in extra.items():
                    schemas.setdefault(name, sub)
                    if name not in self.props:
                        self.alternatives.setdefault(name, []).append((branch, sub))
        # a member several branches declare alike is one field; declared differently
        # (`attributes` of each `type`), it is drawn by the active branch's schema
        for name in list(self.alternatives):
            subs = {json.dumps(sub, sort_keys=True) for _b, sub in self.alternatives[name]}
            if len(subs) < 2:
                del self.alternatives[name]
        # (a variant below whose first option is this section again starts unchosen)
        with building(self.ctx, self.props):
            for name in _order(list(schemas), self.hints.order):
                self.fields[name] = self._child(name, schemas[name])
        for name in self.alternatives:
            self._alt_fields[(name, 0)] = self.fields[name]
        extra_schema = self.schema.get("additionalProperties")
        if isinstance(extra_schema, Mapping) or extra_schema is True or self.patterns:
            self._make_map(extra_schema, can_add=extra_schema is not False or bool(self.patterns))
        if self.conditions or self.dependent:
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

    def _child(self, name: str, schema: Any) -> Field:
        child = self.ctx.build(
            schema,
            child_pointer(self.pointer, name),
            child_ui(self.ui, name),
            name in self.base_required,
            name,
        )
        child.parent_hook = self._relayout
        return child

    def _pick_alternatives(self, active: list[dict[str, Any]]) -> list[str]:
        """Draw each member several branches declare differently by the first active
        branch that declares it (keeping its value where it fits). Returns the names
        whose field changed."""
        changed = []
        for name, candidates in self.alternatives.items():
            index = next(
                (i for i, (b, _s) in enumerate(candidates) if any(b is a for a in active)), 0
            )
            field = self._alt_fields.get((name, index))
            if field is None:
                field = self._child(name, candidates[index][1])
                self._alt_fields[(name, index)] = field
            old = self.fields[name]
            if field is old:
                continue
            value = old.get()
            with self.ctx.quietly():
                try:
                    field.set(value)
                except FormValueError:
                    field.set(MISSING)
            field.set_disabled(self.disabled or self.readonly)
            self.fields[name] = field
            changed.append(name)
        return changed

    def _make_map(self, schema: Any, can_add: bool) -> MapEditor:
        if self.map is None:
            self.map = MapEditor(
                self, self.fields, schema if schema is not None else True, can_add, self.patterns
            )
            self._relayout()
        return self.map

    def _relayout(self) -> None:
        kids: list[W.Widget] = []
        for name in self.visible:
            kids.extend(self.fields[name].widgets)
        if self.map is not None:
            kids.append(self.map.box)
        self.body.children = kids

    def is_built(self) -> bool:
        return self.built

    def build_if_needed(self) -> None:
        """Build and show a closed section (not an answer: nothing is sent for it)."""
        if self.collapsed:
            self._open(True)

    def _open(self, opened: bool) -> None:
        self.collapsed = not opened
        if opened:
            self.build()
        self.body.layout = layout(
            "hidden" if self.collapsed else ("default" if self.headless else "indent")
        )
        if self.toggle is not None:
            self.toggle.description = self._toggle_text()
            self.toggle.icon = "plus" if self.collapsed else "times"
        self._arrange()
        self.refresh_label()

    def _on_toggle(self, _button: Any) -> None:
        if self.collapsed:  # "Add owner": the person answers with this section
            self._open(True)
            self.explicit = True
        else:  # "Remove owner": nothing of it is sent
            with self.ctx.quietly():
                self.set(MISSING)
            self._open(False)
        self.ctx.changed()

    # --- conditionals ----------------------------------------------------------------------
    def react(self) -> None:
        if not self.built:
            return
        shown = set(self.props)
        active: list[dict[str, Any]] = []
        # A test reads the members shown; showing a branch's members can change it:
        # settle in a few rounds (a test depending on its own branch stops there).
        for _round in range(3):
            current = self._collect([n for n in self.fields if n in shown])
            active = active_branches(self.ctx.resolver, self.conditions, current)
            now = set(self.props) | {n for n in self.pinned if self.fields[n].get() is not MISSING}
            for branch in active:
                extra = branch.get("properties")
                if isinstance(extra, Mapping):
                    now |= set(extra)
            if now == shown:
                break
            shown = now
        if self.pinned:
            ids = [id(b) for b in active]
            if self._pinned_for is None:
                self._pinned_for = ids
            elif ids != self._pinned_for:
                self.pinned = set()  # the person picked other branches: as they say
                self.react()
                return
        switched = self._pick_alternatives(active) if self.alternatives else []
        required = set(self.base_required)
        for branch in active:
            req = branch.get("required")
            if isinstance(req, list):
                required |= {r for r in req if isinstance(r, str)}
        current = self._collect([n for n in self.fields if n in shown])
        for trigger, names in self.dependent.items():
            if trigger in current and isinstance(names, list):
                required |= {n for n in names if isinstance(n, str)}
        visible = [n for n in self.fields if n in shown]
        for name, field in self.fields.items():
            field.set_required(name in required)
        if visible != self.visible or switched:
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
        if self.map is not None and (self.map.rows or self.map.overflow is not None):
            return True
        return any(f.touched() for f in self.fields.values())

    def get(self) -> Any:
        if not self.built:
            return copy.deepcopy(self.pending)
        if not ((self.required and not self.absent) or self.touched()):
            return MISSING
        return self._collect(self.visible)

    def set(self, value: Any) -> None:
        if value is not MISSING and not isinstance(value, dict):
            raise FormValueError(self.pointer, f"expected object, got {json_type(value)}")
        if not self.built:
            if value is not MISSING:
                self._open(True)  # a section that holds a value is shown open
            else:
                self.pending = MISSING
                self.absent = True
                self.refresh_label()
                return
        elif value is not MISSING and self.collapsed:
            self._open(True)
        self.explicit = value is not MISSING
        self.absent = value is MISSING
        given = value if isinstance(value, dict) else {}
        self.pinned = {name for name in given if name in self.fields}
        self._pinned_for = None
        extra_schema = self.schema.get("additionalProperties")
        extras = {k: v for k, v in given.items() if k not in self.fields}
        if extras and extra_schema is False:
            for key in extras:
                if not matching_patterns(self.patterns, key):
                    raise FormValueError(
                        child_pointer(self.pointer, key), "this member is not allowed"
                    )
        for name, field in self.fields.items():
            if name not in self.alternatives:
                field.set(given.get(name, MISSING))
        if self.alternatives:
            # the branches the value itself selects decide which schema draws these
            # members (the section without them may select others: an ``if`` on a
            # member it lacks holds, so every branch applied and the first one's
            # ``const`` refused the value's own)
            self._pick_alternatives(active_branches(self.ctx.resolver, self.conditions, given))
            for name in self.alternatives:
                self.fields[name].set(given.get(name, MISSING))
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
            name = readable(seg)
            for msgs in sub.values():
                # worded here, so the section shows it as it is ("input")
                own += [
                    FieldMessage("input", f"{name}: {m.text if m.from_agent else self.say(*m[:2])}")
                    for m in msgs
                ]
        self.show_own(own)

    def refresh_label(self) -> None:
        set_html(self.label, self.label_html())

    def set_disabled(self, disabled: bool) -> None:
        self.disabled = disabled
        inner = disabled or self.readonly  # readOnly on a section covers its members
        if self.toggle is not None:  # a submitted form gains or loses no section
            self.toggle.disabled = inner
        for field in self.fields.values():
            field.set_disabled(inner)
        if self.map is not None:
            self.map.set_disabled(inner)

    def children(self) -> list[Field]:
        kids = [self.fields[n] for n in self.visible]
        if self.map is not None:
            kids += [f for _k, f, _b in self.map.rows]
            if self.map.overflow is not None:
                kids.append(self.map.overflow)
        return kids
