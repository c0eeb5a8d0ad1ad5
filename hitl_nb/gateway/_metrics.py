"""The gateway's metrics in Prometheus's format, every one declared here.

As JupyterHub's ``metrics.py`` does, this module is the one place a reader learns the
whole set: each metric with its help text and its label values.

===================================  =========  ====================================
``hitl_prompts_open{kind,policy}``   gauge      open prompts (no answer on its way),
                                                by who may answer (``kind``: any,
                                                specific, consensus) and by their
                                                registration's deadline ``policy``:
                                                remind, escalate, default, cancel
``hitl_answers_total{outcome}``      counter    answers given: forwarded, held,
                                                refused, conflict, invalid, failed
``hitl_answer_wait_seconds``         histogram  a prompt's first sighting to its
                                                answer's delivery
``hitl_deadlines_total{followed}``   counter    deadlines passed, by what followed:
                                                closed, answered, kept_open
``hitl_forwards_total{result}``      counter    forwards ended: forwarded, rejected,
                                                closed (answered elsewhere), failed,
                                                in_doubt
``hitl_notifications_total``         counter    messages by ``channel`` (the channel
                                                kind: email, slack, teams, ...; none)
                                                and ``result``: sent, retried,
                                                given_up
``hitl_outbox_notes``                gauge      notes waiting to be sent
``hitl_outbox_oldest_note_seconds``  gauge      the oldest waiting note's age
===================================  =========  ====================================

Counters and the histogram are counted where things happen (the gateway's answer, its
forwards, its deadlines, the notifications' sender), in memory, per process: each
replica is scraped on its own, as Prometheus expects. The gauges are read from the
store, which every replica shares, at most every :data:`CACHE_SECONDS`:
:meth:`GatewayMetrics.refresh` before a scrape where the host can wait for it (the hub
service), else a read the scrape starts for the next one (jupyter-server's ``/metrics``
collects without waiting).

Each gateway has its own :class:`~prometheus_client.CollectorRegistry` (two gateways in
one process, as tests make, do not collide); a single Jupyter server adds it to
prometheus_client's global ``REGISTRY``, which jupyter-server's ``/metrics`` serves
(:meth:`GatewayMetrics.join_global`). ``GatewayMetrics(None)`` counts nothing (the
figures' "off").
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from hitl_nb.gateway._deadline import POLICIES

__all__ = [
    "ANSWER_OUTCOMES",
    "CACHE_SECONDS",
    "CONTENT_TYPE",
    "DEADLINE_FOLLOWED",
    "FORWARD_RESULTS",
    "GatewayMetrics",
    "PROMPT_KINDS",
    "PROMPT_POLICIES",
    "Readings",
    "outcome_of",
]

log = logging.getLogger("hitl_nb.gateway")

#: The media type of a scrape's body.
CONTENT_TYPE = CONTENT_TYPE_LATEST
#: How long the gauges read from the store are kept before they are read again.
CACHE_SECONDS = 5.0

#: ``hitl_prompts_open``'s ``kind``.
PROMPT_KINDS = ("any", "specific", "consensus")
#: ``hitl_prompts_open``'s ``policy`` (a registration's deadline policy).
PROMPT_POLICIES = POLICIES
#: ``hitl_answers_total``'s ``outcome``.
ANSWER_OUTCOMES = ("forwarded", "held", "refused", "conflict", "invalid", "failed")
#: ``hitl_deadlines_total``'s ``followed``.
DEADLINE_FOLLOWED = ("closed", "answered", "kept_open")
#: ``hitl_forwards_total``'s ``result``.
FORWARD_RESULTS = ("forwarded", "rejected", "closed", "failed", "in_doubt")
#: ``hitl_notifications_total``'s ``result``.
NOTIFY_RESULTS = ("sent", "retried", "given_up")

#: Human waits: seconds to two days.
_WAIT_BUCKETS = (
    1,
    5,
    15,
    30,
    60,
    120,
    300,
    600,
    1800,
    3600,
    7200,
    14400,
    43200,
    86400,
    172800,
    float("inf"),
)

#: A reply's ``status`` -> an answer's outcome.
_REPLIED = {
    "collecting": "held",
    "forwarded": "forwarded",
    "forwarding": "forwarded",
    "rejected": "invalid",
    "failed": "failed",
    "closed": "conflict",
}


def outcome_of(status: int, body_status: object = None) -> str:
    """An answer's outcome (:data:`ANSWER_OUTCOMES`) from the gateway's reply: its
    HTTP ``status`` and, for a reply that is not a refusal, its body's ``status``."""
    if body_status is not None:
        return _REPLIED.get(str(body_status), "failed")
    if status == 409:
        return "conflict"
    if status == 422:
        return "invalid"
    if status >= 500:
        return "failed"
    return "refused"


#: The store's readings: open prompts by (kind, policy), and the outbox's depth and
#: oldest note.
Readings = tuple[dict[tuple[str, str], int], int, float | None]


class _StoreGauges:
    """The gauges read from the store, kept for :data:`CACHE_SECONDS`: a collector."""

    def __init__(self, read: Callable[[], Awaitable[Readings]]) -> None:
        self._read = read
        self._readings: Readings = ({}, 0, None)
        self._at = -1e9
        self._reading: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def refresh(self) -> None:
        """Read the store again when the readings are older than the cache."""
        if time.monotonic() - self._at < CACHE_SECONDS:
            return
        if self._reading is None or self._reading.done():
            self._reading = asyncio.ensure_future(self._take())
        await asyncio.shield(self._reading)

    async def _take(self) -> None:
        self._loop = asyncio.get_running_loop()
        try:
            self._readings = await self._read()
        except Exception as exc:  # the store away: the last readings stay
            log.info("hitl-nb metrics: the store could not be read: %s", exc)
        self._at = time.monotonic()

    def _soon(self) -> None:
        """From a collect that cannot wait: read the store for the next scrape."""
        loop = self._loop
        if loop is None or loop.is_closed() or time.monotonic() - self._at < CACHE_SECONDS:
            return

        def start() -> None:
            if self._reading is None or self._reading.done():
                self._reading = asyncio.ensure_future(self._take())

        loop.call_soon_threadsafe(start)

    def describe(self) -> Iterable[Metric]:
        """The families, without values (registering asks no store)."""
        return self._families(({}, 0, None), time.time())

    def collect(self) -> Iterable[Metric]:
        """The families with the latest readings."""
        self._soon()
        return self._families(self._readings, time.time())

    @staticmethod
    def _families(readings: Readings, now: float) -> Iterator[Metric]:
        by_kind, depth, oldest = readings
        prompts = GaugeMetricFamily(
            "hitl_prompts_open",
            "Open prompts (no answer on its way), by who may answer them and by their "
            "registration's deadline policy.",
            labels=["kind", "policy"],
        )
        for kind in PROMPT_KINDS:
            for policy in PROMPT_POLICIES:
                prompts.add_metric([kind, policy], by_kind.get((kind, policy), 0))
        yield prompts
        yield GaugeMetricFamily(
            "hitl_outbox_notes", "Notifications waiting in the outbox to be sent.", value=depth
        )
        yield GaugeMetricFamily(
            "hitl_outbox_oldest_note_seconds",
            "The age of the oldest notification waiting in the outbox (0: none waits).",
            value=0.0 if oldest is None else max(0.0, now - oldest),
        )


class _Global:
    """A gateway's registry as one collector of another registry (the global one)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

    def describe(self) -> Iterable[Metric]:
        return self.registry.collect()  # the names: a second gateway's collide

    def collect(self) -> Iterable[Metric]:
        return self.registry.collect()


#: The gateway's collector in each registry it joined (by the registry's id).
_joined: dict[int, _Global] = {}


class GatewayMetrics:
    """One gateway's metrics (the module docstring lists them) on ``registry``; None:
    nothing is counted. ``read``: the store's readings (set by the gateway)."""

    def __init__(
        self,
        registry: CollectorRegistry | None,
        read: Callable[[], Awaitable[Readings]] | None = None,
    ) -> None:
        self.registry = registry
        self.on = registry is not None
        self._gauges: _StoreGauges | None = None
        if registry is None:
            return
        self._answers = Counter(
            "hitl_answers",
            "Answers given to the gateway, by what became of them.",
            ["outcome"],
            registry=registry,
        )
        self._wait = Histogram(
            "hitl_answer_wait_seconds",
            "Seconds from a prompt's first sighting to the delivery of its answer.",
            buckets=_WAIT_BUCKETS,
            registry=registry,
        )
        self._deadlines = Counter(
            "hitl_deadlines",
            "Deadlines passed, by what followed: closed, answered (an answer on its way "
            "or delivered), kept_open (accept_after_deadline).",
            ["followed"],
            registry=registry,
        )
        self._forwards = Counter(
            "hitl_forwards",
            "Forwards of answers to agents ended, by result.",
            ["result"],
            registry=registry,
        )
        self._notified = Counter(
            "hitl_notifications",
            "Notifications handled by the sender, by channel kind and result.",
            ["channel", "result"],
            registry=registry,
        )
        # Each label value's child made once (every value shows, as 0, before it
        # happens), so counting is one increment, not a lookup under the family's lock.
        self._by_outcome = {o: self._answers.labels(o) for o in ANSWER_OUTCOMES}
        self._by_followed = {f: self._deadlines.labels(f) for f in DEADLINE_FOLLOWED}
        self._by_result = {r: self._forwards.labels(r) for r in FORWARD_RESULTS}
        if read is not None:
            self._gauges = _StoreGauges(read)
            registry.register(self._gauges)

    # -- counted where it happens -----------------------------------------------------

    def answered(self, outcome: str) -> None:
        """One answer, by its outcome (:func:`outcome_of`)."""
        if self.on:
            self._by_outcome[outcome].inc()

    def forward_ended(self, result: str, first_seen: float | None = None) -> None:
        """A forward ended (:data:`FORWARD_RESULTS`); delivered, the prompt's wait from
        ``first_seen`` is observed."""
        if not self.on:
            return
        self._by_result.get(result, self._by_result["failed"]).inc()
        if result == "forwarded" and first_seen is not None:
            self._wait.observe(max(0.0, time.time() - first_seen))

    def deadline(self, followed: str) -> None:
        """A deadline passed, and what followed (:data:`DEADLINE_FOLLOWED`)."""
        if self.on:
            self._by_followed[followed].inc()

    def notified(self, channel: str, result: str) -> None:
        """The sender handled a message: its channel kind and result."""
        if self.on:
            self._notified.labels(channel, result).inc()

    # -- scraped ----------------------------------------------------------------------

    async def refresh(self) -> None:
        """Read the store's gauges again if the cache is stale (before a scrape)."""
        if self._gauges is not None:
            await self._gauges.refresh()

    async def exposition(self) -> bytes:
        """The scrape's body (Prometheus's text format), the gauges fresh."""
        if self.registry is None:
            return b""
        await self.refresh()
        return generate_latest(self.registry)

    def join_global(self, registry: Any = REGISTRY) -> bool:
        """Serve these metrics in ``registry`` too (jupyter-server's ``/metrics``
        serves the global one), in place of another gateway's joined before (one server
        per process: a server started again in one process, as in tests); False when
        nothing is counted or the names are taken by something else."""
        if self.registry is None:
            return False
        collector = _Global(self.registry)
        before = _joined.pop(id(registry), None)
        if before is not None:
            registry.unregister(before)
        try:
            registry.register(collector)
        except ValueError as exc:
            log.warning("hitl-nb metrics: not served in the global registry: %s", exc)
            return False
        _joined[id(registry)] = collector
        return True
