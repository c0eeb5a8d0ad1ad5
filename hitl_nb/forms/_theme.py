"""How a form looks: shared Layouts and Styles, the widget factory, and the stylesheet.

Presentation lives here and in :mod:`._wording` (what messages say); the field modules
decide what is drawn and what it holds, never how it is coloured or spaced. A look
changes here without touching data handling.

No custom JavaScript: the stylesheet is a ``<style>`` block inside one core ``HTML``
widget at the top of each form. Every rule is scoped to ``hitl-*`` classes and uses the
front end's theme variables (``--jp-*``), with a fallback for front ends that define
none (VS Code, Voila's plain templates), so light and dark themes both read well.

Existing generators create a Layout and a Style model for every widget. Here inputs,
notes and small controls have neither (the stylesheet sizes them and sets the label
column through ``hitl-lay-*`` classes), and the other widgets share one Layout per
name and one Style per class: about one widget model, and one widget view in the
browser, per field.
"""

from __future__ import annotations

from typing import Any, Literal

import ipywidgets as W
import traitlets
from ipywidgets.widgets.widget import widget_serialization

from ._util import esc

#: Width of the label column (the ``description`` of every input), one per form level.
LABEL_WIDTH = "11em"
#: Widest a text input grows (readable line length); numbers, dates and dropdowns
#: share :data:`FIELD_WIDTH`.
TEXT_WIDTH = "36em"
FIELD_WIDTH = "18em"
#: Space between the label column and the input (a note under an input keeps it too).
LABEL_GAP = "8px"
_WIDGET_MARGIN = "var(--jp-widgets-margin, 2px)"

#: The named layouts fields ask for.
LayoutName = Literal[
    "default", "hidden", "text", "field", "row", "indent", "narrow", "note", "zone", "key"
]

_LAYOUT_ARGS: dict[str, dict[str, str]] = {
    "default": {},
    "hidden": {"display": "none"},
    # label + input, growing up to a readable width, never wider than the card
    "text": {"width": f"calc({LABEL_WIDTH} + {TEXT_WIDTH})", "max_width": "100%"},
    "field": {"width": f"calc({LABEL_WIDTH} + {FIELD_WIDTH})", "max_width": "100%"},
    "row": {"align_items": "flex-start", "max_width": "100%"},
    "indent": {"margin": "0 0 0 1.25em"},
    "narrow": {"width": "2.4em", "flex": "0 0 auto"},
    # under its input's left edge: past the label column, the gap after it and the margin
    # every widget has (--jp-widgets-margin) but this note, whose margin this is
    "note": {
        "margin": f"0 0 0.35em calc({LABEL_WIDTH} + {LABEL_GAP} + {_WIDGET_MARGIN})",
        "max_width": TEXT_WIDTH,
    },
    "zone": {"width": "8.5em", "flex": "0 0 auto"},
    # a map's member name, in the label column (its value's label is hidden)
    "key": {"width": LABEL_WIDTH, "flex": "0 0 auto"},
}
_LAYOUTS: dict[str, W.Layout] = {}
_STYLES: dict[type, Any] = {}
_STYLE_OF_CLASS: dict[type, Any] = {}


def layout(name: LayoutName = "default") -> W.Layout:
    """A Layout shared by every widget that asks for ``name`` (created on first use)."""
    found = _LAYOUTS.get(name)
    if found is None:
        found = _LAYOUTS[name] = W.Layout(**_LAYOUT_ARGS[name])
    return found


def _style_for(cls: type) -> Any:
    if cls in _STYLE_OF_CLASS:
        return _STYLE_OF_CLASS[cls]
    trait = cls.class_traits().get("style")  # type: ignore[attr-defined]
    found = None
    if trait is not None:
        klass = trait.klass
        found = _STYLES.get(klass)
        if found is None:
            kw: dict[str, Any] = {}
            if "description_width" in klass.class_traits():
                kw["description_width"] = LABEL_WIDTH
            found = _STYLES[klass] = klass(**kw)
    _STYLE_OF_CLASS[cls] = found
    return found


class _QuickState:
    """Mixin for the widget classes forms create: the same models, made for less.

    ipywidgets works out, for every widget it creates, which traits are synced (walking
    all traits of the class) and, for each, how it is serialized (a metadata lookup per
    trait); a form creates a thousand widgets of a dozen classes. Both answers depend on
    the class only, so they are worked out once per class here. Nothing else changes:
    the state sent is the one ipywidgets would send (the model and view names are the
    core ones, no JavaScript of our own), and a widget given traits of its own later
    (``add_traits``) is served by ipywidgets' own code.
    """

    _to_json_of: dict[str, Any]  # per class: trait name -> serializer
    _synced: tuple[str, ...]  # per class: the synced traits (ipywidgets' ``keys``)

    def get_state(self, key: Any = None, drop_defaults: bool = False) -> dict[str, Any]:
        """The state of every synced trait (as ipywidgets' ``get_state``, cached plan)."""
        keys: list[str] = self.keys  # type: ignore[attr-defined]
        if key is not None or drop_defaults or len(keys) != len(self._synced):
            return super().get_state(key, drop_defaults)  # type: ignore[misc, no-any-return]
        plan = self._to_json_of
        return {k: plan[k](getattr(self, k), self) for k in keys}


_QUICK: dict[tuple[type, bool], type] = {}


def _keys(widget: Any) -> list[str]:
    # the default of ``keys`` (registered on each quick class: traitlets reads default
    # handlers from classes it builds, not from a plain mixin)
    return list(widget._synced)


def _quick(cls: type, bare: bool = False) -> type:
    """The :class:`_QuickState` subclass of widget class ``cls`` (created once); with
    ``bare``, one whose ``layout`` and ``style`` may be None (see :func:`make`)."""
    found = _QUICK.get((cls, bare))
    if found is None:
        body: dict[str, Any] = {
            "__module__": cls.__module__,
            "__doc__": cls.__doc__,
            "_default_keys": traitlets.default("keys")(_keys),
        }
        if bare:
            body["layout"] = _optional(W.Layout)
            style = cls.class_traits().get("style")  # type: ignore[attr-defined]
            if style is not None:
                body["style"] = _optional(style.klass)
        found = type(cls.__name__, (_QuickState, cls), body)
        traits = found.class_traits(sync=True)  # type: ignore[attr-defined]
        found._synced = tuple(traits)  # type: ignore[attr-defined]
        fallback = cls._trait_to_json  # type: ignore[attr-defined]
        found._to_json_of = {  # type: ignore[attr-defined]
            name: trait.metadata.get("to_json", fallback) for name, trait in traits.items()
        }
        _QUICK[(cls, bare)] = found
    return found


def _optional(klass: type) -> Any:
    """A synced widget-reference trait that may hold None (no model at all)."""
    return traitlets.Instance(klass, allow_none=True).tag(sync=True, **widget_serialization)


#: Layouts a CSS class stands for (see :func:`make`): the ones of inputs, notes and the
#: small controls, which keep their place for life.
_CLASS_LAYOUTS = frozenset({"field", "text", "note", "zone", "narrow", "key"})


def make(cls: type, classes: tuple[str, ...] = (), lay: LayoutName = "default", **kw: Any) -> Any:
    """Create widget ``cls`` with the given CSS classes, laid out as ``lay``.

    Inputs, notes and small controls (:data:`_CLASS_LAYOUTS`) get no Layout and no
    Style model at all: the class ``hitl-lay-<lay>`` sizes them from the stylesheet.
    In the browser every widget view builds a view of its Layout and of its Style
    (applying some forty properties, shared model or not), which was about a fifth of
    the front end's work for a large form. Other widgets (sections, labels that hide
    when empty) share one Layout per name and one Style per class.
    """
    if lay in _CLASS_LAYOUTS and "layout" not in kw and "style" not in kw:
        return _quick(cls, bare=True)(_dom_classes=(*classes, f"hitl-lay-{lay}"), **kw)
    style = _style_for(cls)
    if style is not None and "style" not in kw:
        kw["style"] = style
    kw.setdefault("layout", layout(lay))  # shared: never change a made widget's Layout
    return _quick(cls)(_dom_classes=classes, **kw)


def bare(cls: type, classes: tuple[str, ...] = (), **kw: Any) -> Any:
    """A core widget of class ``cls`` with no Layout and no Style model of its own
    (``kw`` may give one): drawn as with the defaults, its look from CSS ``classes``.

    For widgets whose layout and style never change (a card's header and status lines):
    each Layout and Style model is one more comm message for the kernel and one more
    view for the front end to build before the widget shows.
    """
    return _quick(cls, bare=True)(_dom_classes=classes, **kw)


def _class_layout_css() -> str:
    """The rules standing for :data:`_CLASS_LAYOUTS` (the class doubled: it must win
    over the widgets' own width rules)."""
    rules = []
    for name in sorted(_CLASS_LAYOUTS):
        props = "; ".join(f"{k.replace('_', '-')}: {v}" for k, v in _LAYOUT_ARGS[name].items())
        rules.append(f".hitl-form .hitl-lay-{name}.hitl-lay-{name} {{ {props}; }}")
    return "\n".join(rules)


# Error red with at least 4.5:1 (WCAG AA) against the form's background in both themes:
# JupyterLab's --jp-error-color1 (#d32f2f) on the light theme's white measures 4.98:1;
# on the dark theme's grey (#111 to #212121) it falls under 4.5, so the dark theme (and
# VS Code's) uses the lighter --jp-error-color2 (#e57373, about 6:1 there). The fallbacks
# are the same colours, for front ends that define no --jp-* variables.
_ERROR = "var(--jp-error-color1, #d32f2f)"
_ERROR_DARK = "var(--jp-error-color2, #e57373)"
_MUTED = "var(--jp-ui-font-color2, #616161)"
_TEXT = "var(--jp-ui-font-color1, rgba(0, 0, 0, 0.87))"
# A submitted (or readOnly) value is the answer, not a hint: in the colour a live input's
# text has, never the browser's disabled grey (opacity 0.6 there: 4.3:1 on white, under
# WCAG AA's 4.5:1, and as pale as the placeholders beside it). Placeholders stay muted
# and italic, so an empty field and an answer are told apart at a glance.
# (ipywidgets leaves date-and-time and time inputs to the browser, a 2px inset border and
# a grey fill in the dark theme: the stylesheet draws them like the other inputs.)
_VALUE = "var(--jp-widgets-input-color, var(--jp-content-font-color1, rgba(0, 0, 0, 0.87)))"
_BORDER = "var(--jp-border-color2, #e0e0e0)"
_CARD_BG = "var(--jp-layout-color1, transparent)"
_OK = "var(--jp-success-color1, #388e3c)"
_DARK = 'body[data-jp-theme-light="false"], body.vscode-dark'

#: The stylesheet every form carries (in an HTML widget; see the module docstring).
#: A card lays widgets of its own on the form's two columns with two classes:
#: ``hitl-columns``, a labelled input whose label takes the label column (the "Answering
#: as" field), and ``hitl-input-column``, a line that starts at the inputs' left edge
#: (its note, the override box): one column for everything a card asks.
CSS = f"""
.hitl-form, .hitl-card {{
  border: 1px solid {_BORDER}; border-radius: 4px; background: {_CARD_BG};
  padding: 10px 14px 12px; margin: 6px 0 12px; box-sizing: border-box;
  max-width: 100%; overflow: hidden; color: {_TEXT};
}}
.hitl-card .hitl-form {{ border: none; padding: 0; margin: 4px 0 0; background: none; }}
.hitl-form .widget-label, .hitl-form .widget-label-basic {{ color: {_TEXT}; }}
.hitl-form .hitl-input > .widget-label, .hitl-form .hitl-variant > .widget-label,
.hitl-card .hitl-columns > .widget-label {{
  flex: 0 0 {LABEL_WIDTH}; min-width: {LABEL_WIDTH}; max-width: {LABEL_WIDTH};
  text-align: right; padding-right: 4px; box-sizing: border-box; margin: 0 {LABEL_GAP} 0 0;
  overflow: hidden; text-overflow: ellipsis;
}}
.hitl-card .hitl-columns {{ width: calc({LABEL_WIDTH} + {FIELD_WIDTH}); max-width: 100%; }}
.hitl-card .hitl-columns > input {{ flex: 1 1 auto; min-width: 0; }}
.hitl-card .hitl-input-column.hitl-input-column {{
  margin-left: calc({LABEL_WIDTH} + {LABEL_GAP} + {_WIDGET_MARGIN}); max-width: {TEXT_WIDTH}; }}
.hitl-card .hitl-input-column > .widget-html-content {{ line-height: 1.4; }}
.hitl-form .hitl-map-key {{ margin-right: {LABEL_GAP}; }}
.hitl-form .widget-radio-box {{ margin-left: 0; }}
.hitl-form .widget-radio.hitl-input {{ display: flex; flex-direction: row;
  align-items: flex-start; height: auto; }}
.hitl-form .hitl-yesno .widget-radio-box {{ flex-direction: row; gap: 1.5em; }}
.hitl-form .hitl-input, .hitl-form .hitl-variant {{ max-width: 100%; }}
.hitl-form .hitl-input > input, .hitl-form .hitl-input > select,
.hitl-form .hitl-input > textarea {{ flex: 1 1 auto; min-width: 0; }}
.hitl-form .hitl-input.widget-datepicker > input,
.hitl-form .hitl-input.widget-timepicker > input,
.hitl-form .hitl-input > .widget-inline-hbox {{ flex: 1 1 auto; }}
.hitl-form .hitl-row > .hitl-entry {{ flex: 0 1 auto; min-width: 0; }}
.hitl-form .hitl-row > .widget-button, .hitl-form .hitl-map-row > .widget-button {{
  flex: 0 0 auto; }}
.hitl-form input::placeholder, .hitl-form textarea::placeholder {{ color: {_MUTED};
  -webkit-text-fill-color: currentColor; font-style: italic; opacity: 1; }}
.hitl-form .hitl-input input[type="datetime-local"], .hitl-form .hitl-input input[type="time"] {{
  border: var(--jp-widgets-input-border-width, 1px) solid
    var(--jp-widgets-input-border-color, #bdbdbd);
  background-color: var(--jp-widgets-input-background-color, transparent);
  color: {_VALUE}; }}
.hitl-form input:disabled:not([type="checkbox"]):not([type="radio"]),
.hitl-form textarea:disabled, .hitl-form select:disabled {{
  opacity: 1; color: {_VALUE}; -webkit-text-fill-color: {_VALUE};
  background-color: transparent; border-color: {_BORDER}; cursor: default; }}
.hitl-form .widget-radio-box label:has(> input:checked:disabled) {{ font-weight: 600; }}
.hitl-form .hitl-help {{ color: {_MUTED}; font-size: var(--jp-content-font-size0, 90%);
  line-height: 1.4; }}
.hitl-form .hitl-error {{ color: {_ERROR}; line-height: 1.4; }}
{_DARK.replace(", ", " .hitl-form .hitl-error, ")} .hitl-form .hitl-error,
{_DARK.replace(", ", " .hitl-summary-head, ")} .hitl-summary-head {{ color: {_ERROR_DARK}; }}
.hitl-form .hitl-note {{ margin-top: 0; }}
.hitl-form .hitl-required {{ color: {_MUTED}; }}
.hitl-form .hitl-title {{ font-weight: 600; font-size: var(--jp-content-font-size3, 1.2em);
  margin: 0 0 4px; color: {_TEXT}; }}
.hitl-form .hitl-summary {{ border-left: 3px solid {_ERROR}; padding: 2px 10px 6px;
  margin: 0 0 10px; }}
.hitl-form .hitl-summary-head {{ color: {_ERROR}; font-weight: 600; }}
.hitl-form .hitl-summary-link {{ width: auto; max-width: 100%; height: auto;
  align-self: flex-start; background: none; box-shadow: none; border: none;
  padding: 1px 0; color: {_TEXT}; text-align: left; white-space: normal;
  text-decoration: underline; cursor: pointer; }}
.hitl-form .hitl-summary-link:hover {{ color: var(--jp-brand-color1, #1976d2); }}
.hitl-form .hitl-ok {{ color: {_OK}; }}
.hitl-form .hitl-toggle {{ width: auto; align-self: flex-start; }}
.hitl-form .hitl-add {{ width: auto; align-self: flex-start; }}
.hitl-form .hitl-const-value {{ font-family: var(--jp-code-font-family, monospace);
  padding: 0 4px; }}
.hitl-form .hitl-body, .hitl-form .hitl-items {{ border-left: 2px solid {_BORDER};
  padding-left: 8px; }}
.hitl-form .hitl-body.hitl-field-root, .hitl-form .hitl-headless {{ border-left: none;
  padding-left: 0; }}
.hitl-form .hitl-sub-label {{ font-weight: 600; color: {_TEXT}; }}
.hitl-form .hitl-kept {{ color: {_MUTED}; font-size: var(--jp-content-font-size0, 90%); }}
.hitl-form .hitl-submit {{ margin-top: 10px; }}
{_class_layout_css()}
"""


def stylesheet() -> W.HTML:
    """The HTML widget holding :data:`CSS` (one per form; hidden, takes no space)."""
    return make(W.HTML, ("hitl-style",), "hidden", value=f"<style>{CSS}</style>")


# --- HTML pieces (all text escaped: prompt and schema text is data, spec S-1) -----------
def help_html(text: str) -> str:
    """A help line."""
    return f'<div class="hitl-help">{esc(text)}</div>' if text else ""


def error_html(text: str) -> str:
    """One message, marked by a sign as well as colour (not by colour alone)."""
    return f'<div class="hitl-error" role="alert">⚠ {esc(text)}</div>'


def note_html(title: str, help_text: str, messages: list[str]) -> str:
    """The note under an input: the full title when the label column cuts it, the help
    text, then the messages."""
    head = f'<div class="hitl-sub-label">{esc(title)}</div>' if title else ""
    return head + help_html(help_text) + "".join(error_html(m) for m in messages)


def heading_html(title: str, required: bool, help_text: str, messages: list[str]) -> str:
    """A section's heading: its title (and required marker), help and messages."""
    star = ' <span class="hitl-required" title="required">*</span>' if required else ""
    head = f'<div class="hitl-sub-label">{esc(title)}{star}</div>' if title else ""
    return head + help_html(help_text) + "".join(error_html(m) for m in messages)


def title_html(title: str, help_text: str, messages: list[str]) -> str:
    """The form's own heading: its title, description and messages about the whole."""
    head = f'<div class="hitl-title">{esc(title)}</div>' if title else ""
    return head + help_html(help_text) + "".join(error_html(m) for m in messages)


def set_html(widget: W.HTML, html: str) -> None:
    """Put ``html`` into ``widget``, hiding it while empty (an empty HTML widget still
    takes a line)."""
    if widget.value != html:
        widget.value = html
    want = layout("hidden" if not html else "default")
    if widget.layout is not want:
        widget.layout = want
