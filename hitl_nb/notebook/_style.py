"""Escaping and colours shared by the notebook's widgets.

Everything an agent says is data, never markup (S-1): it goes through :func:`esc`.
Colours are JupyterLab theme variables with a light-theme fallback, so a card reads the
same in the light and the dark theme and in front ends without those variables.
"""

from __future__ import annotations

import html

__all__ = ["COLORS", "MUTED", "esc"]

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
