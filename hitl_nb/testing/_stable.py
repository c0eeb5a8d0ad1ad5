"""Stable output: renderings that read the same on every run (for nbval)."""

from __future__ import annotations

from hitl_nb._display import set_stable_output

__all__ = ["stable_output"]


def stable_output(enabled: bool | None = True) -> None:
    """Make hitl-nb's renderings stable across runs (``True``), or not (``False``).

    With it on, traces, cards and reports leave out timings and elapsed-time clocks, the
    values that still differ between runs after nbval's sanitizer made ids, timestamps
    and ports equal. Call it in a notebook's first cell; ``None`` goes back to the
    environment variable ``HITL_NB_STABLE_OUTPUT`` (which ``pytest --hitl-nbval`` sets
    for every kernel it starts).
    """
    set_stable_output(enabled)
