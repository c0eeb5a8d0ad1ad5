"""What the Jupyter server's responder gateway did with one answer, in the card's words.

Both cards that answer through the gateway read its reply here: a
:class:`~hitl_nb.notebook.PromptCard` in gateway mode (:mod:`._via_gateway`) and the
inbox's :class:`~hitl_nb.notebook.GatewayCard` (:mod:`._inbox_card`). The reply is what
:meth:`GatewayLink.answer <hitl_nb.notebook.GatewayLink.answer>` returned or raised:

- forwarded: ``accepted`` (the agent took it); ``forwarding``: ``accepted`` too, the
  server holds it and makes sure it reaches the agent once (the agent has not said so
  yet, and the words say that);
- collecting (``consensus:N``, S-3): ``held``, with the count; the form takes another
  answer (a person may change theirs until the consensus is reached);
- 403: ``refused``, with the server's reason; 422: ``invalid``, with its issues;
- 409: ``conflict`` (answered already); 410: ``expired`` (the gateway's timer, S-4);
- the gateway cannot be reached, or answers late: ``failed``, saying that nothing was
  sent to the agent. A card never answers the agent directly instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from hitl_nb.client import GatewayAnswer
from hitl_nb.errors import (
    AgentTimeout,
    GatewayRefused,
    HitlError,
    PromptConflict,
    ProtocolViolation,
    ResponseInvalid,
    TransportError,
)

from ._outcome import Outcome, refused_by_agent

__all__ = ["NOTHING_SENT", "GatewayVerdict", "Tally", "gateway_verdict", "held_message"]

NOTHING_SENT = "nothing was sent to the agent"
_ONCE = "the Jupyter server makes sure it reaches the agent once"


@dataclass(frozen=True)
class Tally:
    """A consensus prompt's count at the gateway: ``agreeing`` of ``needed`` agree, out
    of ``answers`` given; ``disagreement`` when they differ."""

    agreeing: int
    needed: int
    answers: int
    disagreement: bool


@dataclass(frozen=True)
class GatewayVerdict:
    """What the gateway did with one answer, as a card shows it.

    ``outcome`` is the status line; ``open_again`` says whether the form takes another
    answer (held, refused, invalid, failed); ``tally`` is a consensus' count (held);
    ``note`` what an accepted answer's words add in brackets (who agreed, or that the
    server makes sure it arrives once).
    """

    outcome: Outcome
    open_again: bool
    tally: Tally | None = None
    note: str = ""


def held_message(answer: GatewayAnswer, name: str) -> str:
    """The words of a ``held`` outcome (the live count is shown apart from the status
    line, where the gateway's later counts replace it: a status line must not go stale)."""
    needed = answer.needed or 0
    return (f"the Jupyter server counted this answer from {name}; it goes to the agent "
            f"once {needed} people send the same answer")  # fmt: skip


def gateway_verdict(reply: GatewayAnswer | HitlError, name: str, needed: int) -> GatewayVerdict:
    """The verdict on one answer from the gateway's ``reply`` (its answer, or the error
    the call raised). ``name`` is who the server says is answering; ``needed`` how many
    must agree when the gateway does not say (the prompt's ``consensus:N``)."""
    if isinstance(reply, HitlError):
        return _refusal(reply)
    if reply.status == "collecting":
        answers = reply.body.get("answers")
        tally = Tally(reply.agreeing or 0, reply.needed or needed,
                      answers if isinstance(answers, int) else 0, reply.disagreement)  # fmt: skip
        return GatewayVerdict(Outcome("held", held_message(reply, name)), True, tally)
    note = ""
    responders = reply.body.get("responders")
    if isinstance(responders, list) and len(responders) > 1:
        note = f"agreed by {', '.join(str(r) for r in responders)}"
    extra = f" ({note})" if note else ""
    if reply.status == "forwarding":
        words = ("the Jupyter server took the answer and makes sure it reaches the agent "
                 f"once{extra}; the agent has not confirmed it yet")  # fmt: skip
        return GatewayVerdict(Outcome("accepted", words), False, note=note or _ONCE)
    return GatewayVerdict(Outcome("accepted", f"the agent accepted the answer{extra}"), False,
                          note=note)  # fmt: skip


def _refusal(exc: HitlError) -> GatewayVerdict:
    """The verdict on an answer the gateway did not take (or could not be asked)."""
    if isinstance(exc, ResponseInvalid):
        return GatewayVerdict(refused_by_agent(exc), True)
    if isinstance(exc, PromptConflict):
        return GatewayVerdict(Outcome("conflict", (
            f"this prompt was answered already ({exc}); yours was not sent"), error=exc),
            False)  # fmt: skip
    if isinstance(exc, GatewayRefused):
        if exc.status == 403:
            return GatewayVerdict(Outcome("refused", f"the Jupyter server refused: {exc}; "
                                          f"{NOTHING_SENT}", error=exc), True)  # fmt: skip
        if exc.status == 410:
            return GatewayVerdict(Outcome("expired", str(exc), error=exc), False)
        return GatewayVerdict(Outcome("failed", f"the Jupyter server's gateway answered "
                                      f"{exc.status}: {exc}", error=exc), True)  # fmt: skip
    if isinstance(exc, AgentTimeout):
        return GatewayVerdict(Outcome("failed", (
            f"the Jupyter server's gateway did not answer in time ({exc}); it forwards an "
            "answer at most once: answer again to find out (a second answer is refused "
            "if the first one went through)"), error=exc), True)  # fmt: skip
    if isinstance(exc, ProtocolViolation):  # it was asked: whether it forwarded is unknown
        return GatewayVerdict(Outcome("failed", (
            f"the Jupyter server's gateway gave an answer that could not be read ({exc}); "
            "it forwards an answer at most once: answer again to find out (a second answer "
            "is refused if the first one went through)"), error=exc), True)  # fmt: skip
    if isinstance(exc, TransportError):
        return GatewayVerdict(Outcome("failed", (
            f"the Jupyter server's responder gateway could not be reached ({exc}); "
            f"{NOTHING_SENT}: answers to this card go only through the server, which "
            "vouches for who answers"), error=exc), True)  # fmt: skip
    return GatewayVerdict(Outcome("failed", f"{exc}; {NOTHING_SENT}", error=exc), True)
