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
from typing import Any

import ipywidgets as W

from ._hints import Hints, hints_for
from ._normalize import Node, Resolver
from ._util import MISSING, FormValueError, css_class, esc, make

#: One message: (keyword, text). ``required`` messages wait until the field is touched.
Message = tuple[str, str]
#: Messages by JSON Pointer relative to the field receiving them (``""`` is the field).
Errors = Mapping[str, list[Message]]


def route(errors: Errors) -> tuple[list[Message], dict[str, dict[str, list[Message]]]]:
    """Split relative errors into this field's own and, per first segment, the rest."""
    own: list[Message] = []
    below: dict[str, dict[str, list[Message]]] = {}
    for pointer, msgs in errors.items():
        if not pointer:
            own.extend(msgs)
            continue
        cut = pointer.find("/", 1)
        head, rest = (pointer, "") if cut < 0 else (pointer[:cut], pointer[cut:])
        seg = head[1:].replace("~1", "/").replace("~0", "~")
        below.setdefault(seg, {}).setdefault(rest, []).extend(msgs)
    return own, below


#: Most entries one array or map shows as rows of widgets.
MAX_ROWS = 500
#: Most fields the values put into a form (defaults included) may add up to.
MAX_FILLED_FIELDS = 2500


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


class Context:
    """What every field of one form shares: resolver, registry, change notification."""

    def __init__(self, resolver: Resolver, build: Callable[..., Field]) -> None:
        self.resolver = resolver
        self._build = build
        self.listeners: list[Callable[[], None]] = []
        self.reactors: list[Field] = []
        self.quiet = 0
        #: Show ``required`` messages on untouched fields too (after a submit attempt).
        self.reveal = False
        self._batch = 0
        self._dirty: dict[int, Callable[[], None]] = {}
        #: Fields built so far (the registry draws parts past its limit as JSON).
        self.fields_built = 0

    def forget(self, field: Field) -> None:
        """A field was removed (array entry, map row): stop re-evaluating its parts."""
        gone = {id(f) for f in field.walk()}
        self.reactors = [r for r in self.reactors if id(r) not in gone]
        self.fields_built = max(0, self.fields_built - len(gone))

    def check_rows(self, pointer: str, count: int, value: Any) -> None:
        """Refuse to show ``count`` more entries (``value`` being put in) when too many.

        A default (or a value) of 15,000 array entries built 72,000 widgets in 15 s;
        6,000 map entries took 63 s. Checked before anything is built.
        """
        if count > MAX_ROWS:
            raise FormValueError(pointer, f"at most {MAX_ROWS} entries can be edited here")
        if self.fields_built + _entries(value) > MAX_FILLED_FIELDS:
            raise FormValueError(pointer, "the form cannot show this many entries")

    def schedule(self, hook: Callable[[], None]) -> None:
        """Run a relayout hook now, or once at the end of the current batch."""
        if self._batch:
            self._dirty[id(hook)] = hook
        else:
            hook()

    def begin(self) -> None:
        """Start collecting relayout hooks (one run each at :meth:`end`)."""
        self._batch += 1

    def end(self) -> None:
        """Finish a batch: run each collected relayout hook once."""
        self._batch -= 1
        while not self._batch and self._dirty:
            hooks = list(self._dirty.values())
            self._dirty.clear()
            for hook in hooks:
                hook()

    def build(
        self,
        schema: Any,
        pointer: str,
        ui: Mapping[str, Any] | None,
        required: bool,
        name: str = "",
    ) -> Field:
        """Build the field for ``schema`` at ``pointer`` (through the form's registry)."""
        return self._build(self, schema, pointer, ui, required, name)

    def changed(self) -> None:
        """A person changed something: tell the form (unless values are being set)."""
        if self.quiet:
            return
        for listener in list(self.listeners):
            listener()


class Field(ABC):
    """Base of all fields. Subclasses fill ``widgets`` (what the parent lays out)."""

    kind = "field"

    def __init__(
        self,
        ctx: Context,
        node: Node,
        pointer: str,
        ui: Mapping[str, Any] | None,
        required: bool,
        name: str = "",
    ) -> None:
        self.ctx = ctx
        self.node = node
        self.schema = node.schema
        self.pointer = pointer
        self.ui = ui
        self.required = required
        self.hints: Hints = node.hints if node.hints is not None else hints_for(node.schema, ui)
        title = node.schema.get("title")
        self.title = str(title) if isinstance(title, str) and title else (name or "value")
        desc = self.hints.help or node.schema.get("description")
        self.help = str(desc) if isinstance(desc, str) else ""
        self.readonly = self.hints.readonly or node.schema.get("readOnly") is True
        self.disabled = False
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

    # --- errors, state -----------------------------------------------------------------
    def show_errors(self, errors: Errors) -> None:
        """Show the messages for this field and below (pointers relative to this field;
        containers pass them down)."""
        self.show_own([m for ms in errors.values() for m in ms])

    def show_own(self, msgs: list[Message]) -> None:
        """Show these messages on this field (``required`` ones once touched)."""
        reveal = self.ctx.reveal or self.touched()
        texts = [text for keyword, text in msgs if keyword != "required" or reveal]
        if texts != self.messages:
            self.messages = texts
            self.refresh_label()

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

    def children(self) -> list[Field]:
        """Child fields that exist now (lazy parts that were not opened are absent)."""
        return []

    def walk(self) -> Iterator[Field]:
        """This field and every built field below it."""
        yield self
        for child in self.children():
            yield from child.walk()

    def classes(self, *extra: str) -> tuple[str, ...]:
        """The CSS classes for this field's widgets."""
        return ("hitl-field", css_class(self.pointer), f"hitl-kind-{self.kind}", *extra)

    def label_html(self, suffix: str = "") -> str:
        """HTML of the label: title, required marker, help text, then the messages."""
        req = ' <span class="hitl-required" title="required">* (required)</span>'
        parts = [f"<b>{esc(self.title)}</b>{req if self.required else ''}{suffix}"]
        if self.help:
            parts.append(f'<div style="color:#666;font-size:90%">{esc(self.help)}</div>')
        for msg in self.messages:
            parts.append(f'<div class="hitl-error" style="color:#b00020">⚠ {esc(msg)}</div>')
        return "".join(parts)


class LeafField(Field):
    """A field drawn by one input widget whose ``description`` is the label (title and
    required marker). A note below it (help text, messages) is a second widget, made
    only when there is something to say: most fields cost one widget model."""

    #: Titles longer than this may be cut in the label column: repeat them in the note.
    LONG_TITLE = 28

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
        self._touched = False  # a person or a caller put a value here (not a default)
        self._has_value = False  # for inputs without an empty state (checkbox, slider)
        self._parse_error: str | None = None
        self.lay = "hidden" if self.hints.hidden else "default"
        self.note: W.HTML | None = None
        self.input = self.make_input(self.lay)
        if self.readonly:
            self.input.disabled = True
        self.widgets = [self.input]
        if self.help or len(self.title) > self.LONG_TITLE:
            self._make_note()
        self.input.observe(self._on_input, names="value")

    def label_text(self) -> str:
        """The label: the title and, when required, ``*``."""
        return self.title + (" *" if self.required else "")

    def note_html(self) -> str:
        """HTML of the note: the full title if long, help text, then the messages."""
        parts = []
        if len(self.title) > self.LONG_TITLE:
            parts.append(f"<b>{esc(self.label_text())}</b>")
        if self.help:
            parts.append(f'<div style="color:#666;font-size:90%">{esc(self.help)}</div>')
        for msg in self.messages:
            parts.append(f'<div class="hitl-error" style="color:#b00020">⚠ {esc(msg)}</div>')
        return "".join(parts)

    def _make_note(self) -> None:
        lay = "note" if self.lay == "default" else self.lay
        self.note = make(W.HTML, self.classes("hitl-note"), lay, value=self.note_html())
        self.widgets = [self.input, self.note]

    @abstractmethod
    def make_input(self, lay: str) -> W.Widget:
        """Create the input widget (subclasses)."""

    def tooltip(self) -> str:
        """The input's tooltip: the help text, else the title."""
        return self.help or self.title

    def _on_input(self, change: Any) -> None:
        if self.ctx.quiet:
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
        self.ctx.quiet += 1
        try:
            self.write(value)
        finally:
            self.ctx.quiet -= 1
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
