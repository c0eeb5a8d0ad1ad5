"""The agent's words, made safe for each place a notification puts them (spec S-1).

A prompt's text, and the names that come with it, are the agent's: they may hold
control characters, a line break meant to start an email header, a Slack mention
(``<!channel>``), a Mattermost one (``@here``), a link dressed as something else
(``<https://evil|click>``, ``[click](https://evil)``), or a novel. Every rendering of a
notification passes them through here, and only the notification's own words and its
one link (built by :mod:`hitl_nb.notify._links`) reach a reader unchanged:

- :func:`clean`: plain text: control and format characters removed (newlines kept,
  at most one blank line in a row), lone surrogates removed (they cannot be encoded),
  cut to a length;
- :func:`one_line`: :func:`clean`, then every run of white space one space: what an
  email subject may hold (no CR or LF can reach a header);
- :func:`defang`: no live link or mention: a zero-width space after each ``://``,
  after a dot or an ``@`` or ``~`` before a letter or digit, and after each ``]``, so
  no mail or chat client turns the agent's ``https://evil.example`` into a link, its
  ``bob@example.org`` into a mailto or its ``@here`` into a mention; the text reads
  the same;
- :func:`chat`: for Slack and Mattermost: NFKC (a fullwidth ``＠here`` becomes
  ``@here``, then defanged), :func:`clean`, :func:`defang`, and Slack's three escapes
  (``&``, ``<``, ``>``), after which no ``<!channel>`` or ``<url|label>`` can form;
- :func:`html`: for an HTML part: :func:`clean`, :func:`defang`, escaped.

Lengths are code points. A cut ends with an ellipsis (…) within the limit.
"""

from __future__ import annotations

import html as _html
import re
import unicodedata

__all__ = ["ZWSP", "chat", "clean", "cut", "defang", "html", "one_line"]

#: ZERO WIDTH SPACE: invisible, and it ends a link or a mention where it stands.
ZWSP = "\u200b"

_ELLIPSIS = "…"
# Unicode's own line ends, and the old ones, become a newline.
_LINE_ENDS = re.compile("\r\n|[\r\x0b\x0c\x85\u2028\u2029]")
_BLANK_RUNS = re.compile(r"\n[ \t]*(?:\n[ \t]*)+\n")
# Cc: controls; Cf: format characters (bidi overrides, zero-width joiners: text that
# reads differently than it is); Cs: lone surrogates (JSON can carry them, UTF-8 cannot).
_DROPPED = frozenset({"Cc", "Cf", "Cs"})


def cut(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` code points, else its start and an ellipsis."""
    if limit < 1:
        raise ValueError(f"a text limit must be at least 1, got {limit}")
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + _ELLIPSIS


def clean(text: str, limit: int) -> str:
    """Plain text: control and format characters removed (newlines kept, tabs as
    spaces, at most one blank line in a row), trimmed, cut to ``limit``."""
    text = _LINE_ENDS.sub("\n", str(text)).replace("\t", " ")
    kept = "".join(ch for ch in text if ch == "\n" or unicodedata.category(ch) not in _DROPPED)
    kept = "\n".join(line.rstrip() for line in kept.split("\n"))
    kept = _BLANK_RUNS.sub("\n\n", kept).strip()
    return cut(kept, limit)


def one_line(text: str, limit: int) -> str:
    """One line of plain text (every run of white space one space), cut to ``limit``:
    what an email subject or a list item may hold."""
    return cut(" ".join(clean(text, max(limit * 4, limit)).split()), limit)


def _wordy(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def defang(text: str) -> str:
    """``text`` with no live link or mention (see the module docstring); it reads the
    same, and is at most twice as long."""
    out: list[str] = []
    end = len(text)
    for i, ch in enumerate(text):
        out.append(ch)
        nxt = text[i + 1] if i + 1 < end else ""
        if (
            (ch in "@~." and _wordy(nxt))
            or ch == "]"
            or (ch == ":" and text.startswith("//", i + 1))
        ):
            out.append(ZWSP)
    return "".join(out)


def chat(text: str, limit: int) -> str:
    """The agent's ``text`` for a Slack-compatible webhook (Slack, Mattermost): cut to
    ``limit`` before escaping, no mention, no link, no control sequence."""
    plain = defang(clean(unicodedata.normalize("NFKC", str(text)), limit))
    return plain.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def html(text: str, limit: int) -> str:
    """The agent's ``text`` for an HTML part: cut, defanged and escaped."""
    return _html.escape(defang(clean(text, limit)), quote=True)
