"""One-click answers: the confirm page behind an email's choice link, and its POST.

A one-choice prompt (:func:`hitl_nb._choices.one_choice`: a boolean, an enum, an
approval whose other fields are optional) is sent by email with one link per choice,
``{page}confirm/<registration>/<prompt_id>?choice=<n>``: the choice's index, never its
value (the value is read again from the stored schema when the answer is given).

- ``GET`` never answers: mail scanners and link previews fetch links. It shows the
  question as text, the choice in words, who is answering ("You are answering as
  bob") and a form that POSTs back with the host's XSRF token, under one big button
  ("Confirm: Approve: Yes"). A prompt the person may not answer, closed, answered or
  past its deadline says so instead, with no button.
- ``POST`` (the host checked the XSRF token and the login first: a missing or wrong
  token is a 403 page and nothing is asked of the gateway) gives the choice to
  :meth:`Gateway.answer <hitl_nb.gateway.Gateway.answer>` as the logged-in caller: S-3,
  consensus, deadlines and forwarding once are the gateway's, as for any answer. The
  outcome page says what became of it in the card's words: accepted, held with the
  consensus' count, answered already (409), not yours (403), deadline passed (410).

Bad input has its page: an unknown (or, on a hub, someone else's) prompt 404; a choice
that is not a number, or not one of the prompt's, 400. :class:`ConfirmDesk` is written
once for both hosts; a host only says who is asking and checks its XSRF token.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import tornado.web

from hitl_nb._choices import Choice, one_choice
from hitl_nb._words import duration, tally_words
from hitl_nb.gateway._forward import GatewayReply
from hitl_nb.gateway._gateway import Gateway, GatewayError
from hitl_nb.gateway._page import PAGE_HEADERS, document
from hitl_nb.gateway._store import StoreUnavailable
from hitl_nb.gateway._views import Caller
from hitl_nb.policy import Tally

__all__ = ["ConfirmDesk", "PageReply", "send_page"]

#: What a choice argument may be: a small decimal number.
_INDEX = re.compile(r"[0-9]{1,3}")
NOTHING_SENT = "Nothing was sent to the agent."


@dataclass(frozen=True)
class PageReply:
    """A rendered page: the HTTP ``status`` and the ``html`` (headers: :data:`PAGE_HEADERS
    <hitl_nb.gateway._page.PAGE_HEADERS>`)."""

    status: int
    html: str


def send_page(handler: tornado.web.RequestHandler, reply: PageReply) -> None:
    """Finish ``handler``'s request with ``reply``: its status, the page's headers (CSP,
    no caching) and its HTML. Both hosts' page handlers answer through this."""
    handler.set_status(reply.status)
    for name, value in PAGE_HEADERS.items():
        handler.set_header(name, value)
    handler.finish(reply.html)


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _question(text: Any) -> str:
    """The agent's words as text (S-1): escaped, its own direction, its lines kept."""
    words = str(text or "").strip() or "(the prompt has no text)"
    lines = "<br>\n".join(_esc(line) for line in words.split("\n"))
    return f'<blockquote class="hitl-page-question" dir="auto">{lines}</blockquote>'


class ConfirmDesk:
    """The confirm pages of one host: ``page`` is the answer page's path (``{page}``,
    ending in ``/``)."""

    def __init__(self, gateway: Gateway, page: str) -> None:
        self.gateway = gateway
        self.page = page

    # -- links ---------------------------------------------------------------------------

    def confirm_url(self, reg_id: str, prompt_id: str, index: int) -> str:
        """The path of one choice's confirm page."""
        ids = f"{quote(reg_id, safe='')}/{quote(prompt_id, safe='')}"
        return f"{self.page}confirm/{ids}?choice={index}"

    def prompt_url(self, reg_id: str, prompt_id: str) -> str:
        """The path of one prompt on the answer page."""
        return f"{self.page}prompt/{quote(reg_id, safe='')}/{quote(prompt_id, safe='')}"

    # -- pages ---------------------------------------------------------------------------

    def error_page(self, status: int, exc: BaseException | None, reason: str) -> PageReply:
        """A tornado error as the page's own plain page: the error's words when it has
        them (an ``HTTPError``'s message), else the status's ``reason``."""
        words = reason
        if isinstance(exc, tornado.web.HTTPError) and exc.log_message:
            words = exc.log_message % exc.args if exc.args else exc.log_message
        return self.message(status, "This page cannot be shown", words)

    def message(
        self, status: int, title: str, words: str, *, back: tuple[str, str] | None = None
    ) -> PageReply:
        """A page that says one thing: ``title`` and ``words`` (text), with a link to
        the prompt (``back``: registration and prompt ids) or to the list."""
        link = self.prompt_url(*back) if back else self.page
        label = "Open the prompt on the answer page" if back else "See the prompts you may answer"
        body = (
            f"<h1>{_esc(title)}</h1>\n<p>{_esc(words)}</p>\n"
            f'<p><a href="{_esc(link)}">{label}</a></p>'
        )
        return PageReply(status, document(self.page, title, body))

    def xsrf_refused(self) -> PageReply:
        """A POST without the page's XSRF token, or with a wrong one: nothing sent."""
        return self.message(
            403,
            "This confirmation was not accepted",
            "The form's security token was missing or did not match this browser's "
            "session, so the answer was not taken. " + NOTHING_SENT + " Open the link "
            "from your message again and press Confirm.",
        )

    def login_needed(self) -> PageReply:
        """A POST from a browser that is not logged in (a GET is sent to the login)."""
        return self.message(
            401,
            "Sign in first",
            "You are not signed in, so the answer was not taken. "
            + NOTHING_SENT
            + " Open the link from your message again: it asks you to sign in.",
        )

    @staticmethod
    def _index(choice: str | None) -> int | None:
        if choice is None or not _INDEX.fullmatch(choice):
            return None
        return int(choice)

    def _bad_choice(self, choice: str | None, back: tuple[str, str]) -> PageReply:
        given = "no choice" if choice is None else f"the choice {choice[:20]!r}"
        return self.message(
            400,
            "This link is not right",
            f"The link gives {given}, which is not a choice's number. {NOTHING_SENT}",
            back=back,
        )

    def _not_a_choice(self, index: int, choices: tuple[Choice, ...], back: Any) -> PageReply:
        if not choices:
            words = "This prompt is not answered with one click: answer it on the page."
        else:
            words = (
                f"The link gives choice {index}, but the prompt has {len(choices)} "
                f"(0 to {len(choices) - 1})."
            )
        return self.message(400, "This link is not right", f"{words} {NOTHING_SENT}", back=back)

    async def ask(
        self, caller: Caller, reg_id: str, prompt_id: str, choice: str | None, xsrf: str
    ) -> PageReply:
        """``GET``: the confirm page (or why there is none). Never answers."""
        back = (reg_id, prompt_id)
        index = self._index(choice)
        if index is None:
            return self._bad_choice(choice, back)
        try:
            reg = await self.gateway.registration(reg_id, caller)
        except GatewayError as exc:
            return self._refused(exc, None)
        except StoreUnavailable:
            return self._unavailable(back)
        view = next((p for p in reg.get("prompts", []) if p.get("prompt_id") == prompt_id), None)
        if view is None:
            return self.message(
                404,
                "No such prompt",
                f"This task has no prompt {prompt_id!r} you can see.",
            )
        choices = one_choice(view.get("response_schema"))
        if index >= len(choices):
            return self._not_a_choice(index, choices, back)
        closed = self._closed(view)
        if closed is not None:
            return closed
        if not view.get("may_answer"):
            why = view.get("why_not") or "the prompt names who may answer it"
            return self.message(
                403, "This prompt is not yours to answer", f"{why}. {NOTHING_SENT}", back=back
            )
        return PageReply(200, self._confirm_page(caller, view, choices[index], index, xsrf))

    def _closed(self, view: dict[str, Any]) -> PageReply | None:
        back = (view["registration"], view["prompt_id"])
        state = view.get("state")
        if state in ("forwarded", "forwarding"):
            who = view.get("forwarded_for")
            by = f" by {', '.join(who)}" if who else ""
            return self.message(
                409,
                "Already answered",
                f"This prompt was answered already{by}; it takes no other answer.",
                back=back,
            )
        if state == "expired" or view.get("deadline_passed"):
            return self.message(
                410,
                "The deadline has passed",
                f"This prompt's deadline ({view.get('deadline')}) has passed; it takes no "
                "answer any more.",
                back=back,
            )
        if state == "closed":
            return self.message(
                409,
                "This prompt is closed",
                "The agent no longer asks this question (its task moved on or ended).",
                back=back,
            )
        return None

    def _confirm_page(
        self, caller: Caller, view: dict[str, Any], choice: Choice, index: int, xsrf: str
    ) -> str:
        reg_id, prompt_id = view["registration"], view["prompt_id"]
        parts = [
            "<h1>Confirm your answer</h1>",
            f'<p class="hitl-page-who">You are answering as <strong>{_esc(caller.display)}'
            "</strong>.</p>",
            _question(view.get("prompt")),
            f'<p class="hitl-page-choice">Your answer: <strong>{_esc(choice.label)}</strong></p>',
        ]
        needed = int((view.get("policy") or {}).get("needed") or 1)
        if needed > 1:
            count = Tally(
                int(view.get("agreeing") or 0),
                needed,
                int(view.get("answers") or 0),
                bool(view.get("disagreement")),
            )
            parts.append(f"<p>It needs {needed} people to agree: {_esc(tally_words(count))}.</p>")
        left = view.get("seconds_left")
        if isinstance(left, (int, float)):
            parts.append(
                f"<p>Answer by {_esc(view.get('deadline'))} "
                f"({_esc(duration(left, 'rough'))} left).</p>"
            )
        action = _esc(self.confirm_url(reg_id, prompt_id, index))
        parts += [
            f'<form method="post" action="{action}">',
            f'<input type="hidden" name="_xsrf" value="{_esc(xsrf)}">',
            f'<button type="submit" class="hitl-page-confirm">Confirm: {_esc(choice.label)}'
            "</button>",
            "</form>",
            "<p>Nothing is sent until you press Confirm. "
            f'<a href="{_esc(self.prompt_url(reg_id, prompt_id))}">Answer differently on the '
            "answer page</a></p>",
        ]
        return document(self.page, "Confirm your answer", "\n".join(parts))

    async def confirm(
        self, caller: Caller, reg_id: str, prompt_id: str, choice: str | None
    ) -> PageReply:
        """``POST`` (the host checked the login and the XSRF token): the chosen answer,
        given to the gateway as ``caller``; the page says what became of it."""
        back = (reg_id, prompt_id)
        index = self._index(choice)
        if index is None:
            return self._bad_choice(choice, back)
        try:
            schema = await self.gateway.response_schema(reg_id, prompt_id)
            choices = one_choice(schema)
            if index >= len(choices):
                return self._not_a_choice(index, choices, back)
            reply = await self.gateway.answer(reg_id, prompt_id, caller, choices[index].payload)
        except GatewayError as exc:
            return self._refused(exc, back)
        except StoreUnavailable:
            return self._unavailable(back)
        return self._outcome(caller, reply, choices[index], back)

    def _outcome(
        self, caller: Caller, reply: GatewayReply, choice: Choice, back: tuple[str, str]
    ) -> PageReply:
        body = reply.body
        status = body.get("status")
        you = f"You answered \u201c{choice.label}\u201d as {caller.display}."
        if status == "collecting":
            count = Tally(
                int(body.get("agreeing") or 0),
                int(body.get("needed") or 1),
                int(body.get("answers") or 0),
                bool(body.get("disagreement")),
            )
            words = (
                f"{you} Your answer is counted and held until enough people agree: "
                f"{tally_words(count)}."
            )
            return self.message(reply.status, "Answer counted", words, back=back)
        if status == "forwarded":
            who = body.get("responders") or []
            agreed = f" (agreed by {', '.join(who)})" if len(who) > 1 else ""
            words = f"{you} The agent accepted the answer{agreed}."
            return self.message(reply.status, "Answer accepted", words, back=back)
        if status == "forwarding":
            words = (
                f"{you} The gateway took the answer and makes sure it reaches the agent "
                "once; the agent has not confirmed it yet."
            )
            return self.message(reply.status, "Answer accepted", words, back=back)
        said = str(body.get("message") or "the agent did not take the answer")
        if status == "closed":
            return self.message(reply.status, "Already answered", f"{you} {said}.", back=back)
        return self.message(
            reply.status, "The agent did not take the answer", f"{you} {said}.", back=back
        )

    def _refused(self, exc: GatewayError, back: tuple[str, str] | None) -> PageReply:
        said = exc.message[:1].upper() + exc.message[1:]
        if not said.endswith("."):
            said += "."
        titles = {
            400: "This answer was not taken",
            403: "This prompt is not yours to answer",
            404: "No such prompt",
            409: "Already answered",
            410: "The deadline has passed",
            422: "This answer was not taken",
        }
        title = titles.get(exc.status, "This answer was not taken")
        if exc.status == 409 and "closed" in exc.message:
            title = "This prompt is closed"
        if exc.status == 404:
            back = None  # nothing to go back to
        tail = "" if "nothing was sent" in said.lower() else f" {NOTHING_SENT}"
        return self.message(exc.status, title, said + tail, back=back)

    def _unavailable(self, back: tuple[str, str]) -> PageReply:
        return self.message(
            503,
            "Try again in a moment",
            "The gateway cannot reach its database just now. An answer sent again counts once.",
            back=back,
        )
