"""What became of an answer (:class:`Outcome`), and every word a person reads about it.

Each sentence a card says about an answer is written here, once, by situation:

- not sent, checked here first: :func:`cannot_hold`, :func:`does_not_match`,
  :func:`takes_no_answer`, :func:`closed_already`, :func:`empty_text`, the responder
  policy's :func:`refused` and :func:`held` (S-3), :func:`gateway_refusal`;
- the agent's reply: :func:`accepted_words`, :func:`settled`, :func:`not_continued`,
  :func:`refused_by_agent` (422), :func:`undelivered`, :func:`outcome_unknown`;
- a prompt closed without our answer, or a 409: :func:`closing` tells ``expired``,
  ``closed`` and ``conflict`` apart by the task (the one home of that rule);
  :func:`consensus_closed` for a consensus answer the gateway held;
  :func:`answered_elsewhere` for a prompt the gateway forwarded an answer to from
  elsewhere (JupyterLab's prompts panel, another card);
- a responder gateway (a Jupyter server's, or the hub's): :func:`gateway_verdict` turns
  its reply into a :class:`Verdict`, the type every sender returns (:mod:`._senders`);
- a consensus' count: :func:`tally_words`, wherever it is shown (written, with every
  duration in words, in :mod:`hitl_nb._words`);
- the status line: :func:`outcome_html`, and :func:`sending_html` / :func:`waiting_html`
  while an answer travels.

The statuses never overstate: ``accepted`` only when the agent took the answer,
``expired`` when the prompt's deadline closed it (never reported as a 409), ``closed``
when the task ended while the prompt was open, ``conflict`` when someone else answered
first. What the agent itself said is shown where the conversation shows its messages,
not repeated here (its words stay in :attr:`Outcome.final_text`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from hitl_nb._words import tally_words
from hitl_nb.a2a import Artifact, Task, TaskState
from hitl_nb.client import AnswerReceipt, GatewayAnswer
from hitl_nb.errors import (
    AgentTimeout,
    AnswerNotAccepted,
    AnswerOutcomeUnknown,
    GatewayRefused,
    HitlError,
    PromptConflict,
    ProtocolViolation,
    ResponseInvalid,
    TransportError,
)
from hitl_nb.policy import Tally
from hitl_nb.spec import PromptEnvelope

from ._deadline import seconds_left
from ._style import COLORS, esc

__all__ = [
    "ACCEPTED",
    "GONE",
    "HUB",
    "NOTHING_SENT",
    "Outcome",
    "SERVER",
    "Status",
    "Verdict",
    "accepted_words",
    "answered_elsewhere",
    "broken",
    "cannot_hold",
    "closed_already",
    "closing",
    "consensus_closed",
    "does_not_match",
    "empty_text",
    "gateway_refusal",
    "gateway_silent",
    "gateway_verdict",
    "held",
    "held_message",
    "not_continued",
    "not_yours",
    "outcome_html",
    "outcome_unknown",
    "question_closed",
    "refused",
    "refused_by_agent",
    "sending_html",
    "settled",
    "status_html",
    "takes_no_answer",
    "tally_words",
    "undelivered",
    "waiting_html",
]

Status = Literal[
    "accepted", "held", "refused", "invalid", "conflict", "expired", "closed", "failed"
]

_KIND = {
    "accepted": "ok",
    "held": "warn",
    "refused": "error",
    "invalid": "error",
    "conflict": "error",
    "expired": "error",
    "closed": "error",
    "failed": "error",
}


@dataclass(frozen=True, repr=False)
class Outcome:
    """What became of one answer (or of a prompt that closed before one).

    ``status``:

    - ``accepted``: the agent took the answer;
    - ``held``: a consensus is still gathering (nothing sent yet, S-3);
    - ``refused``: this responder may not answer (S-3); nothing was sent;
    - ``invalid``: checked locally, or the agent's 422: see ``validation_errors``;
    - ``conflict``: the prompt was answered already (409), by someone else;
    - ``expired``: the prompt's deadline closed it (S-4);
    - ``closed``: the task ended (failed, canceled) while the prompt was open;
    - ``failed``: the agent could not be reached, or answered with another error.

    ``message`` says it in words; ``task`` is the task as last reported, when known;
    ``error`` the exception behind an ``invalid`` / ``conflict`` / ``expired`` /
    ``failed`` answer, when there was one. ``repr()`` is one line; ``str()`` adds one
    line per validation error, naming the field by the labels the person sees when
    ``where`` (a card's ``form.where``) is known.

    For tests: :meth:`raise_for_status`, :attr:`state`, :attr:`final_text`,
    :attr:`artifacts` and :attr:`artifact_data`::

        outcome = chat.answer({"approve": True}).raise_for_status()
        assert outcome.state is TaskState.COMPLETED
        assert outcome.artifact_data == [{"approve": True}]
    """

    status: Status
    message: str
    task: Task | None = None
    validation_errors: list[dict[str, Any]] = field(default_factory=list)
    error: HitlError | None = field(default=None, compare=False)
    #: Names a validation error's JSON Pointer by the form's labels (``Owner › Email``).
    where: Callable[[str], str] | None = field(default=None, compare=False)

    def places(self) -> list[str]:
        """One line per validation error: the field (by its labels when known) and what
        is wrong with it."""
        out = []
        for e in self.validation_errors:
            if not isinstance(e, dict):  # an agent's odd entry: shown as it came
                out.append(str(e))
                continue
            path = e.get("path")
            path = path if isinstance(path, str) else ""
            name = self.where(path) if self.where is not None else (path or "/")
            out.append(f"{name}: {e.get('message')}")
        return out

    @property
    def accepted(self) -> bool:
        """True when the agent took the answer."""
        return self.status == "accepted"

    def raise_for_status(self) -> Outcome:
        """Raise :class:`~hitl_nb.errors.AnswerNotAccepted` unless the answer was accepted
        (or is ``held``, waiting for more responders); return the outcome otherwise."""
        if self.status in ("accepted", "held"):
            return self
        raise AnswerNotAccepted(str(self), self) from self.error

    @property
    def state(self) -> TaskState | None:
        """The task's state after the answer (None when the task is not known)."""
        return self.task.status.state if self.task is not None else None

    @property
    def final_text(self) -> str | None:
        """The text of the task's latest status message: once the task is done, what the
        agent finally said (None without a task or a text part)."""
        message = self.task.status.message if self.task is not None else None
        if message is None:
            return None
        texts = [p.text for p in message.parts if p.text is not None]
        return "\n".join(texts) if texts else None

    @property
    def artifacts(self) -> list[Artifact]:
        """The task's artifacts (empty without a task)."""
        return list(self.task.artifacts) if self.task is not None else []

    @property
    def artifact_data(self) -> list[Any]:
        """The content of every artifact part, in order: the JSON value of a data part,
        the string of a text part (file parts are left out: see :attr:`artifacts`)."""
        out: list[Any] = []
        for artifact in self.artifacts:
            for part in artifact.parts:
                if part.has_data:
                    out.append(part.data)
                elif part.text is not None:
                    out.append(part.text)
        return out

    def __str__(self) -> str:
        lines = [f"{self.status}: {self.message}"]
        lines += [f"  {place}" for place in self.places()]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Outcome {self.status}: {self.message}>"


# --- the status line ----------------------------------------------------------------------


def status_html(kind: str, label: str, message: str, details: list[str] | None = None) -> str:
    """A status line: ``label`` in bold, then ``message``, then a list of ``details``."""
    items = "".join(f"<li>{esc(d)}</li>" for d in details or [])
    return (
        f'<div style="color:{COLORS[kind]};line-height:1.4;margin-top:6px">'
        f"<b>{esc(label)}</b>: {esc(message)}"
        f"{f'<ul>{items}</ul>' if items else ''}</div>"
    )


def outcome_html(outcome: Outcome, *, places: bool = True) -> str:
    """The outcome as the card's status line (escaped; theme colours). ``places=False``:
    without the list of the fields at fault (a form above shows them, by the same
    labels, in its summary and under each field)."""
    listed = outcome.places() if places else []
    return status_html(_KIND[outcome.status], outcome.status, outcome.message, listed)


#: What the words call a gateway's host: a Jupyter server's extension (the default)...
SERVER = "the Jupyter server"
#: ... or a JupyterHub's service (:mod:`hitl_nb.hub`).
HUB = "the hub"


def sending_html(note: str = "", *, to: str = "") -> str:
    """The status line while an answer is on its way (``note``: an override, S-3;
    ``to``: the gateway's host it goes to, :data:`SERVER` or :data:`HUB`)."""
    where = f" to {to}" if to else ""
    return status_html(
        "info", "sending", f"the answer is on its way{where}" + (f" ({note})" if note else "")
    )


def waiting_html(words: str) -> str:
    """The status line of an accepted answer while the agent has not moved on yet."""
    return status_html("ok", "accepted", f"{words}; waiting for it to continue…")


# --- not sent: checked here first ---------------------------------------------------------

NOTHING_SENT = "nothing was sent to the agent"


def cannot_hold(exc: Exception) -> Outcome:
    """A value the form's fields cannot hold."""
    return Outcome("invalid", f"the form cannot hold this value: {exc}")


def does_not_match(issues: list[dict[str, Any]]) -> Outcome:
    """An answer the form's check refused (``issues``: its validation errors)."""
    return Outcome(
        "invalid", "the answer does not match the form; nothing was sent", validation_errors=issues
    )


def takes_no_answer(exc: Exception) -> Outcome:
    """The form would not submit (closed, or invalid after all)."""
    return Outcome("failed", f"the card takes no answer now: {exc}")


def closed_already(what: str = "prompt") -> Outcome:
    """An answer to a card that no longer takes one (``what``: prompt or question)."""
    return Outcome("failed", f"this {what} is closed; nothing was sent")


def empty_text() -> Outcome:
    """An empty answer to a plain-text question."""
    return Outcome("invalid", "the answer is empty; nothing was sent")


def refused(reason: str) -> Outcome:
    """The responder policy's refusal (S-3), in its own words; nothing was sent."""
    return Outcome("refused", reason)


def held(reason: str) -> Outcome:
    """A consensus answer counted by the card, not sent yet (S-3)."""
    return Outcome("held", f"{reason}; waiting for more responders")


def not_yours(why: str | None) -> Outcome:
    """The gateway's listing says this user may not answer the prompt (S-3)."""
    return Outcome(
        "refused", f"{why or 'the server says you may not answer this prompt'}; nothing was sent"
    )


def gateway_refusal(
    name: str | None, display: str, responder: str | None, override: bool, host: str = SERVER
) -> str | None:
    """Why an answer given from code cannot go through the gateway as asked (None: it
    can). ``name``/``display``: who the gateway's ``host`` says is answering."""
    if override:
        return (
            f"{host} decides who may answer; it cannot be overridden from the "
            f"notebook (answer with gateway=False to send directly); {NOTHING_SENT}"
        )
    if responder is not None and responder != name:
        who = display if name is None else name
        return (
            f"{host} says you are {who!r}; answering as {responder!r} "
            f"is not possible through it; {NOTHING_SENT}"
        )
    return None


# --- the agent's reply --------------------------------------------------------------------

#: What an accepted answer's words start with.
ACCEPTED = "the agent accepted the answer"


def accepted_words(note: str = "", receipt: AnswerReceipt | None = None) -> str:
    """Words for an accepted answer: the ``note`` (an override, who agreed) and, from the
    client's ``receipt``, plainly when it landed slowly or was seen only on the task."""
    words = ACCEPTED + (f" ({note})" if note else "")
    said = receipt.describe() if receipt is not None else ACCEPTED
    # describe() is ACCEPTED and what was unusual, if anything
    return words + (said[len(ACCEPTED) :] if said.startswith(ACCEPTED) else f"; {said}")


def settled(words: str, task: Task) -> Outcome:
    """An accepted answer once the agent moved on (``words``: :func:`accepted_words`)."""
    return Outcome("accepted", f"{words}; the task is now {task.status.state.name}", task)


def not_continued(timeout: float | None, task: Task) -> Outcome:
    """An accepted answer after which the agent did not move on within ``timeout``."""
    return Outcome(
        "accepted",
        f"{ACCEPTED} but has not continued after {timeout} s "
        f"(the task is {task.status.state.name})",
        task,
    )


def refused_by_agent(exc: ResponseInvalid) -> Outcome:
    """The ``invalid`` outcome of an answer the agent refused with 422: plain words (the
    wire's error name stays in the trace), the agent's own text when it wrote one, and
    its ``validation_errors`` for the fields."""
    count = len(exc.validation_errors)
    if count:
        what = f"{count} problem{'s' if count != 1 else ''}"
    else:
        what = "it did not say why"
    own = exc.message if exc.message and exc.message != exc.default_message else ""
    said = f"; it says: {own}" if own else ""
    message = f"the agent refused the answer ({what}){said}"
    return Outcome("invalid", message, None, exc.validation_errors, error=exc)


def undelivered(exc: HitlError) -> Outcome:
    """The agent could not be reached, or answered with an error (the form stays open)."""
    return Outcome("failed", f"the answer could not be delivered: {exc}", error=exc)


def outcome_unknown(exc: AnswerOutcomeUnknown) -> Outcome:
    """The answer may or may not have landed (the error says to look at the task)."""
    return Outcome("failed", f"{exc}", error=exc)


def broken(exc: Exception) -> Outcome:
    """Something unexpected went wrong on the way (never left saying "sending")."""
    return Outcome("failed", f"{type(exc).__name__}: {exc}")


# --- a prompt closed without our answer (and a 409) ---------------------------------------

_ENDED = {
    TaskState.FAILED: "failed",
    TaskState.CANCELED: "was canceled",
    TaskState.REJECTED: "was rejected",
}

#: A prompt that left the gateway's inbox.
GONE = "This prompt is no longer open: it was answered, closed or expired."


def closing(
    task: Task | None,
    envelope: PromptEnvelope,
    *,
    signaled: bool = False,
    conflict: PromptConflict | None = None,
) -> Outcome:
    """Why a prompt closed without our answer, told apart by the task as it is now.

    A task that ended is ``expired`` when the deadline passed (by our clock, or
    ``signaled`` by the agent, e.g. ``hitlTimeout``), else ``closed``; a prompt past its
    deadline is ``expired`` (S-4: never reported as "already answered"); otherwise
    someone else answered first (``conflict``). ``conflict``: the agent's 409, when
    that is how we learnt it (its words go in brackets, the error in ``error``).
    """
    left = seconds_left(envelope)
    passed = left is not None and left <= 0
    if task is not None and task.status.state in _ENDED:
        ended = _ENDED[task.status.state]
        if passed or signaled:
            outcome = Outcome("expired", f"the deadline passed and the task {ended}", task)
        else:
            outcome = Outcome("closed", f"the task {ended} before this prompt was answered", task)
    elif passed:
        outcome = Outcome(
            "expired",
            "the deadline passed and the agent no longer takes answers to this prompt",
            task,
        )
    else:
        why = f" (409 {conflict.message})" if conflict is not None else ""
        outcome = Outcome(
            "conflict", f"someone else answered this prompt first; the agent moved on{why}", task
        )
    return outcome if conflict is None else dataclasses.replace(outcome, error=conflict)


def question_closed(task: Task) -> Outcome:
    """A plain-text question the task moved on from without our answer."""
    return Outcome(
        "closed", f"the task moved on without this answer ({task.status.state.name})", task
    )


def consensus_closed(
    view: Mapping[str, Any] | None, name: str | None, task: Task, host: str = SERVER
) -> Outcome | None:
    """What became of our consensus answer, held at the gateway, when the agent moved on:
    from the gateway's ``view`` of the prompt, the agreed answer included ours
    (``accepted``) or another one (``conflict``). None when the gateway forwarded
    nothing: the prompt closed for another reason (see :func:`closing`)."""
    if view is None or view.get("state") != "forwarded":
        return None
    forwarded_for = view.get("forwarded_for") or []
    names = ", ".join(str(n) for n in forwarded_for)
    if name in forwarded_for:
        agreed = f"{len(forwarded_for)} people agreed: {names}"
        return Outcome(
            "accepted", f"{ACCEPTED} ({agreed}); the task is now {task.status.state.name}", task
        )
    return Outcome(
        "conflict",
        f"{names} agreed on another answer, which {host} forwarded; yours was not sent",
        task,
    )


def answered_elsewhere(
    view: Mapping[str, Any] | None, name: str | None, task: Task, host: str = SERVER
) -> Outcome | None:
    """A prompt this card did not answer, which the gateway forwarded an answer to (from
    JupyterLab's prompts panel, or another card), told from the gateway's ``view`` of
    it: given as ``name`` (or, for ``name`` None, by the one user of a server that
    cannot tell its users apart) the agent accepted it (``accepted``); given by others,
    they were first (``conflict``). None when the gateway forwarded nothing."""
    if view is None or view.get("state") != "forwarded":
        return None
    who = [str(n) for n in view.get("forwarded_for") or []]
    names = ", ".join(who) or "someone"
    if name is None or name in who:
        return Outcome(
            "accepted",
            f"answered through {host} as {names} (in JupyterLab's prompts panel, or another "
            f"card): {ACCEPTED}; the task is now {task.status.state.name}",
            task,
        )
    return Outcome(
        "conflict", f"{names} answered this prompt through {host} first; the agent moved on", task
    )


# --- a responder gateway (a Jupyter server's, or the hub's) -------------------------------


@dataclass(frozen=True)
class Verdict:
    """What became of one answer on its way, as a card shows it (every sender's answer).

    ``outcome`` is the status line; ``open_again`` says whether the form takes another
    answer (held, refused, invalid, failed). For an accepted answer, ``note`` is what
    its words add in brackets (an override, who agreed, that the server makes sure it
    arrives once), ``receipt`` how it landed (the client's), ``task`` the task as the
    agent returned it. ``tally`` is a consensus' count (held).
    """

    outcome: Outcome
    open_again: bool
    tally: Tally | None = None
    note: str = ""
    receipt: AnswerReceipt | None = None
    task: Task | None = None

    @property
    def words(self) -> str:
        """An accepted answer's words, kept once the agent moved on (:func:`settled`)."""
        return accepted_words(self.note, self.receipt)


def held_message(answer: GatewayAnswer, name: str, host: str = SERVER) -> str:
    """The words of a ``held`` outcome (the live count is shown apart from the status
    line, where the gateway's later counts replace it: a status line must not go stale)."""
    needed = answer.needed or 0
    return (
        f"{host} counted this answer from {name}; it goes to the agent "
        f"once {needed} people send the same answer"
    )


def gateway_verdict(
    reply: GatewayAnswer | HitlError, name: str, needed: int, host: str = SERVER
) -> Verdict:
    """The verdict on one answer from the gateway's ``reply`` (its answer, or the error
    the call raised). ``name`` is who the gateway's ``host`` (:data:`SERVER` or
    :data:`HUB`) says is answering; ``needed`` how many must agree when the gateway does
    not say (the prompt's ``consensus:N``).

    Forwarded: ``accepted``; ``forwarding``: ``accepted`` too, the server holds it and
    makes sure it reaches the agent once (the words say the agent has not confirmed it
    yet); collecting (``consensus:N``): ``held``, with the count, the form open again.
    """
    if isinstance(reply, HitlError):
        return _gateway_refusal(reply, host)
    if reply.status == "collecting":
        tally = Tally(
            reply.agreeing or 0, reply.needed or needed, reply.answers, reply.disagreement
        )
        return Verdict(Outcome("held", held_message(reply, name, host)), True, tally)
    responders = reply.responders
    note = f"agreed by {', '.join(responders)}" if len(responders) > 1 else ""
    extra = f" ({note})" if note else ""
    if reply.status == "forwarding":
        words = (
            f"{host} took the answer and makes sure it reaches the agent "
            f"once{extra}; the agent has not confirmed it yet"
        )
        once = f"{host} makes sure it reaches the agent once"
        return Verdict(Outcome("accepted", words), False, note=note or once)
    return Verdict(Outcome("accepted", f"{ACCEPTED}{extra}"), False, note=note)


def _gateway_refusal(exc: HitlError, host: str = SERVER) -> Verdict:
    """403: ``refused``, with the server's reason; 422: ``invalid``, with its issues;
    409: ``conflict`` (answered already); 410: ``expired`` (the gateway's timer, S-4);
    the gateway cannot be reached, or answers late: ``failed``, saying whether anything
    may have been sent. A card never answers the agent directly instead."""
    if isinstance(exc, ResponseInvalid):
        return Verdict(refused_by_agent(exc), True)
    if isinstance(exc, PromptConflict):
        message = f"this prompt was answered already ({exc}); yours was not sent"
        return Verdict(Outcome("conflict", message, error=exc), False)
    if isinstance(exc, GatewayRefused):
        if exc.status == 403:
            message = f"{host} refused: {exc}; {NOTHING_SENT}"
            return Verdict(Outcome("refused", message, error=exc), True)
        if exc.status == 410:
            return Verdict(Outcome("expired", str(exc), error=exc), False)
        message = f"{host}'s gateway answered {exc.status}: {exc}"
        return Verdict(Outcome("failed", message, error=exc), True)
    once = (
        "it forwards an answer at most once: answer again to find out (a second answer "
        "is refused if the first one went through)"
    )
    if isinstance(exc, AgentTimeout):
        message = f"{host}'s gateway did not answer in time ({exc}); {once}"
        return Verdict(Outcome("failed", message, error=exc), True)
    if isinstance(exc, ProtocolViolation):  # it was asked: whether it forwarded is unknown
        message = f"{host}'s gateway gave an answer that could not be read ({exc}); {once}"
        return Verdict(Outcome("failed", message, error=exc), True)
    if isinstance(exc, TransportError):
        message = (
            f"{host}'s responder gateway could not be reached ({exc}); "
            f"{NOTHING_SENT}: answers to this card go only through {host}, which "
            "vouches for who answers"
        )
        return Verdict(Outcome("failed", message, error=exc), True)
    return Verdict(Outcome("failed", f"{exc}; {NOTHING_SENT}", error=exc), True)


def gateway_silent(timeout: float | None, host: str = SERVER) -> Outcome:
    """The gateway did not say, within ``timeout`` seconds, what it did with an answer."""
    return Outcome("failed", f"{host} did not answer within {timeout} s")
