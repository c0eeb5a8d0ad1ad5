"""The transport options, shared by ``hitl-nb conformance`` and the pytest plugin.

A module of its own so that the plugin can register its options without importing
the harness (pytest loads the plugin in every run).
"""

from __future__ import annotations

from typing import Any

from hitl_nb.a2a import BINDINGS, VERSIONS

__all__ = ["TRANSPORT_OPTIONS"]

#: The transport options: ``--binding`` here, ``--hitl-binding`` in the pytest plugin.
TRANSPORT_OPTIONS: dict[str, dict[str, Any]] = {
    "binding": {
        "choices": ("auto", *BINDINGS),
        "default": "auto",
        "help": "protocol binding (default: the card's first usable interface)",
    },
    "a2a-version": {
        "choices": ("auto", *VERSIONS),
        "default": "auto",
        "help": "A2A wire version (default: 1.0 when the card offers it)",
    },
}
