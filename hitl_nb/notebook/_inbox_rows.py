"""The rows of an inbox: one prompt each (question, deadline countdown, who may answer,
agent, task) with its Open button; and the widget chores of a list that is redrawn.

Everything an agent says is escaped (S-1); colours are theme variables, so rows read
the same in the light and the dark theme.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from ._deadline import deadline_html
from ._inbox_sources import InboxItem
from ._responder import responders_html
from ._style import COLORS, MUTED, esc

__all__ = ["discard", "row_widget", "weakly"]

_TEXT_LIMIT = 160
#: The line between rows: the theme's border colour (light and dark alike).
_RULE = "var(--jp-border-color2, #e0e0e0)"


def row_widget(item: InboxItem, on_open: Callable[[Any], None]) -> W.HBox:
    """One prompt's row; ``on_open`` is the Open button's click handler."""
    text = item.envelope.prompt
    short = text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"
    meta = [
        deadline_html(item.envelope),
        responders_html(item.envelope),
        f"agent {esc(item.agent_url)}",
        f'task <code style="font-size:inherit">{esc(item.task_id)}</code>',
    ]
    if item.needed > 1:
        meta.append(f"{item.agreeing} of {item.needed} agree so far")
    if item.may_answer is False:
        meta.append(f'<span style="color:{COLORS["warn"]}">not yours to answer</span>')
    summary = W.HTML(
        value=(
            f'<div style="white-space:pre-wrap;font-weight:600;line-height:1.4">{esc(short)}</div>'
            f'<div style="font-size:smaller;color:{MUTED};line-height:1.4">'
            f"{' · '.join(m for m in meta if m)}</div>"
        ),
        layout=W.Layout(flex="1 1 auto", width="auto"),
    )
    button = W.Button(
        description="Open",
        tooltip="show this prompt's card",
        layout=W.Layout(width="auto", flex="0 0 auto"),
    )
    button.on_click(on_open)
    row = W.HBox(
        [summary, button],
        layout=W.Layout(
            align_items="center",
            width="100%",
            padding="2px 0",
            border_bottom=f"1px solid {_RULE}",
        ),
    )
    row.add_class("hitl-inbox-row")
    return row


def weakly(inbox: object, method: str, *args: Any) -> Any:
    """A handler (of a click, an outcome) that calls ``inbox.method(*args)`` without
    keeping the inbox alive (widgets live in ipywidgets' registry; a forgotten inbox must
    be collected)."""
    ref = weakref.ref(inbox)

    def handler(*_: Any) -> None:
        target = ref()
        if target is not None:
            getattr(target, method)(*args)

    return handler


def discard(widget: W.Widget) -> None:
    """Close a widget, its children and their layouts (their comms go)."""
    for child in getattr(widget, "children", ()):
        discard(child)
    layout = getattr(widget, "layout", None)
    if isinstance(layout, W.Layout):
        layout.close()
    widget.close()
