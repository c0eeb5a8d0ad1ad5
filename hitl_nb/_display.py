"""Display settings shared by every rendering hitl-nb makes (cards, traces, reports).

**Renderers.** Objects of the lower layers (a client's wire trace) have rich pictures
drawn by higher ones (the notebook package's widgets). The package root registers a
renderer here (:func:`register_renderer`) that loads the higher layer on first use; the
object asks for it when displayed, so imports still point down only.

**Stable output.** A notebook that is committed and re-run under
nbval compares each cell's text with the stored one; timings (``12.3 ms``, "working for
4 s") differ on every run even after sanitizing, and a live clock changes while the
notebook is saved. With stable output on, renderings leave timings out.

Turn it on with :func:`hitl_nb.testing.stable_output` in a cell, or for a whole test run
with the environment variable ``HITL_NB_STABLE_OUTPUT=1`` (set in a ``conftest.py``'s
``pytest_configure``, it reaches the kernels nbval starts).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "STABLE_OUTPUT_ENV",
    "register_renderer",
    "renderer",
    "set_stable_output",
    "stable_output",
]

#: A renderer takes the object and returns a MIME bundle (e.g. a widget's).
Renderer = Callable[[Any], Mapping[str, Any]]
_renderers: dict[str, Renderer] = {}

#: The environment variable that turns stable output on (``1``, ``true``, ``yes``).
STABLE_OUTPUT_ENV = "HITL_NB_STABLE_OUTPUT"

_setting: bool | None = None


def stable_output() -> bool:
    """Whether renderings must leave out what changes from run to run (timings)."""
    if _setting is not None:
        return _setting
    return os.environ.get(STABLE_OUTPUT_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def set_stable_output(enabled: bool | None) -> None:
    """Set stable output on or off; ``None`` goes back to the environment variable."""
    global _setting
    if enabled is not None and not isinstance(enabled, bool):
        raise TypeError(f"stable output is True, False or None, not {enabled!r}")
    _setting = enabled


def register_renderer(kind: str, draw: Renderer) -> None:
    """Draw objects of ``kind`` (e.g. ``"trace"``) with ``draw`` (returns a MIME bundle)."""
    _renderers[kind] = draw


def renderer(kind: str) -> Renderer | None:
    """The renderer registered for ``kind``, if any."""
    return _renderers.get(kind)
