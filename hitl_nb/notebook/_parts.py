"""What the agent says, drawn for a person: message text, artifacts, files.

Text stays text (escaped, S-1), data is shown as indented JSON, a file is a link (only
``http``/``https`` URLs become links; anything else is shown as text), inline bytes are
named with their size.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import urlsplit

from hitl_nb.a2a import Artifact, Message, Part

from ._style import MUTED, esc

__all__ = ["artifacts_html", "artifacts_text", "message_text", "parts_html", "part_text"]

#: Longest text drawn per part (the rest is cut with a note).
MAX_PART_CHARS = 20_000


def _cut(text: str) -> str:
    if len(text) <= MAX_PART_CHARS:
        return text
    return text[:MAX_PART_CHARS] + f"\n… ({len(text) - MAX_PART_CHARS} more characters)"


def _json(data: object) -> str:
    try:
        return json.dumps(data, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(data)


def part_text(part: Part) -> str:
    """One part as plain text."""
    if part.text is not None:
        return _cut(part.text)
    if part.url is not None:
        name = part.filename or "file"
        return f"{name}: {part.url}"
    if part.raw is not None:
        return f"{part.filename or 'file'} ({len(part.raw)} bytes{_media(part)})"
    if part.has_data or part.data is not None:
        return _cut(_json(part.data))
    return ""


def _media(part: Part) -> str:
    return f", {part.media_type}" if part.media_type else ""


def _safe_url(url: str) -> bool:
    try:
        return urlsplit(url).scheme in ("http", "https")
    except ValueError:
        return False


def _part_html(part: Part) -> str:
    if part.text is not None:
        return f'<div style="white-space:pre-wrap">{esc(_cut(part.text))}</div>'
    if part.url is not None:
        name = esc(part.filename or part.url)
        if _safe_url(part.url):
            return (
                f'<div>📎 <a href="{esc(part.url)}" target="_blank" rel="noopener noreferrer">'
                f"{name}</a>{esc(_media(part))}</div>"
            )
        return f"<div>📎 {name}: <code>{esc(part.url)}</code></div>"
    if part.raw is not None:
        return f"<div>📎 {esc(part_text(part))}</div>"
    if part.has_data or part.data is not None:
        return f"<pre>{esc(_cut(_json(part.data)))}</pre>"
    return ""


def parts_html(parts: Iterable[Part]) -> str:
    """Parts as HTML, one block each."""
    return "".join(_part_html(p) for p in parts)


def message_text(message: Message | None) -> str:
    """A message's parts as plain text, joined by newlines ("" for none)."""
    if message is None:
        return ""
    return "\n".join(t for t in (part_text(p) for p in message.parts) if t)


def artifacts_html(artifacts: Iterable[Artifact]) -> str:
    """Each artifact with its name and parts."""
    out = []
    for artifact in artifacts:
        title = artifact.name or "artifact"
        desc = f" — {esc(artifact.description)}" if artifact.description else ""
        out.append(
            f'<div class="hitl-artifact"><div style="color:{MUTED}">{esc(title)}{desc}</div>'
            f"{parts_html(artifact.parts)}</div>"
        )
    return "".join(out)


def artifacts_text(artifacts: Iterable[Artifact]) -> list[str]:
    """One ``artifact: ...`` line per part."""
    return [
        f"artifact: {part_text(p) if p.text is not None or p.url or p.raw else _compact(p)}"
        for a in artifacts
        for p in a.parts
    ]


def _compact(part: Part) -> str:
    try:
        return json.dumps(part.data, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(part.data)
