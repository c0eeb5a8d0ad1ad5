"""Microsoft Teams: a Workflows webhook (or an incoming webhook) that takes an Adaptive
Card. The channel kind ``teams``, given as ``"teams:https://..."``.

The POST is a message with one card attachment (Adaptive Card 1.4)::

    {"type": "message",
     "attachments": [{"contentType": "application/vnd.microsoft.card.adaptive",
                      "contentUrl": null,
                      "content": {"type": "AdaptiveCard", "version": "1.4", ...}}]}

The card shows the message's subject as its title, then its paragraphs: who asks and
who may answer, the question set apart, how many answers a consensus needs, the
deadline; a digest's lines, each with its "open it"; and one button, "Answer" (an
outcome's "See it", a digest's "See them all"), that opens the message's link
(:mod:`hitl_nb.notify._links`). The paragraph that only held that link is the button.

The agent's words (spec S-1): every piece of text is a ``TextRun`` in a
``RichTextBlock``, which reads no markdown (a ``TextBlock`` reads bold, italics, lists
and ``[label](url)`` links), so nothing the agent writes can become markup. They are
also NFKC-normalised, cleaned of control and format characters (bidi overrides,
zero-width joiners), cut, and defanged as for Slack (:func:`hitl_nb.notify._text.defang`:
no live link, address or ``@mention``), and a zero-width space is put after each ``<``
before a letter, ``/`` or ``!`` (no ``<at>`` mention, no tag) and between two ``{``
(no ``{{DATE(...)}}`` a renderer expands). The only links are ours: the button and a
digest line's "open it".
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from hitl_nb.notify import _text
from hitl_nb.notify._kind import ChannelKind
from hitl_nb.notify._messages import Link, Message, Piece, Quote
from hitl_nb.notify._targets import shown_url

__all__ = ["KIND", "TeamsTarget", "card", "words"]

CARD_TYPE = "application/vnd.microsoft.card.adaptive"
CARD_VERSION = "1.4"
_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
# What a Teams client could read as a tag or mention (<at>, </at>, <b>, <!-- -->) or a
# card's text function ({{DATE(...)}}): broken by a zero-width space after its first
# character.
_MARKUP = re.compile(r"<(?=[A-Za-z/!?])|\{(?=\{)")
_BUTTON = {
    "opened": "Answer",
    "reminder": "Answer",
    "outcome": "See it",
    "escalation": "See it",
    "digest": "See them all",
}


@dataclass(frozen=True)
class TeamsTarget:
    """A Teams Workflows webhook (or incoming webhook). ``admin``: the administrator
    gave it."""

    url: str
    admin: bool = False

    def __repr__(self) -> str:
        # A workflow's URL carries its signature (``sig=``): never shown whole.
        return f"TeamsTarget({shown_url(self.url)!r}, admin={self.admin})"


def words(text: str, limit: int) -> str:
    """The agent's ``text`` for a card's ``TextRun``: cut to ``limit``, no control or
    format character, no link, mention, tag or text function (the module docstring)."""
    plain = _text.defang(_text.clean(unicodedata.normalize("NFKC", str(text)), limit))
    return _MARKUP.sub(lambda m: m.group(0) + _text.ZWSP, plain)


def _run(text: str, **style: Any) -> dict[str, Any]:
    return {"type": "TextRun", "text": text, **style}


def _inline(piece: Piece) -> dict[str, Any]:
    if isinstance(piece, Quote):
        return _run(" ".join(words(piece.text, piece.limit).split()))
    if isinstance(piece, Link):  # ours; a digest's line ("open it")
        label = piece.label or "open it"
        return _run(label, selectAction={"type": "Action.OpenUrl", "url": piece.url})
    return _run(piece)


def _block(runs: list[dict[str, Any]]) -> dict[str, Any]:
    merged: list[dict[str, Any]] = []
    for run in runs:  # plain runs side by side are one
        last = merged[-1] if merged else None
        if last is not None and "selectAction" not in last and "selectAction" not in run:
            if {**last, "text": ""} == {**run, "text": ""}:
                merged[-1] = {**last, "text": last["text"] + run["text"]}
                continue
        merged.append(run)
    return {"type": "RichTextBlock", "inlines": merged}


def _paragraph(pieces: tuple[Piece, ...]) -> dict[str, Any]:
    if len(pieces) == 1 and isinstance(pieces[0], Quote) and pieces[0].block:
        quote = pieces[0]  # the question: set apart, its lines kept
        lines = words(quote.text, quote.limit).split("\n")
        text = "\n".join(" ".join(line.split()) for line in lines)
        return {"type": "Container", "style": "emphasis", "items": [_block([_run(text)])]}
    return _block([_inline(piece) for piece in pieces])


def _only_the_link(pieces: tuple[Piece, ...], link: str) -> bool:
    return isinstance(pieces[-1], Link) and pieces[-1].url == link and pieces[-1].label is None


def card(message: Message) -> dict[str, Any]:
    """The Adaptive Card for ``message`` (no I/O)."""
    title = [{**_inline(piece), "weight": "Bolder", "size": "Medium"} for piece in message.subject]
    body = [_block(title)]
    body += [_paragraph(p) for p in message.paragraphs if not _only_the_link(p, message.link)]
    return {
        "$schema": _SCHEMA,
        "type": "AdaptiveCard",
        "version": CARD_VERSION,
        "body": body,
        "actions": [
            {
                "type": "Action.OpenUrl",
                "title": _BUTTON.get(message.kind, "Open"),
                "url": message.link,
            }
        ],
        "msteams": {"width": "Full"},
    }


def render(message: Message, target: TeamsTarget, now: float) -> tuple[bytes, dict[str, str]]:
    """The message the workflow posts: one Adaptive Card attachment."""
    document = {
        "type": "message",
        "attachments": [{"contentType": CARD_TYPE, "contentUrl": None, "content": card(message)}],
    }
    return json.dumps(document, ensure_ascii=False).encode("utf-8"), {}


KIND = ChannelKind(
    "teams",
    TeamsTarget,
    "a Microsoft Teams workflow",
    from_url=TeamsTarget,
    render=render,
)
