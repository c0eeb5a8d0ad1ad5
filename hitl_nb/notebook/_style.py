"""Escaping and colours shared by the notebook's widgets.

Everything an agent says is data, never markup (S-1): it goes through :func:`esc`.
Colours are JupyterLab theme variables with a light-theme fallback, so a card reads the
same in the light and the dark theme and in front ends without those variables.

:data:`CSS` frames a conversation: one border around its cards, its state ("Working",
"Completed") and what the agent says, so nothing a conversation shows is drawn outside
the card's frame. The cards inside drop frames of their own (a card shown alone keeps
its own, drawn by the form's stylesheet). No custom JavaScript: the rules travel in a
``<style>`` element inside the conversation's state line (an HTML widget it has anyway).
"""

from __future__ import annotations

import html

__all__ = ["COLORS", "CSS", "MUTED", "esc"]

#: The colour of each kind of status line.
COLORS = {
    "ok": "var(--jp-success-color1, #1b5e20)",
    "warn": "var(--jp-warn-color1, #8a6d00)",
    "error": "var(--jp-error-color1, #b00020)",
    "info": "var(--jp-ui-font-color1, #222)",
}
#: Secondary text (ids, deadlines).
MUTED = "var(--jp-ui-font-color2, #555)"


def esc(text: object) -> str:
    """``text`` as HTML text: every ``<``, ``>``, ``&`` and quote escaped."""
    return html.escape(str(text), quote=True)


_BORDER = "var(--jp-border-color2, #e0e0e0)"

#: The conversation's frame (see the module docstring). Its HTML lines that hold nothing
#: (no state to say, the agent said nothing yet) take no room.
CSS = f"""
.hitl-conversation {{ border: 1px solid {_BORDER}; border-radius: 4px;
  background: var(--jp-layout-color1, transparent); padding: 10px 14px 12px;
  margin: 6px 0 12px; box-sizing: border-box; max-width: 100%; overflow: hidden; }}
.hitl-conversation > .hitl-card {{ border: none; border-radius: 0; padding: 0; margin: 0;
  background: none; }}
.hitl-conversation > .hitl-card + .hitl-card {{ border-top: 1px solid {_BORDER};
  padding-top: 10px; margin-top: 10px; }}
.hitl-conversation > .widget-html:not(:has(.widget-html-content > :not(style))) {{
  display: none; }}
.hitl-conversation > .hitl-card ~ .widget-html {{ margin-top: 8px; }}
.hitl-conversation > .widget-html > .widget-html-content {{ line-height: 1.4; }}
"""
