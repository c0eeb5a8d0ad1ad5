"""The gateway's traces in OpenTelemetry, every span declared here (the extra ``hitl-nb[otel]``).

As :mod:`hitl_nb.gateway._metrics` does for the metrics, this module is the one place a
reader learns the whole set: each span, its attributes and its events.

================  ========  ==========================================================
``hitl.prompt``   internal  a prompt, from its opening (the gateway's first sighting of
                            it in a registration) to its end; ``hitl.outcome`` says
                            which end: answered, answered_elsewhere, defaulted,
                            expired, cancelled, withdrawn
``hitl.forward``  client    an answer's forward to the agent (a child of
                            ``hitl.prompt``): its send, or the settling of a forward
                            left in doubt; ``hitl.forward.result``: forwarded,
                            rejected, closed, failed, in_doubt
================  ========  ==========================================================

Attributes, in OpenTelemetry's semantic-convention style: ``hitl.prompt.id``,
``a2a.task.id``, ``a2a.context.id``, ``hitl.registration.id``, ``server.address`` (the
agent's host), ``hitl.prompt.kind`` (any, specific, consensus), ``hitl.deadline.policy``
(remind, escalate, default, cancel), ``hitl.prompt.resumed`` and, at the end,
``hitl.outcome``; a forward adds ``a2a.message.id``, ``hitl.forward.settling`` and
``hitl.forward.result``. Events on ``hitl.prompt``: ``hitl.notification`` (each
message about the prompt the notifications' sender handled: ``hitl.channel``, the
channel's kind, and ``hitl.notification.result``, at most :data:`MAX_EVENTS` a span)
and ``hitl.deadline`` (the deadline passed: ``hitl.deadline.followed``, as the metric
``hitl_deadlines_total`` says). Every string an agent chose (ids) is cut to
:data:`MAX_TEXT` characters and made valid UTF-8, so an exporter never refuses a span.

The tracer is ``opentelemetry.trace.get_tracer("hitl_nb")``: the global provider, which
the user configures with their exporter (docs/hub.md, traces). Without the
``opentelemetry-api`` package (the extra not installed) or with the setting ``traces``
off, :class:`GatewayTraces` does nothing: nothing is imported, each call returns at
once.

A prompt's span outlives any request: it starts when the prompt opens and ends when it
ends, in memory in between (at most :data:`MAX_LIVE` at once). Only the process that
records a prompt's end (the store's transaction that closes it) ends its span, so one
span is exported per prompt even with several replicas. A prompt opened before a
restart, or by another replica, has no span here: its span is started when this
process first needs it (its answer's forward, its end) with the prompt's first
sighting as its start time, and says ``hitl.prompt.resumed=true``. A span left
unended (the gateway stopped, another replica ended the prompt, the bound reached) is
dropped: never exported, and the process that ends the prompt makes it again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from hitl_nb.gateway._schema import audience
from hitl_nb.gateway._store import Forward, PromptRow, Registration

__all__ = [
    "FORWARD_RESULTS",
    "MAX_EVENTS",
    "MAX_LIVE",
    "MAX_TEXT",
    "OUTCOMES",
    "GatewayTraces",
    "ForwardSpan",
    "outcome_of_closed",
]

log = logging.getLogger("hitl_nb.gateway")

#: The instrumentation scope's name (``get_tracer``).
SCOPE = "hitl_nb"
#: ``hitl.outcome``: how a prompt ended.
OUTCOMES = ("answered", "answered_elsewhere", "defaulted", "expired", "cancelled", "withdrawn")
#: ``hitl.forward.result``: how a forward ended (as the metric ``hitl_forwards_total``).
FORWARD_RESULTS = ("forwarded", "rejected", "closed", "failed", "in_doubt")
#: Prompts' spans kept open at once; beyond, the oldest is dropped (made again at its end).
MAX_LIVE = 10_000
#: Notification events on one prompt's span at most.
MAX_EVENTS = 32
#: An attribute's text at most this many characters.
MAX_TEXT = 256

#: A prompt row's ``closed`` -> its span's outcome.
_CLOSED = {
    "answered": "answered",
    "expired": "expired",
    "closed by the agent": "withdrawn",
}


def outcome_of_closed(closed: str, *, forwarded: bool = False, default: bool = False) -> str:
    """A prompt's outcome (:data:`OUTCOMES`) from why it closed (the store's ``closed``):
    ``forwarded``: closed by its forward's end (the agent's 409 there is another's
    answer); ``default``: the forward carried the deadline policy's default answer."""
    if closed == "answered":
        return "defaulted" if default else "answered"
    if forwarded and closed == "closed by the agent":
        return "answered_elsewhere"
    return _CLOSED.get(closed, "withdrawn")


def bounded(text: object) -> str:
    """``text`` as an attribute's value: at most :data:`MAX_TEXT` characters, valid
    UTF-8 (a lone surrogate from an agent's JSON becomes ``?``)."""
    s = str(text)
    if len(s) > MAX_TEXT:
        s = s[: MAX_TEXT - 1] + "\u2026"
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        s = s.encode("utf-8", "replace").decode("utf-8")
    return s


def _tracer() -> Any | None:
    """The global provider's tracer, or None when OpenTelemetry's API is not installed."""
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace.get_tracer(SCOPE)


@dataclass
class _Live:
    """A prompt's span while it is open, and the notification events it has had."""

    span: Any
    events: int = 0


@dataclass
class ForwardSpan:
    """A forward's span while it is sent (``span`` None: nothing is traced)."""

    span: Any = None
    result: str | None = field(default=None)

    def ended(self, result: str) -> None:
        """How the forward ended (:data:`FORWARD_RESULTS`)."""
        if self.span is None:
            return
        self.result = result
        self.span.set_attribute("hitl.forward.result", result)
        if result in ("failed", "rejected"):
            from opentelemetry.trace import StatusCode

            self.span.set_status(StatusCode.ERROR, f"the forward {result}")


class GatewayTraces:
    """One gateway's spans (the module docstring lists them). ``on`` False, or
    OpenTelemetry's API absent: nothing is traced. ``policy``: a registration's deadline
    policy's name (read from the store when a span starts). ``tracer``: in place of the
    global provider's (tests)."""

    def __init__(
        self,
        on: bool = True,
        policy: Callable[[str], Awaitable[str | None]] | None = None,
        *,
        tracer: Any = None,
    ) -> None:
        self._tracer = (tracer or _tracer()) if on else None
        self.on = self._tracer is not None
        self._policy = policy
        self._live: dict[tuple[str, str], _Live] = {}

    # -- a prompt's span -----------------------------------------------------------

    async def opened(self, reg: Registration, row: PromptRow) -> None:
        """The gateway saw ``row`` open for the first time: its span starts (at its
        first sighting)."""
        if self.on:
            await self._start(reg, row, resumed=False)

    async def _start(self, reg: Registration, row: PromptRow, *, resumed: bool) -> _Live:
        key = (reg.id, row.prompt_id)
        live = self._live.get(key)
        if live is not None:
            return live
        policy = await self._policy(reg.id) if self._policy is not None else None
        live = self._live.get(key)  # started meanwhile (another call for it)
        if live is not None:
            return live
        attributes: dict[str, Any] = {
            "hitl.prompt.id": bounded(row.prompt_id),
            "a2a.task.id": bounded(reg.task_id),
            "hitl.registration.id": bounded(reg.id),
            "hitl.prompt.kind": _kind(row.envelope),
            "hitl.deadline.policy": policy or "remind",
            "hitl.prompt.resumed": resumed,
        }
        if row.context_id is not None:
            attributes["a2a.context.id"] = bounded(row.context_id)
        host = _host(reg.agent_url)
        if host:
            attributes["server.address"] = bounded(host)
        assert self._tracer is not None
        span = self._tracer.start_span(
            "hitl.prompt", attributes=attributes, start_time=_ns(row.first_seen)
        )
        while len(self._live) >= MAX_LIVE:
            self._live.pop(next(iter(self._live)))  # dropped, never exported
        live = self._live[key] = _Live(span)
        return live

    async def ended(self, reg: Registration, row: PromptRow, outcome: str) -> None:
        """This process recorded ``row``'s end: its span ends with ``outcome``."""
        if not self.on:
            return
        live = self._live.get((reg.id, row.prompt_id))
        if live is None:
            live = await self._start(reg, row, resumed=True)
        self._live.pop((reg.id, row.prompt_id), None)
        live.span.set_attribute("hitl.outcome", outcome)
        live.span.end()

    async def concluded(
        self,
        reg: Registration,
        row: PromptRow,
        closed: str | None,
        ended_here: bool,
        *,
        default: bool = False,
    ) -> None:
        """A forward's end was written (:func:`~hitl_nb.gateway._forward.conclude`):
        when it closed the prompt (``closed``) and this call ended it, the span ends.
        ``default``: the forward carried the deadline policy's default answer."""
        if self.on and closed is not None and ended_here:
            await self.ended(reg, row, outcome_of_closed(closed, forwarded=True, default=default))

    def closed_elsewhere(self, reg_id: str, prompt_id: str) -> None:
        """Another process ended the prompt (and its span): this one's is dropped."""
        if self.on:
            self._live.pop((reg_id, prompt_id), None)

    def live(self) -> int:
        """How many prompts' spans are open here."""
        return len(self._live)

    def close(self) -> None:
        """The gateway stops: the open spans are dropped (a restart makes them again)."""
        self._live.clear()

    # -- events on it ----------------------------------------------------------------

    def notified(self, channel: str, result: str, prompts: Sequence[tuple[str, str]]) -> None:
        """The sender handled a message about ``prompts`` ((registration, prompt) ids):
        an event on each one's span open here."""
        if not self.on:
            return
        for key in dict.fromkeys(prompts):
            live = self._live.get(key)
            if live is None or live.events >= MAX_EVENTS:
                continue
            live.events += 1
            live.span.add_event(
                "hitl.notification",
                {"hitl.channel": bounded(channel), "hitl.notification.result": result},
            )

    def deadline(self, reg_id: str, prompt_id: str, followed: str) -> None:
        """The prompt's deadline passed, and what followed (as the metrics count it)."""
        if not self.on:
            return
        live = self._live.get((reg_id, prompt_id))
        if live is not None:
            live.span.add_event("hitl.deadline", {"hitl.deadline.followed": followed})

    # -- an answer's forward ----------------------------------------------------------

    async def parent(self, reg: Registration, row: PromptRow) -> Any:
        """The prompt's span, started (resumed) if this process has none: what a
        forward's span is a child of (None when nothing is traced)."""
        if not self.on:
            return None
        return (await self._start(reg, row, resumed=True)).span

    @contextmanager
    def forward(
        self, parent: Any, reg: Registration, row: PromptRow, fwd: Forward, *, settling: bool
    ) -> Iterator[ForwardSpan]:
        """A forward's span, a child of ``parent`` (:meth:`parent`) and the current span
        while the answer is sent (an instrumented HTTP client's spans nest in it)."""
        if parent is None or self._tracer is None:
            yield ForwardSpan()
            return
        from opentelemetry import trace

        attributes: dict[str, Any] = {
            "hitl.prompt.id": bounded(row.prompt_id),
            "a2a.task.id": bounded(reg.task_id),
            "a2a.message.id": bounded(fwd.message_id),
            "hitl.forward.settling": settling,
        }
        if row.context_id is not None:
            attributes["a2a.context.id"] = bounded(row.context_id)
        span = self._tracer.start_span(
            "hitl.forward",
            context=trace.set_span_in_context(parent),
            kind=trace.SpanKind.CLIENT,
            attributes=attributes,
        )
        with trace.use_span(span, end_on_exit=True):
            yield ForwardSpan(span)


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _kind(envelope: dict[str, Any]) -> str:
    """Who may answer, as the metric ``hitl_prompts_open`` says it: any, specific or
    consensus (the store's rule, :func:`~hitl_nb.gateway._schema.audience`)."""
    try:
        names, needed = audience(envelope)
    except Exception:  # a stored envelope was checked when seen; be safe anyway
        return "any"
    if needed > 1:
        return "consensus"
    return "specific" if names else "any"


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""
