"""Forms for response_schemas: ipywidgets that return exactly valid data.

See :class:`Form`. The coverage table, hint vocabulary and CSS class names are in
``docs/forms.md``.
"""

from __future__ import annotations

from ..errors import ClickNeeded, FormClosed, FormInvalid, FormValueError, WaitTimedOut
from ._base import Field, FieldMessage, FormContext, Slot
from ._form import Form
from ._hints import Hints, hints_for
from ._registry import Registry, default_registry
from ._text import render_text
from ._theme import bare
from ._util import MISSING, css_class

__all__ = [
    "MISSING",
    "ClickNeeded",
    "Field",
    "FieldMessage",
    "FormContext",
    "Form",
    "FormClosed",
    "FormInvalid",
    "FormValueError",
    "Hints",
    "Registry",
    "Slot",
    "WaitTimedOut",
    "bare",
    "css_class",
    "default_registry",
    "hints_for",
    "render_text",
]
