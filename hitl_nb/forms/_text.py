"""The plain-text rendering of a form, for terminals, nbconvert and nbval outputs.

Everything is shown as data (spec S-1): titles and values are printed, never
interpreted. One line per field: ``title *: value  ! message``.
"""

from __future__ import annotations

from typing import Any

from ._arrays import ArrayField
from ._base import Field
from ._loose import LooseField
from ._objects import ObjectField
from ._util import MISSING, short_json
from ._variants import NullableField, VariantField


def _value_text(value: Any) -> str:
    if value is MISSING:
        return "(empty)"
    return short_json(value, 80)


def _lines(field: Field, indent: str, out: list[str]) -> None:
    star = " *" if field.required else ""
    notes = "".join(f"  ! {m}" for m in field.messages)
    if isinstance(field, ObjectField):
        if not field.headless:
            state = "" if field.built else " (not added)"
            out.append(f"{indent}{field.title}{star}:{state}{notes}")
            indent += "  "
        elif notes:
            out.append(f"{indent}{notes.strip()}")
        if field.built:
            for name in field.visible:
                _lines(field.fields[name], indent, out)
            if field.map is not None:
                for key_input, child, _box in field.map.rows:
                    sub: list[str] = []
                    _lines(child, "", sub)
                    first = sub[0].split(":", 1)[1] if sub and ":" in sub[0] else ""
                    out.append(f"{indent}{key_input.value or '(no name)'}:{first}")
                    out.extend(indent + line for line in sub[1:])
                if field.map.overflow is not None:
                    _lines(field.map.overflow, indent, out)
        elif field.pending is not MISSING:
            out.append(f"{indent}{_value_text(field.pending)}")
        return
    if isinstance(field, ArrayField) and field.overflow is not None:
        _lines(field.overflow, indent, out)
        return
    if isinstance(field, ArrayField):
        count = len(field.rows)
        out.append(
            f"{indent}{field.title}{star}: {count} {'entry' if count == 1 else 'entries'}{notes}"
        )
        for child in field.children():
            lines: list[str] = []
            _lines(child, "", lines)
            for n, line in enumerate(lines):
                out.append(indent + ("  - " if n == 0 else "    ") + line)
        return
    if isinstance(field, VariantField) and field.current is None:
        out.append(f"{indent}{field.title}{star}: (none chosen){notes}")
        return
    if isinstance(field, VariantField):
        option = field.selector.options[field.current][0]
        out.append(f"{indent}{field.title}{star} [{option}]{notes}")
        _lines(field.children()[0], indent + "  ", out)
        return
    if isinstance(field, LooseField):
        _lines(field.current, indent, out)
        return
    if isinstance(field, NullableField) and field.get() is None:
        out.append(f"{indent}{field.title}{star}: None{notes}")
        return
    if isinstance(field, NullableField):
        _lines(field.inner, indent, out)
        return
    if field.hints.hidden:
        return
    out.append(f"{indent}{field.title}{star}: {_value_text(field.get())}{notes}")


def render_text(root: Field, title: str, state: str) -> str:
    """A form as plain text: the heading ``Form: title``, one line per field below
    ``root``, then ``state: <state>``."""
    out = [f"Form: {title}" if title else "Form"]
    _lines(root, "  ", out)
    out.append(f"state: {state}")
    return "\n".join(out)
