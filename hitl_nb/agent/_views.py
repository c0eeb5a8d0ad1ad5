"""What one client may see: the JSON of a response, rewritten on its way out.

Two rewrites, both on plain JSON (no SDK types), so they apply alike to every binding:

- :func:`strip_envelopes`: a request that did not activate hitl-prompt/v1 never sees an
  envelope (§Activation: "Agents that have not had this extension activated MUST NOT emit
  the envelope"). The envelope stays in the task store; it is taken out of every message
  of the response (status message, history, streamed events), with the URI in a
  message's ``extensions``. The question itself is in the message's text.
- :func:`declare_in_card`: the card's extension entry written out whole,
  ``"required": false`` included (§Activation: "MUST be declared with required: false";
  the SDK serves its protobuf card, which leaves false booleans out).
"""

from __future__ import annotations

from typing import Any

from hitl_nb.spec import EXTENSION_URI, agent_card_extension

__all__ = ["declare_in_card", "strip_envelopes"]


def strip_envelopes(value: Any) -> bool:
    """Take every envelope out of ``value`` (JSON, changed in place); True if any was."""
    changed = False
    stack = [value]
    while stack:  # iterative: a response's depth is the agent's to choose
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
            continue
        if not isinstance(item, dict):
            continue
        meta = item.get("metadata")
        if isinstance(meta, dict) and EXTENSION_URI in meta:
            del meta[EXTENSION_URI]
            if not meta:
                del item["metadata"]
            changed = True
        extensions = item.get("extensions")
        if isinstance(extensions, list) and EXTENSION_URI in extensions:
            item["extensions"] = [e for e in extensions if e != EXTENSION_URI]
            if not item["extensions"]:
                del item["extensions"]
            changed = True
        stack.extend(item.values())
    return changed


def declare_in_card(card: Any) -> bool:
    """Write the card's hitl-prompt/v1 entry out whole (True if it changed)."""
    if not isinstance(card, dict):
        return False
    capabilities = card.get("capabilities")
    entries = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    if not isinstance(entries, list):
        return False
    changed = False
    for i, entry in enumerate(entries):
        if isinstance(entry, dict) and entry.get("uri") == EXTENSION_URI:
            # In the spec's order: uri, description, required, params.
            whole = {**agent_card_extension(entry.get("description")), **_others(entry)}
            if list(whole.items()) != list(entry.items()):
                entries[i] = whole
                changed = True
    return changed


def _others(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k not in ("uri", "description", "required", "params")}
