"""The gateway's traces (``hitl_nb.gateway._traces``), collected by OpenTelemetry's
in-memory exporter through a real gateway and agent: a prompt answered (its span and
its forward's child span), a deadline passed, a default answer, a restart between the
opening and the answer, the agent withdrawing the prompt; nothing, and no error, without
OpenTelemetry's API or with the setting off; an agent's hostile ids bounded."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hitl_nb.gateway import AgentPool, Caller, Gateway, GatewaySettings, _traces
from hitl_nb.gateway._traces import MAX_TEXT, GatewayTraces, bounded, outcome_of_closed
from tests.gateway.conftest import Opener
from tests.helpers.one_prompt import OnePromptAgent

ALICE, BOB = Caller("alice", "Alice"), Caller("bob", "Bob")
#: The module's own way to the tracer (the global provider's), before a test replaces it.
_GLOBAL_TRACER = _traces._tracer


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    """The spans the gateways of the test make, in memory (their tracer from a provider
    of the test's own, in place of the global one)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(_traces, "_tracer", lambda: provider.get_tracer(_traces.SCOPE))
    yield exporter
    provider.shutdown()


def _run(opener: Opener, go: Any, *, agent: OnePromptAgent | None = None, **given: Any) -> None:
    agent = agent or OnePromptAgent(keeps_history=True)

    async def main() -> None:
        settings = GatewaySettings(watch=False, show_all=False, **given)
        gw = Gateway(opener(), AgentPool([], 5.0), settings)
        await gw.start()
        try:
            with agent.serve() as server:
                await go(gw, agent, server.url)
        finally:
            await gw.close()

    asyncio.run(asyncio.wait_for(main(), 60))


def _named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def test_an_answered_prompt_is_one_span_and_its_forward_a_child(
    opener: Opener, spans: InMemorySpanExporter
) -> None:
    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        _, reg = await gw.register(ALICE, url, "t1")
        assert spans.get_finished_spans() == ()  # open: its span is not ended yet
        assert gw.traces.live() == 1
        await gw.answer(reg["id"], agent.prompt_id, BOB, {"approved": True})
        row = await gw.store.prompt(reg["id"], agent.prompt_id)
        assert row is not None
        (prompt,) = _named(spans, "hitl.prompt")
        (forward,) = _named(spans, "hitl.forward")
        assert dict(prompt.attributes or {}) == {
            "hitl.prompt.id": agent.prompt_id,
            "a2a.task.id": "t1",
            "a2a.context.id": "ctx-1",
            "hitl.registration.id": reg["id"],
            "hitl.prompt.kind": "any",
            "hitl.deadline.policy": "remind",
            "hitl.prompt.resumed": False,
            "server.address": "127.0.0.1",
            "hitl.outcome": "answered",
        }
        assert prompt.start_time == int(row.first_seen * 1e9)  # from its opening
        assert forward.parent is not None and prompt.context is not None
        assert forward.parent.span_id == prompt.context.span_id
        assert forward.context is not None
        assert forward.context.trace_id == prompt.context.trace_id
        attrs = dict(forward.attributes or {})
        assert attrs["hitl.forward.result"] == "forwarded"
        assert attrs["a2a.message.id"] == agent.sends[0]["messageId"]
        assert attrs["hitl.forward.settling"] is False
        assert prompt.start_time <= forward.start_time <= forward.end_time  # type: ignore[operator]
        assert forward.end_time <= prompt.end_time  # type: ignore[operator]
        assert gw.traces.live() == 0

    _run(opener, go)


def test_a_passed_deadline_ends_the_span_expired(
    opener: Opener, spans: InMemorySpanExporter
) -> None:
    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        _, reg = await gw.register(ALICE, url, "t1")
        await gw._expire(reg["id"], agent.prompt_id)  # its timer fires
        (prompt,) = _named(spans, "hitl.prompt")
        assert (prompt.attributes or {})["hitl.outcome"] == "expired"
        (event,) = prompt.events
        assert event.name == "hitl.deadline"
        assert dict(event.attributes or {}) == {"hitl.deadline.followed": "closed"}
        assert _named(spans, "hitl.forward") == []

    _run(opener, go)


def test_a_default_answer_at_the_deadline_is_forwarded_under_the_prompts_span(
    opener: Opener, spans: InMemorySpanExporter
) -> None:
    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        policy = {"policy": "default", "answer": {"approved": False}}
        _, reg = await gw.register(ALICE, url, "t1", deadline=policy)
        await gw._expire(reg["id"], agent.prompt_id)
        (prompt,) = _named(spans, "hitl.prompt")
        (forward,) = _named(spans, "hitl.forward")
        attrs = dict(prompt.attributes or {})
        assert attrs["hitl.outcome"] == "defaulted"
        assert attrs["hitl.deadline.policy"] == "default"
        assert forward.parent is not None and prompt.context is not None
        assert forward.parent.span_id == prompt.context.span_id
        assert (forward.attributes or {})["hitl.forward.result"] == "forwarded"

    _run(opener, go)


def test_a_prompt_opened_before_a_restart_has_one_span_from_its_opening(
    opener: Opener, spans: InMemorySpanExporter
) -> None:
    """The first process's span is never ended (never exported); the process after the
    restart starts it at the answer with the prompt's first sighting as its start."""
    agent = OnePromptAgent(keeps_history=True)

    async def main() -> None:
        settings = GatewaySettings(watch=False, show_all=False)
        with agent.serve() as server:
            first = Gateway(opener(), AgentPool([], 5.0), settings)
            await first.start()
            _, reg = await first.register(ALICE, server.url, "t1")
            await first.close()
            again = Gateway(opener(), AgentPool([], 5.0), settings)
            await again.start()
            try:
                await again.answer(reg["id"], agent.prompt_id, BOB, {"approved": True})
                row = await again.store.prompt(reg["id"], agent.prompt_id)
            finally:
                await again.close()
        assert row is not None
        (prompt,) = _named(spans, "hitl.prompt")
        (forward,) = _named(spans, "hitl.forward")
        attrs = dict(prompt.attributes or {})
        assert attrs["hitl.prompt.resumed"] is True
        assert attrs["hitl.outcome"] == "answered"
        assert prompt.start_time == int(row.first_seen * 1e9)
        assert forward.parent is not None and prompt.context is not None
        assert forward.parent.span_id == prompt.context.span_id

    asyncio.run(asyncio.wait_for(main(), 60))


def test_a_prompt_the_agent_no_longer_asks_ends_withdrawn(
    opener: Opener, spans: InMemorySpanExporter
) -> None:
    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        _, reg = await gw.register(ALICE, url, "t1")
        agent.answer_elsewhere()
        await gw.registration(reg["id"], ALICE)  # read again: the prompt is gone
        (prompt,) = _named(spans, "hitl.prompt")
        assert (prompt.attributes or {})["hitl.outcome"] == "withdrawn"

    _run(opener, go)


@pytest.mark.parametrize("how", ["absent", "off"])
def test_without_the_extra_or_with_the_setting_off_nothing_is_traced(
    opener: Opener, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    given: dict[str, Any] = {}
    if how == "absent":  # the package cannot be imported, as without hitl-nb[otel]
        monkeypatch.setattr(_traces, "_tracer", _GLOBAL_TRACER)
        for name in [n for n in sys.modules if n.split(".")[0] == "opentelemetry"]:
            monkeypatch.setitem(sys.modules, name, None)
        monkeypatch.setitem(sys.modules, "opentelemetry", None)
    else:
        given["traces"] = False

    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        assert gw.traces.on is False
        _, reg = await gw.register(ALICE, url, "t1")
        reply = await gw.answer(reg["id"], agent.prompt_id, BOB, {"approved": True})
        assert reply.body["status"] == "forwarded"
        assert gw.traces.live() == 0

    _run(opener, go, **given)
    assert spans.get_finished_spans() == ()


class _HostileAgent(OnePromptAgent):
    """Its task's context id: long, beyond the BMP, with control characters (a lone
    surrogate is refused by the client's strict JSON before the gateway sees it)."""

    CONTEXT = "ctx-\U0001f600" + "\u00e9\u001b\u202e" * 2000

    def task(self) -> dict[str, Any]:
        return {**super().task(), "contextId": self.CONTEXT}


def test_hostile_ids_are_bounded_and_valid_text(
    opener: Opener, spans: InMemorySpanExporter
) -> None:
    task_id = "\u00fc" * 256  # the longest the gateway takes

    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        _, reg = await gw.register(ALICE, url, task_id)
        await gw.answer(reg["id"], agent.prompt_id, BOB, {"approved": True})
        for span in spans.get_finished_spans():
            for value in (span.attributes or {}).values():
                if isinstance(value, str):
                    assert len(value) <= MAX_TEXT
                    value.encode("utf-8")  # an exporter can encode it
        (prompt,) = _named(spans, "hitl.prompt")
        attrs = dict(prompt.attributes or {})
        assert attrs["a2a.task.id"] == task_id
        assert str(attrs["a2a.context.id"]).startswith("ctx-\U0001f600\u00e9")

    _run(opener, go, agent=_HostileAgent(keeps_history=True))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("p-1", "p-1", id="short"),
        pytest.param("x" * 300, "x" * (MAX_TEXT - 1) + "\u2026", id="long"),
        pytest.param("a\ud800b", "a?b", id="lone-surrogate"),
        pytest.param("\U0001f600" * 300, "\U0001f600" * (MAX_TEXT - 1) + "\u2026", id="emoji"),
    ],
)
def test_an_attributes_text_is_bounded(text: str, expected: str) -> None:
    assert bounded(text) == expected


@pytest.mark.parametrize(
    ("closed", "forwarded", "default", "outcome"),
    [
        ("answered", True, False, "answered"),
        ("answered", True, True, "defaulted"),
        ("closed by the agent", True, False, "answered_elsewhere"),
        ("closed by the agent", False, False, "withdrawn"),
        ("expired", False, False, "expired"),
    ],
)
def test_each_way_a_prompt_closes_is_one_outcome(
    closed: str, forwarded: bool, default: bool, outcome: str
) -> None:
    assert outcome_of_closed(closed, forwarded=forwarded, default=default) == outcome


def test_the_tracer_is_the_global_providers_named_hitl_nb(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from opentelemetry import trace

    asked: list[str] = []
    monkeypatch.setattr(trace, "get_tracer", lambda name, *a, **k: asked.append(name) or "t")
    assert GatewayTraces().on and asked == ["hitl_nb"]
