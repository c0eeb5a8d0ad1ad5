"""The two-person rule: whoever registered a task cannot answer its prompts alone.

A prompt one answer settles refuses the registrant's answer (403, saying why, audited);
a ``consensus:N`` needs N people besides the registrant. The rule is the gateway's
setting (every task) or the registrant's choice at registration (their task), never
turned off by a registration where the setting turns it on. On each database."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from hitl_nb.gateway import AgentPool, Caller, Gateway, GatewayError, GatewaySettings
from hitl_nb.gateway._feed import FeedScope
from tests.gateway.conftest import Opener
from tests.helpers.one_prompt import OnePromptAgent

YES = {"approved": True}
ALICE, BOB, CAROL = Caller("alice", "Alice"), Caller("bob", "Bob"), Caller("carol", "Carol")
WHY = "a second person must answer this: the two-person rule is on, and you registered this task"

Go = Callable[[Gateway, OnePromptAgent, str], Awaitable[None]]


def _run(
    opener: Opener, go: Go, *, responders: list[str] | None = None, rule: bool = False
) -> None:
    agent = OnePromptAgent(keeps_history=True)
    if responders is not None:
        agent.env["allowed_responders"] = responders

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


async def _refused(gw: Gateway, reg_id: str, prompt_id: str, caller: Caller) -> GatewayError:
    with pytest.raises(GatewayError) as caught:
        await gw.answer(reg_id, prompt_id, caller, YES)
    return caught.value


def test_the_registrant_alone_is_refused_on_any_and_says_why(opener: Opener) -> None:
    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        _, reg = await gw.register(ALICE, url, "t1")
        assert reg["two_person"] is True
        refused = await _refused(gw, reg["id"], agent.prompt_id, ALICE)
        assert (refused.status, refused.message) == (403, WHY)
        assert agent.sends == []  # nothing went to the agent
        # Her view says so before she tries; Bob's says he may answer.
        (mine,) = (await gw.registration(reg["id"], ALICE))["prompts"]
        assert (mine["two_person"], mine["may_answer"], mine["why_not"]) == (True, False, WHY)
        (his,) = (await gw.registration(reg["id"], BOB))["prompts"]
        assert (his["may_answer"], his["why_not"]) == (True, None)
        # The refusal is in the audit trail, in words.
        (entry,) = await gw.store.audit([reg["id"]])
        assert (entry.responder, entry.action, entry.status, entry.reason) == (
            "alice",
            "refused",
            403,
            WHY,
        )
        reply = await gw.answer(reg["id"], agent.prompt_id, BOB, YES)
        assert reply.body["status"] == "forwarded"
        assert len(agent.sends) == 1

    _run(opener, go, rule=True)


def test_specific_names_the_registrant_yet_she_cannot_answer_alone(opener: Opener) -> None:
    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        _, reg = await gw.register(ALICE, url, "t1", two_person=True)
        refused = await _refused(gw, reg["id"], agent.prompt_id, ALICE)
        assert (refused.status, refused.message) == (403, WHY)
        scope = FeedScope(ALICE, registered=True, registration=reg["id"])
        items, _ = await gw._feed_listing(scope, 10)
        assert [(i.two_person, i.may_answer, i.why_not) for i in items] == [(True, False, WHY)]

    _run(opener, go, responders=["specific:alice", "specific:bob"])


def test_consensus_needs_n_people_besides_the_registrant(opener: Opener) -> None:
    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        _, reg = await gw.register(ALICE, url, "t1", two_person=True)
        rid, pid = reg["id"], agent.prompt_id
        # The registrant and one other: not enough (hers does not count).
        refused = await _refused(gw, rid, pid, ALICE)
        assert refused.status == 403
        assert "your answer would not count" in refused.message
        assert "2 other people must agree" in refused.message
        held = await gw.answer(rid, pid, BOB, YES)
        assert (held.status, held.body["status"], held.body["agreeing"]) == (202, "collecting", 1)
        assert agent.sends == []
        # Two others: forwarded, for those two.
        reply = await gw.answer(rid, pid, CAROL, YES)
        assert reply.body["status"] == "forwarded"
        assert sorted(reply.body["responders"]) == ["bob", "carol"]
        assert len(agent.sends) == 1

    _run(opener, go, responders=["consensus:2"])


def test_without_the_rule_the_registrant_answers_as_before(opener: Opener) -> None:
    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        _, reg = await gw.register(ALICE, url, "t1")
        assert reg["two_person"] is False
        (view,) = reg["prompts"]
        assert (view["two_person"], view["may_answer"]) == (False, True)
        reply = await gw.answer(reg["id"], agent.prompt_id, ALICE, YES)
        assert reply.body["status"] == "forwarded"

    _run(opener, go)


def test_a_registration_cannot_turn_off_the_administrators_rule(opener: Opener) -> None:
    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        with pytest.raises(GatewayError) as caught:
            await gw.register(ALICE, url, "t1", two_person=False)
        assert caught.value.status == 403
        assert "a registration cannot turn it off" in caught.value.message
        assert await gw.store.count_registrations() == 0  # nothing registered
        with pytest.raises(GatewayError) as bad:
            await gw.register(ALICE, url, "t1", two_person="yes")
        assert (bad.value.status, bad.value.message) == (400, "two_person must be true or false")
        _, reg = await gw.register(ALICE, url, "t1", two_person=True)
        assert reg["two_person"] is True
        assert (await _refused(gw, reg["id"], agent.prompt_id, ALICE)).status == 403

    _run(opener, go, rule=True)


def test_the_registrants_choice_is_stored_and_kept(opener: Opener) -> None:
    """Read back by a new store (a restart), and not turned on later by registering the
    same task again (the rule is chosen when it is first registered)."""

    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        _, reg = await gw.register(ALICE, url, "t1", two_person=True)
        again = opener()
        await again.open()
        try:
            stored = await again.registration(reg["id"])
            assert stored is not None and stored.two_person is True
        finally:
            await again.close()
        created, same = await gw.register(BOB, url, "t1")
        assert (created, same["two_person"]) == (False, True)

    _run(opener, go)

    async def later(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        await gw.register(ALICE, url, "t1")
        with pytest.raises(GatewayError) as caught:
            await gw.register(ALICE, url, "t1", two_person=True)
        assert caught.value.status == 409

    _run(opener, later)


def test_an_unnamed_caller_cannot_keep_the_rule(opener: Opener) -> None:
    async def go(gw: Gateway, agent: OnePromptAgent, url: str) -> None:
        _, reg = await gw.register(ALICE, url, "t1", two_person=True)
        refused = await _refused(gw, reg["id"], agent.prompt_id, Caller(None, "anonymous"))
        assert refused.status == 403
        assert "cannot tell whether you registered it" in refused.message

    _run(opener, go)
