"""The field protocol every widget group of a form follows, and the build context.

A field draws one subschema at one JSON Pointer. It reads and writes its value (with
:data:`MISSING` for "leave the member out"), reports errors it alone can see (text that
is not a number, an array entry left empty) and shows the messages the form routes to
its pointer. Containers (objects, arrays, variants) hold child fields and pass
messages down by the next pointer segment.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Literal, NamedTuple

import ipywidgets as W

from ._hints import Hints, hints_for
from ._normalize import Node, Resolver
from ._theme import LayoutName, make, note_html
from ._util import MISSING, FormValueError, css_class, split_pointer
from ._wording import for_person, readable


class FieldMessage(NamedTuple):
    """One message for a field: the keyword that raised it (``input`` for the widgets'
    own), the text, and whether the agent wrote it (its 422: shown as written)."""

    keyword: str
    text: str
    from_agent: bool = False


#: Messages by JSON Pointer relative to the field receiving them (``""`` is the field).
Errors = Mapping[str, list[FieldMessage]]


def route(errors: Errors) -> tuple[list[FieldMessage], dict[str, dict[str, list[FieldMessage]]]]:
    """Split relative errors into this field's own and, per first segment, the rest."""
    own: list[FieldMessage] = []
    below: dict[str, dict[str, list[FieldMessage]]] = {}
    for pointer, msgs in errors.items():
        if not pointer:
            own.extend(msgs)
            continue
        cut = pointer.find("/", 1)
        head, rest = (pointer, "") if cut < 0 else (pointer[:cut], pointer[cut:])
        seg = split_pointer(head)[0]
        below.setdefault(seg, {}).setdefault(rest, []).extend(msgs)
    return own, below


#: Most entries one array or map shows as rows of widgets.
MAX_ROWS = 500
#: How many fields one form builds with widgets of their own, the values put into it
#: (defaults included) counted too. Past it, each further part is edited as JSON (the
#: registry) and a value needing more rows is refused (:meth:`FormContext.check_rows`).
#: Required sections are built at once, so a schema whose required members refer back
#: to it (``{"required": ["a", "b"], "properties": {"a": {"$ref": "#"}, "b": {"$ref":
#: "#"}}}``) asked for 2**32 fields and never returned.
MAX_FIELDS = 2500


def _entries(value: Any) -> int:
    """How many array entries and object members ``value`` holds, at every level."""
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, dict)):
            children = list(item.values()) if isinstance(item, dict) else item
            total += len(children)
            stack.extend(children)
    return total


class FormContext:
    """What every field of one form shares: resolver, registry, change notification.

    Two context managers, after ipywidgets' ``hold_sync()``: :meth:`quietly` while code
    (not a person) puts values into widgets, so their observers do not report a change;
    :meth:`batch` while many fields change, so each container lays out its children once.
    """

    def __init__(self, resolver: Resolver, build: Callable[..., Field]) -> None:
        self.resolver = resolver
        self._build = build
        self.listeners: list[Callable[[], None]] = []
        self.reactors: list[Field] = []
        self._quiet = 0
        #: Show messages on untouched fields too (after a submit attempt or a 422).
        self.reveal = False
        self._batch = 0
        self._dirty: dict[int, Callable[[], None]] = {}
        #: Fields built so far (the registry draws parts past :data:`MAX_FIELDS` as JSON).
        self.fields_built = 0

    @property
    def is_quiet(self) -> bool:
        """Whether code is setting values (widget observers then do not report)."""
        return self._quiet > 0

    @contextmanager
    def quietly(self) -> Iterator[None]:
        """Set widget values from code: no change is reported while inside."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Collect relayout hooks while inside; each runs once on leaving."""
        self._batch += 1
        try:
            yield
        finally:
            self._batch -= 1
            while not self._batch and self._dirty:
                hooks = list(self._dirty.values())
                self._dirty.clear()
                for hook in hooks:
                    hook()

    def forget(self, field: Field) -> None:
        """A field was removed (array entry, map row): stop re-evaluating its parts."""
        gone = {id(f) for f in field.walk()}
        self.reactors = [r for r in self.reactors if id(r) not in gone]
        self.fields_built = max(0, self.fields_built - len(gone))

    def room_for_field(self) -> bool:
        """Count one more field; False once the form holds :data:`MAX_FIELDS`."""
        self.fields_built += 1
        return self.fields_built <= MAX_FIELDS

    def check_rows(self, pointer: str, count: int, value: Any) -> None:
        """Refuse to show ``count`` more entries (``value`` being put in) when too many.

        A default (or a value) of 15,000 array entries built 72,000 widgets in 15 s;
        6,000 map entries took 63 s. Checked before anything is built.
        """
        if count > MAX_ROWS:
            raise FormValueError(pointer, f"at most {MAX_ROWS} entries can be edited here")
        if self.fields_built + _entries(value) > MAX_FIELDS:
            raise FormValueError(pointer, "the form cannot show this many entries")

    def schedule(self, hook: Callable[[], None]) -> None:
        """Run a relayout hook now, or once at the end of the current :meth:`batch`."""
        if self._batch:
            self._dirty[id(hook)] = hook
        else:
            hook()

    def build(
        self,
        schema: Any,
        pointer: str,
        ui: Mapping[str, Any] | None,
        required: bool,
        name: str = "",
        *,
        headless: bool = False,
    ) -> Field:
        """Build the field for ``schema`` at ``pointer`` (through the form's registry).

        ``headless``: an object is drawn open, without its own section header (the
        form itself, a variant's chosen option).
        """
        return self._build(self, schema, pointer, ui, required, name, headless)

    def changed(self) -> None:
        """A person changed something: tell the form (unless values are being set)."""
        if self._quiet:
            return
        for listener in list(self.listeners):
            listener()


@dataclass(frozen=True)
class Slot:
    """Where a field is drawn: everything a field class is constructed from.

    ``node`` is the classified schema, ``pointer`` the JSON Pointer of the value,
    ``ui`` the hints dict for this place, ``name`` the property key (or ``#n`` for an
    array entry) the label falls back to, ``headless`` for objects drawn open without
    a section header.
    """

    ctx: FormContext
    node: Node
    pointer: str
    ui: Mapping[str, Any] | None = None
    required: bool = False
    name: str = ""
    headless: bool = False

    def but(self, **changes: Any) -> Slot:
        """A copy with ``changes`` (e.g. another node)."""
        return replace(self, **changes)


#: A field's kind, also its CSS class ``hitl-kind-<kind>``.
FieldKind = Literal[
    "field",
    "string",
    "number",
    "boolean",
    "enum",
    "multichoice",
    "const",
    "date",
    "date-time",
    "time",
    "json",
    "object",
    "array",
    "variant",
    "nullable",
]


class Field(ABC):
    """Base of all fields. Subclasses fill ``widgets`` (what the parent lays out)."""

    kind: FieldKind = "field"
    #: The input widget a person types into or picks with (leaf fields only).
    input: Any = None

    def __init__(self, slot: Slot) -> None:
        self.slot = slot
        self.ctx = slot.ctx
        self.node = slot.node
        self.schema = slot.node.schema
        self.pointer = slot.pointer
        self.ui = slot.ui
        self.required = slot.required
        node = slot.node
        hints = node.hints if node.hints is not None else hints_for(node.schema, slot.ui)
        self.hints: Hints = hints
        title = node.schema.get("title")
        self.title = (
            str(title) if isinstance(title, str) and title else readable(slot.name or "value")
        )
        # VS Code's markdownDescription serves as help when there is no description
        # (shown as text, like every word an agent sends)
        desc = (
            self.hints.help
            or node.schema.get("description")
            or node.schema.get("markdownDescription")
        )
        self.help = str(desc) if isinstance(desc, str) else ""
        self.readonly = self.hints.readonly or node.schema.get("readOnly") is True
        self.disabled = False
        #: Whether the label marks the field required with ``*``.
        self.star = not slot.name.startswith("#")
        #: Whether the field shows its own label (see :meth:`hide_label`).
        self.labelled = True
        #: The messages shown on this field now (worded for people).
        self.messages: list[str] = []
        self.widgets: list[W.Widget] = []
        #: Set by the parent: call when ``widgets`` changes so it lays them out again.
        self.parent_hook: Callable[[], None] | None = None

    def widgets_changed(self) -> None:
        """Tell the parent that ``widgets`` changed."""
        if self.parent_hook is not None:
            self.ctx.schedule(self.parent_hook)

    # --- value -------------------------------------------------------------------------
    @abstractmethod
    def get(self) -> Any:
        """The value, or MISSING when the member should be left out."""

    @abstractmethod
    def set(self, value: Any) -> None:
        """Show ``value`` (MISSING clears); raises FormValueError if it cannot be shown."""

    @property
    def value(self) -> Any:
        """The field's value as data (``MISSING`` when it is left out).

        Setting it acts as a person would, with the value itself, not a widget's
        index: ``form.field("/approve").value = True`` selects Yes, ``= "high"`` picks
        the option "high". A value that does not fit raises
        :class:`~hitl_nb.forms.FormValueError` and leaves the field as it was.
        """
        return self.get()

    @value.setter
    def value(self, value: Any) -> None:
        old = self.get()
        try:
            self.set(value)
        except FormValueError:
            self.set(old)
            raise
        self.ctx.changed()

    def touched(self) -> bool:
        """Whether a person or a caller put a value here (defaults do not count)."""
        return self.get() is not MISSING

    def apply_default(self) -> None:
        """Show the schema's ``default``, if any, without counting as touched."""
        if "default" in self.schema:
            try:
                self.set(self.schema["default"])
            except FormValueError:
                # A default the widget cannot show is simply not pre-filled (nor half).
                try:
                    self.set(MISSING)
                except FormValueError:
                    pass
            self.untouch()

    def untouch(self) -> None:
        """Forget that the value was set (used after pre-filling defaults)."""
        return None  # a hook: nothing to do unless a field overrides it

    def local_errors(self) -> list[tuple[str, str]]:
        """Problems only the widgets can see, as (relative pointer, message)."""
        return []

    def react(self) -> None:
        """Re-evaluate what depends on the current value (if/then/else, dependentRequired)."""
        return None  # a hook: nothing to do unless a field overrides it

    # --- structure ---------------------------------------------------------------------
    def is_built(self) -> bool:
        """Whether the parts below exist (closed sections build on first opening)."""
        return True

    def build_if_needed(self) -> None:
        """Build the parts below now if they are not yet (a closed section)."""
        return None  # a hook: only lazy fields override it

    def children(self) -> list[Field]:
        """Child fields that exist now (lazy parts that were not opened are absent)."""
        return []

    def walk(self) -> Iterator[Field]:
        """This field and every built field below it."""
        yield self
        for child in self.children():
            yield from child.walk()

    # --- errors, state -----------------------------------------------------------------
    def show_errors(self, errors: Errors) -> None:
        """Show the messages for this field and below (pointers relative to this field;
        containers pass them down)."""
        self.show_own([m for ms in errors.values() for m in ms])

    def shows_messages(self) -> bool:
        """Whether messages are shown now: once touched, or after a submit attempt."""
        return self.ctx.reveal or self.touched()

    def show_own(self, msgs: list[FieldMessage]) -> None:
        """Show these messages on this field, worded for people, each once."""
        texts: list[str] = []
        if self.shows_messages():
            for keyword, text, from_agent in msgs:
                said = text[:1].upper() + text[1:] if from_agent else self.say(keyword, text)
                if said not in texts:
                    texts.append(said)
        if texts != self.messages:
            self.messages = texts
            self.refresh_label()

    def say(self, keyword: str, text: str) -> str:
        """A message as a person reads it on this field."""
        if keyword == "input":
            return text  # the widgets' own messages are written for people already
        return for_person(keyword, text, self.schema, self.kind)

    def refresh_label(self) -> None:
        """Redraw label, required marker and messages."""
        return None  # a hook: nothing to do unless a field overrides it

    def set_disabled(self, disabled: bool) -> None:
        """Disable (form submitted, readOnly) or enable the inputs."""
        self.disabled = disabled

    def set_required(self, required: bool) -> None:
        """Change the required marker (dependentRequired, if/then/else)."""
        if required != self.required:
            self.required = required
            self.refresh_label()

    def focus(self) -> bool:
        """Move the keyboard focus to this field's first input (the browser scrolls to
        it). False when there is nothing to focus (a front end may also ignore it)."""
        for field in self.walk():
            target = field.input
            if target is not None and hasattr(target, "focus"):
                target.focus()
                return True
        return False

    def classes(self, *extra: str) -> tuple[str, ...]:
        """The CSS classes for this field's widgets."""
        return ("hitl-field", css_class(self.pointer), f"hitl-kind-{self.kind}", *extra)

    def label_text(self) -> str:
        """The label: the title and, when required, ``*`` (not on array entries: an
        entry that exists must hold a value, which needs no marker)."""
        if not self.labelled:
            return ""
        return self.title + (" *" if self.required and self.star else "")

    def hide_label(self) -> None:
        """Draw the field without its label (the row around it names it: a map's key)."""
        self.labelled = False
        self.refresh_label()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.pointer or '/'} {self.title!r}>"


class LeafField(Field):
    """A field drawn by one input widget whose ``description`` is the label (title and
    required marker). A note below it (help text, messages) is a second widget, made
    only when there is something to say: most fields cost one widget model."""

    #: Titles longer than this may be cut in the label column: repeat them in the note.
    LONG_TITLE = 20

    def __init__(self, slot: Slot) -> None:
        super().__init__(slot)
        self._touched = False  # a person or a caller put a value here (not a default)
        self._has_value = False  # for inputs without an empty state (checkbox, slider)
        self._parse_error: str | None = None
        self.lay: LayoutName = "hidden" if self.hints.hidden else "field"
        self.note: W.HTML | None = None
        self.input = self.make_input(self.lay)
        if self.readonly:
            self.input.disabled = True
        self.widgets = [self.frame(self.input)]
        if self.help or len(self.title) > self.LONG_TITLE:
            self._make_note()
        self.input.observe(self._on_input, names="value")

    def note_html(self) -> str:
        """HTML of the note: the full title if long, help text, then the messages."""
        long_title = self.label_text() if len(self.title) > self.LONG_TITLE else ""
        return note_html(long_title, self.help, self.messages)

    def _make_note(self) -> None:
        lay: LayoutName = "note" if self.lay != "hidden" else "hidden"
        self.note = make(W.HTML, self.classes("hitl-note"), lay, value=self.note_html())
        self.widgets = [*self.widgets, self.note]

    @abstractmethod
    def make_input(self, lay: LayoutName) -> W.Widget:
        """Create the input widget (subclasses)."""

    def frame(self, input_widget: W.Widget) -> W.Widget:
        """What the parent lays out for the input (the input itself, or a row holding
        it and its companions, e.g. a time zone)."""
        return input_widget

    def tooltip(self) -> str:
        """The input's tooltip: the help text, else the title."""
        return self.help or self.title

    def _on_input(self, change: Any) -> None:
        if self.ctx.is_quiet:
            return
        self._touched = self._has_value = True
        self.on_user_edit()
        self.ctx.changed()

    def on_user_edit(self) -> None:
        """Hook: a person edited the input."""

    def touched(self) -> bool:
        return self._touched

    def untouch(self) -> None:
        self._touched = False

    def set(self, value: Any) -> None:
        with self.ctx.quietly():
            self.write(value)
        self._touched = self._has_value = value is not MISSING

    @abstractmethod
    def write(self, value: Any) -> None:
        """Put ``value`` into the input (subclasses); MISSING empties it."""

    def local_errors(self) -> list[tuple[str, str]]:
        self.get()
        return [("", self._parse_error)] if self._parse_error else []

    def refresh_label(self) -> None:
        if self.note is None and self.messages:
            self._make_note()
            self.widgets_changed()
        elif self.note is not None:
            self.note.value = self.note_html()
        if hasattr(self.input, "description") and self.input.description != self.label_text():
            self.input.description = self.label_text()

    def set_disabled(self, disabled: bool) -> None:
        self.disabled = disabled
        self.input.disabled = disabled or self.readonly
