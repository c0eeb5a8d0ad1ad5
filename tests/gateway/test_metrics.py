"""The gateway's metrics, scraped and read back by prometheus_client's own parser: the
values after some answers, on each database; one registry per gateway, so two
gateways in one process do not collide; a single server's global registry."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from hitl_nb.gateway import AgentPool, Caller, Gateway, GatewayError, GatewaySettings
from hitl_nb.gateway._deadline import DeadlinePolicy
from hitl_nb.gateway._metrics import GatewayMetrics, outcome_of
from hitl_nb.gateway._store import Registration
from tests.gateway.conftest import Opener
from tests.helpers import wire
from tests.helpers.one_prompt import OnePromptAgent

ALICE, BOB = Caller("alice", "Alice"), Caller("bob", "Bob")


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """A scrape as {(sample name, labels): value}, through prometheus_client's parser."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def _run(opener: Opener, go: Any, *, rule: bool = True) -> None:
    agent = OnePromptAgent(keeps_history=True)

    async def main() -> None:
        settings = GatewaySettings(watch=False, show_all=False, two_person_rule=rule)
        gw = Gateway(opener(), AgentPool([], 5.0), settings)
        await gw.start()
        try:
            with agent.serve() as server:
                await go(gw, agent, server.url)
        finally:
            await gw.close()

    asyncio.run(asyncio.wait_for(main(), 60))


def test_a_scrape_after_some_answers_says_what_happened(opener: Opener) -> None:
    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        _, reg = await gw.register(ALICE, url, "t1")
        rid, pid = reg["id"], agent.prompt_id
        gw.metrics._gauges._at = -1e9  # type: ignore[union-attr]  # the cache, spent
        before = samples((await gw.metrics.exposition()).decode())
        assert before[("hitl_prompts_open", (("kind", "any"), ("policy", "remind")))] == 1
        assert before[("hitl_prompts_open", (("kind", "consensus"), ("policy", "remind")))] == 0
        assert before[("hitl_outbox_notes", ())] == 0
        for caller, payload in ((ALICE, {"approved": True}), (BOB, {"approved": "x"})):
            with pytest.raises(GatewayError):  # the registrant; an answer off the form
                await gw.answer(rid, pid, caller, payload)
        await gw.answer(rid, pid, BOB, {"approved": True})
        with pytest.raises(GatewayError):  # answered already
            await gw.answer(rid, pid, Caller("carol", "Carol"), {"approved": False})
        gw.metrics._gauges._at = -1e9  # type: ignore[union-attr]
        got = samples((await gw.metrics.exposition()).decode())
        answers = {
            o: got[("hitl_answers_total", (("outcome", o),))]
            for o in ("forwarded", "held", "refused", "conflict", "invalid", "failed")
        }
        assert answers == {
            "forwarded": 1,
            "held": 0,
            "refused": 1,
            "conflict": 1,
            "invalid": 1,
            "failed": 0,
        }
        assert got[("hitl_forwards_total", (("result", "forwarded"),))] == 1
        assert got[("hitl_forwards_total", (("result", "failed"),))] == 0
        assert got[("hitl_answer_wait_seconds_count", ())] == 1
        assert got[("hitl_answer_wait_seconds_bucket", (("le", "+Inf"),))] == 1
        assert 0 <= got[("hitl_answer_wait_seconds_sum", ())] < 60
        # its answer delivered
        assert got[("hitl_prompts_open", (("kind", "any"), ("policy", "remind")))] == 0
        assert got[("hitl_deadlines_total", (("followed", "closed"),))] == 0

    _run(opener, go)


def test_a_passed_deadline_is_counted_by_what_followed(opener: Opener) -> None:
    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        _, reg = await gw.register(ALICE, url, "t1")
        await gw._expire(reg["id"], agent.prompt_id)  # its timer fires
        got = samples((await gw.metrics.exposition()).decode())
        assert got[("hitl_deadlines_total", (("followed", "closed"),))] == 1

    _run(opener, go)


def test_open_prompts_are_counted_by_their_deadline_policy(opener: Opener) -> None:
    others = [OnePromptAgent(keeps_history=True) for _ in range(2)]
    policies = [{"policy": "cancel"}, {"policy": "default", "answer": {"approved": False}}]

    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        await gw.register(ALICE, url, "t1")  # the administrator's default: remind
        with others[0].serve() as a, others[1].serve() as b:
            for server, policy in zip((a, b), policies, strict=True):
                await gw.register(ALICE, server.url, "t1", deadline=policy)
        # escalate needs notifications to register: its rows written as register does
        reg = Registration("r-esc", "http://agent.invalid", "t9", "Alice", 0.0, "alice")
        await gw.store.add_registration(reg)
        await gw.store.deadlines.set_policy(
            reg.id, DeadlinePolicy("escalate", to=("carol",), before=60.0)
        )
        env = wire.envelope()
        await gw.store.see_prompt(reg.id, env["prompt_id"], None, env, None)
        gw.metrics._gauges._at = -1e9  # type: ignore[union-attr]
        got = samples((await gw.metrics.exposition()).decode())
        open_now = {
            (dict(labels)["kind"], dict(labels)["policy"]): value
            for (name, labels), value in got.items()
            if name == "hitl_prompts_open"
        }
        assert len(open_now) == 12  # every kind and policy, 0 before it happens
        assert {k: v for k, v in open_now.items() if v} == {
            ("any", "remind"): 1,
            ("any", "cancel"): 1,
            ("any", "default"): 1,
            ("any", "escalate"): 1,
        }

    _run(opener, go)


def test_two_gateways_in_one_process_count_apart() -> None:
    one, two = GatewayMetrics(CollectorRegistry()), GatewayMetrics(CollectorRegistry())
    one.answered("forwarded")
    got = {
        name: samples((asyncio.run(m.exposition())).decode())
        for name, m in (("one", one), ("two", two))
    }
    assert got["one"][("hitl_answers_total", (("outcome", "forwarded"),))] == 1
    assert got["two"][("hitl_answers_total", (("outcome", "forwarded"),))] == 0


def test_off_counts_nothing_and_a_global_registry_serves_the_latest_gateway() -> None:
    off = GatewayMetrics(None)
    off.answered("forwarded")
    off.notified("email", "sent")
    assert asyncio.run(off.exposition()) == b""
    shared = CollectorRegistry()
    first, second = GatewayMetrics(CollectorRegistry()), GatewayMetrics(CollectorRegistry())
    assert first.join_global(shared) and second.join_global(shared)
    second.notified("slack", "retried")
    from prometheus_client import generate_latest

    got = samples(generate_latest(shared).decode())
    assert got[("hitl_notifications_total", (("channel", "slack"), ("result", "retried")))] == 1


@pytest.mark.parametrize(
    ("status", "body", "outcome"),
    [
        (403, None, "refused"),
        (410, None, "refused"),
        (409, None, "conflict"),
        (422, None, "invalid"),
        (503, None, "failed"),
        (202, "collecting", "held"),
        (200, "forwarded", "forwarded"),
        (200, "rejected", "invalid"),
        (200, "closed", "conflict"),
    ],
)
def test_each_reply_is_one_outcome(status: int, body: str | None, outcome: str) -> None:
    assert outcome_of(status, body) == outcome
