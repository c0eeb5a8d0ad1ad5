"""What a notification says, and how each channel shows it.

:func:`compose` makes one :class:`Message` from a recipient's due notes: about one
note, a message of its kind (a prompt opened, a reminder, an outcome); about several,
a digest ("3 new questions for you"). A message is built from pieces: the service's
own words (plain ``str``), the agent's (:class:`Quote`: a prompt's text, the names and
host that come with it) and the one :class:`Link`. Each channel renders the pieces its
own way, and the agent's words always through :mod:`hitl_nb.notify._text`:

- :meth:`Message.subject_line`: one line, cut (an email's ``Subject``);
- :meth:`Message.plain`: the text/plain body;
- :meth:`Message.html`: an HTML body, everything escaped, the one link a link;
- :meth:`Message.chat`: Slack-compatible text (no mention, no link but ours);
- :meth:`Message.to_json`: the generic webhook's document;
- a Teams card: :mod:`hitl_nb.notify._teams` walks the pieces itself (each channel
  kind's module says how a message looks there).

Words are plain: what happened, where to answer, by when. A message never holds an
answer, a response schema or a token.
"""

from __future__ import annotations

import hashlib
import html as _html
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

from hitl_nb._words import duration, needs_words, plural
from hitl_nb.notify import _text
from hitl_nb.notify._links import AnswerLinks
from hitl_nb.notify._notes import Batch, Note, PromptFacts, recipient_parts

__all__ = ["Item", "Link", "Message", "Quote", "compose", "digest_key"]

#: The longest a subject may be (code points).
SUBJECT_LIMIT = 140
#: The longest a prompt's text may be in a message about it, and in a digest's line.
QUESTION_LIMIT = 1500
LINE_LIMIT = 120
#: The longest a choice's words may be in a one-click line.
CHOICE_LIMIT = 200
NAME_LIMIT = 80


@dataclass(frozen=True)
class Quote:
    """The agent's words (or a name or host it brought), at most ``limit`` long;
    ``block``: a paragraph of its own (the prompt's text), shown set apart."""

    text: str
    limit: int = NAME_LIMIT
    block: bool = False


@dataclass(frozen=True)
class Link:
    """A link of ours (built by :class:`AnswerLinks`); ``label``: what the HTML part
    shows instead of the address (plain text and chat show the address)."""

    url: str
    label: str | None = None


Piece = str | Quote | Link


@dataclass(frozen=True)
class Item:
    """One prompt a message tells of (the JSON webhook lists them)."""

    kind: str
    facts: PromptFacts
    link: str

    def to_json(self) -> dict[str, Any]:
        """The item in the webhook's document (the question as plain text)."""
        f = self.facts
        return {
            "kind": self.kind,
            "registration": f.reg_id,
            "prompt_id": f.prompt_id,
            "agent_url": f.agent_url,
            "question": _text.clean(f.question, QUESTION_LIMIT),
            "deadline": _iso(f.deadline),
            "needed": f.needed,
            "outcome": f.outcome,
            "link": self.link,
        }


@dataclass(frozen=True)
class Message:
    """One message to one recipient. ``key``: stable across retries (the email's
    ``Message-ID``, the webhook's idempotency key); ``kind``: ``opened``,
    ``reminder``, ``outcome`` or ``digest``; ``total``: how many notes it tells of."""

    key: str
    recipient: str
    kind: str
    subject: tuple[Piece, ...]
    paragraphs: tuple[tuple[Piece, ...], ...]
    link: str
    items: tuple[Item, ...]
    total: int = 1

    def subject_line(self, limit: int = SUBJECT_LIMIT) -> str:
        """The subject on one line: no CR, LF or control character, at most ``limit``."""
        out = []
        for piece in self.subject:
            if isinstance(piece, Quote):
                out.append(_text.defang(_text.one_line(piece.text, piece.limit)))
            elif isinstance(piece, Link):
                out.append(piece.url)
            else:
                out.append(piece)
        # The pieces are clean already; cleaning again would take the zero-width
        # spaces that keep the agent's links dead.
        return _text.cut(" ".join("".join(out).split()), limit)

    def plain(self) -> str:
        """The text/plain body."""
        return "\n\n".join(_join(p, _plain_piece) for p in self.paragraphs) + "\n"

    def html(self) -> str:
        """The text/html body: every piece escaped, the link a link."""
        body = "".join(
            # a block quote is a block of its own, never inside a <p>
            f"{_join(p, _html_piece)}\n" if _is_block(p) else f"<p>{_join(p, _html_piece)}</p>\n"
            for p in self.paragraphs
        )
        head = '<!DOCTYPE html>\n<html><body style="font-family: sans-serif">\n'
        return f"{head}{body}</body></html>\n"

    def chat(self) -> str:
        """Slack-compatible text (Slack, Mattermost): no mention and no link but ours."""
        return "\n\n".join(_join(p, _chat_piece) for p in self.paragraphs)

    def to_json(self) -> dict[str, Any]:
        """The generic JSON webhook's document."""
        kind, name = recipient_parts(self.recipient)
        return {
            "type": "hitl-nb.notification",
            "id": self.key,
            "kind": self.kind,
            "recipient": {"type": "person" if kind == "user" else "team", "name": name},
            "subject": self.subject_line(),
            "text": self.plain(),
            "link": self.link,
            "total": self.total,
            "items": [item.to_json() for item in self.items],
        }

    def to_json_bytes(self) -> bytes:
        """:meth:`to_json` as the request body (UTF-8, compact)."""
        return json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":")).encode()


def _is_block(pieces: Sequence[Piece]) -> bool:
    return len(pieces) == 1 and isinstance(pieces[0], Quote) and pieces[0].block


def _join(pieces: Sequence[Piece], render: Any) -> str:
    return "".join(render(piece) for piece in pieces)


def _plain_piece(piece: Piece) -> str:
    if isinstance(piece, Quote):
        text = _text.defang(_text.clean(piece.text, piece.limit))
        if piece.block:
            return "\n".join("    " + line if line else "" for line in text.split("\n"))
        return " ".join(text.split())
    if isinstance(piece, Link):
        return piece.url
    return piece


def _html_piece(piece: Piece) -> str:
    if isinstance(piece, Quote):
        text = _text.html(piece.text, piece.limit)
        if piece.block:
            return f'<blockquote style="white-space: pre-wrap">{text}</blockquote>'
        return " ".join(text.split())
    if isinstance(piece, Link):
        url = _html.escape(piece.url, quote=True)
        return f'<a href="{url}">{_html.escape(piece.label) if piece.label else url}</a>'
    return _html.escape(piece, quote=True)


def _chat_piece(piece: Piece) -> str:
    if isinstance(piece, Quote):
        text = _text.chat(piece.text, piece.limit)
        if piece.block:
            return "\n".join("> " + line for line in text.split("\n"))
        return " ".join(text.split())
    if isinstance(piece, Link):
        return piece.url  # ours, built from the host's address and ids: left live
    return piece.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# -- time in words ---------------------------------------------------------------------


def _iso(at: float | None) -> str | None:
    if at is None:
        return None
    try:
        return datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return None


def when(deadline: float, now: float) -> str:
    """A deadline in words: ``2026-05-01 14:05 UTC (in 30 minutes)``."""
    try:
        at = datetime.fromtimestamp(deadline, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, OSError, ValueError):
        return "at a time too far away to show"
    if deadline <= now:
        return f"{at} (passed)"
    return f"{at} (in {duration(deadline - now, 'rough')})"


# -- the messages ----------------------------------------------------------------------


def _host(agent_url: str) -> str:
    try:
        parts = urlsplit(agent_url)
        host = parts.hostname or ""
        return f"{host}:{parts.port}" if parts.port else host
    except ValueError:
        return ""


def _who_asks(f: PromptFacts) -> tuple[Piece, ...]:
    host = _host(f.agent_url)
    at: tuple[Piece, ...] = (" at ", Quote(host)) if host else ()
    if f.registered_by:
        return (Quote(f.registered_by), "'s agent", *at)
    return ("An agent", *at)


def _needs(f: PromptFacts, for_team: bool) -> tuple[Piece, ...] | None:
    said = needs_words(f.needed, f.answers, still=for_team)
    return (said,) if said else None


def _deadline(f: PromptFacts, now: float, lead: str) -> tuple[Piece, ...] | None:
    if f.deadline is None:
        return None
    return (f"{lead} {when(f.deadline, now)}.",)


def _one_click(f: PromptFacts, links: AnswerLinks) -> list[tuple[Piece, ...] | None]:
    """A one-choice prompt's links, one per choice, each to its confirm page (none when
    links go to JupyterLab, or the prompt asks for more than one pick)."""
    made = [(label, links.choice(f.reg_id, f.prompt_id, i)) for i, label in enumerate(f.choices)]
    if not made or any(url is None for _, url in made):
        return []
    lines: list[tuple[Piece, ...] | None] = [
        ("Or answer with one click (a page shows your choice and asks you to confirm):",)
    ]
    for label, url in made:
        assert url is not None
        lines.append(("- ", Quote(label, CHOICE_LIMIT), ": ", Link(url, "answer this")))
    return lines


def _single(note: Note, links: AnswerLinks, now: float) -> Message:
    f = note.facts
    for_team = recipient_parts(note.recipient)[0] == "team"
    link = links.prompt(f.reg_id, f.prompt_id)
    shown = f.question if _text.clean(f.question, 10) else "(the prompt has no text)"
    question = Quote(shown, QUESTION_LIMIT, block=True)
    short = Quote(f.question, SUBJECT_LIMIT)
    whom = "anyone on the team" if for_team else "you"
    paragraphs: list[tuple[Piece, ...] | None]
    if note.kind == "opened":
        subject: tuple[Piece, ...] = (
            "Question for the team: " if for_team else "Question for you: ",
            short,
        )
        paragraphs = [
            (*_who_asks(f), f" asks {whom}:"),
            (question,),
            _needs(f, for_team),
            _deadline(f, now, "Answer by"),
            ("Answer it here: ", Link(link)),
            *_one_click(f, links),
        ]
    elif note.kind == "reminder":
        subject = ("Reminder: ", short)
        waits = "still waits for an answer from the team" if for_team else "still waits for you"
        paragraphs = [
            ("A question from ", *_lower(_who_asks(f)), f" {waits}:"),
            (question,),
            _needs(f, for_team),
            _deadline(f, now, "It closes"),
            ("Answer it here: ", Link(link)),
            *_one_click(f, links),
        ]
    elif note.kind == "escalation":
        subject = ("Escalated: ", short)
        # An escalation at the deadline itself (``before`` 0) is read after it.
        passed = f.deadline is not None and f.deadline <= now
        paragraphs = [
            ("A question from ", *_lower(_who_asks(f)), " has no answer yet:"),
            (question,),
            _deadline(f, now, "It closed" if passed else "It closes"),
            (
                "You are told because its task's registration escalates unanswered "
                "questions; who may answer it is unchanged.",
            ),
            ("See it here: ", Link(link)),
        ]
    else:
        subject, said = _outcome_words(f, now)
        paragraphs = [said, (question,), ("See it here: ", Link(link))]
    return Message(
        key=note.key,
        recipient=note.recipient,
        kind=note.kind,
        subject=subject,
        paragraphs=tuple(p for p in paragraphs if p),
        link=link,
        items=(Item(note.kind, f, link),),
    )


def _lower(pieces: tuple[Piece, ...]) -> tuple[Piece, ...]:
    first = pieces[0]
    if isinstance(first, str) and first[:1].isupper():
        return (first[:1].lower() + first[1:], *pieces[1:])
    return pieces


def _outcome_words(f: PromptFacts, now: float) -> tuple[tuple[Piece, ...], tuple[Piece, ...]]:
    short = Quote(f.question, SUBJECT_LIMIT)
    names = Quote(", ".join(f.responders), NAME_LIMIT * 2)
    if f.outcome == "forwarded":
        by: tuple[Piece, ...] = (" by ", names) if f.responders else ()
        return ("Answered: ", short), (
            "Your agent's question was answered",
            *by,
            ", and the agent accepted the answer:",
        )
    if f.outcome == "refused":
        given: tuple[Piece, ...] = (" given by ", names) if f.responders else ()
        why: tuple[Piece, ...] = (" It said: ", Quote(f.detail, 300)) if f.detail else ()
        return ("The agent refused the answer: ", short), (
            "Your agent refused the answer",
            *given,
            " to its question.",
            *why,
        )
    closed = f" before its deadline, {when(f.deadline, now)}" if f.deadline is not None else ""
    return ("Expired: ", short), (f"Nobody answered your agent's question{closed}:",)


_DIGEST_WORDS = {
    "opened": ("new question", "new questions"),
    "reminder": ("reminder", "reminders"),
    "outcome": ("outcome of your agents' questions", "outcomes of your agents' questions"),
    "escalation": ("escalated question", "escalated questions"),
}
_LINE_LEAD = {"opened": "New: ", "reminder": "Closing soon: ", "escalation": "Escalated: "}
_OUTCOME_LEAD = {"forwarded": "Answered: ", "refused": "Refused by the agent: "}


def digest_key(recipient: str, notes: Sequence[Note], total: int) -> str:
    """A digest's stable key: the same notes to the same recipient give the same key
    (a retry), anything more or less another."""
    text = json.dumps([recipient, sorted(n.key for n in notes), total])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _digest(
    batch: Batch, notes: Sequence[Note], total: int, links: AnswerLinks, now: float
) -> Message:
    for_team = recipient_parts(batch.recipient)[0] == "team"
    counts = dict(batch.counts)
    if sum(counts.values()) != total:  # an outbox that does not count: what is listed
        counts = {}
        for note in notes:
            counts[note.kind] = counts.get(note.kind, 0) + 1
    told = ", ".join(
        plural(counts[kind], *_DIGEST_WORDS[kind]) for kind in _DIGEST_WORDS if counts.get(kind)
    )
    subject: tuple[Piece, ...] = (f"{told} {'for the team' if for_team else 'for you'}",)
    paragraphs: list[tuple[Piece, ...]] = [
        (f"Since the last message, {told} came {'for the team' if for_team else 'for you'}:",)
    ]
    items = []
    for note in notes:
        f = note.facts
        link = links.prompt(f.reg_id, f.prompt_id)
        items.append(Item(note.kind, f, link))
        if note.kind == "outcome":
            lead = _OUTCOME_LEAD.get(f.outcome or "", "Expired: ")
        else:
            lead = _LINE_LEAD[note.kind]
        due = (
            f" (closes {when(f.deadline, now)})"
            if f.deadline is not None and note.kind != "outcome"
            else ""
        )
        paragraphs.append(
            ("- ", lead, Quote(f.question, LINE_LIMIT), due, " ", Link(link, "open it"))
        )
    if total > len(notes):
        paragraphs.append((f"... and {total - len(notes)} more.",))
    paragraphs.append(("See them all here: ", Link(links.inbox())))
    return Message(
        key=digest_key(batch.recipient, notes, total),
        recipient=batch.recipient,
        kind="digest",
        subject=subject,
        paragraphs=tuple(paragraphs),
        link=links.inbox(),
        items=tuple(items),
        total=total,
    )


def compose(batch: Batch, links: AnswerLinks, now: float) -> Message:
    """The message for ``batch``: about one note, a message of its kind; about more, a
    digest that lists those the batch lists and counts the rest."""
    if not batch.notes:
        raise ValueError("a message tells of at least one note")
    total = max(batch.total, len(batch.notes))
    if total == 1:
        return _single(batch.notes[0], links, now)
    return _digest(batch, batch.notes, total, links, now)
