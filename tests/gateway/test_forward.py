"""The gateway's forward through the client's delivery engine (gateway/_forward.py on
client/_answer.py), both ways: an agent that keeps its task's history and one that
keeps none. The rule is the client's (tests/client/test_answer.py): the history proves
what it holds, its silence nothing, and a 409 to a first send is never ours. Each
forward's end is in the store and the audit trail once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.gateway import AgentPool, Caller, Forward, Gateway, GatewaySettings
from hitl_nb.gateway._sqlite import SQLiteStore
from tests.helpers.one_prompt import OnePromptAgent
from tests.helpers.until import until_async

KEEPS = pytest.mark.parametrize("keeps_history", [True, False], ids=["history", "no-history"])
YES = {"approved": True}
ALICE, BOB = Caller("alice", "Alice"), Caller("bob", "Bob")
ADMIN = Caller("dora", "Dora", admin=True)


async def _answer(
    gw: Gateway, agent: OnePromptAgent, url: str, *, elsewhere: bool = False
) -> tuple[str, Any]:
    """Register ``t1``, let Bob answer it (``elsewhere``: after another's answer was
    accepted at the agent): (the registration id, the reply or refusal)."""
    _, reg = await gw.register(ALICE, url, "t1")
    if elsewhere:
        agent.answer_elsewhere()
    try:
        return reg["id"], await gw.answer(reg["id"], agent.prompt_id, BOB, YES)
    except Exception as exc:  # GatewayError: a refusal
        return reg["id"], exc


async def _ended(gw: Gateway, reg_id: str, prompt_id: str) -> Forward:
    async def ended() -> Forward | None:
        fwd = await gw.store.forward(reg_id, prompt_id)
        return fwd if fwd is not None and fwd.state != "forwarding" else None

    found: Forward = await until_async(ended, timeout=30, what="the forward to end")
    return found


def _run(tmp_path: Path, agent: OnePromptAgent, go: Any) -> None:
    async def main() -> None:
        settings = GatewaySettings(watch=False, show_all=False)
        gw = Gateway(SQLiteStore(tmp_path / "gateway.sqlite"), AgentPool([], 5.0), settings)
        await gw.start()
        try:
            with agent.serve() as server:
                await go(gw, server.url)
        finally:
            await gw.close()

    asyncio.run(asyncio.wait_for(main(), 60))


@KEEPS
def test_a_forward_accepted_whose_reply_was_lost_is_settled_not_sent_again(
    tmp_path: Path, keeps_history: bool
) -> None:
    agent = OnePromptAgent(keeps_history=keeps_history, lose="after")

    async def go(gw: Gateway, url: str) -> None:
        reg_id, reply = await _answer(gw, agent, url)
        assert reply.status == 202 and reply.body["status"] == "forwarding"
        fwd = await _ended(gw, reg_id, agent.prompt_id)
        assert fwd.state == "forwarded" and fwd.detail == "the agent had accepted the answer"
        assert [(e.responder, e.action) for e in await gw.audit(ADMIN)] == [
            ("bob", "forwarding"),
            (None, "forwarded"),
        ]

    _run(tmp_path, agent, go)
    assert len(agent.sends) == 1 and agent.accepted == agent.sends[0]["messageId"]


@KEEPS
def test_a_409_to_the_first_send_is_another_answer_whatever_the_history(
    tmp_path: Path, keeps_history: bool
) -> None:
    """An agent without history once had the gateway count another's answer as its own
    (the prompt closed, nothing in the history to say whose): the agent refused this
    very message, so it is never ours."""
    agent = OnePromptAgent(keeps_history=keeps_history)

    async def go(gw: Gateway, url: str) -> None:
        reg_id, reply = await _answer(gw, agent, url, elsewhere=True)
        assert reply.status == 409 and reply.body["status"] == "closed"
        fwd = await gw.store.forward(reg_id, agent.prompt_id)
        assert fwd is not None and fwd.state == "failed"
        row = await gw.store.prompt(reg_id, agent.prompt_id)
        assert row is not None and row.closed == "closed by the agent"
        assert [(e.responder, e.action, e.status) for e in await gw.audit(ADMIN)] == [
            ("bob", "closed", 409)
        ]

    _run(tmp_path, agent, go)
    assert len(agent.sends) == 1 and agent.accepted == "m-elsewhere"


@KEEPS
def test_a_forward_lost_while_another_answer_was_accepted(
    tmp_path: Path, keeps_history: bool
) -> None:
    """The history shows the other answer: the same message is sent again and the
    agent's 409 closes the forward. Without a history nothing shows it: the prompt
    closed after ours was sent, and it counts as ours (the client's rule, the same)."""
    agent = OnePromptAgent(keeps_history=keeps_history, lose="before")

    async def go(gw: Gateway, url: str) -> None:
        reg_id, reply = await _answer(gw, agent, url)
        assert reply.status == 202
        fwd = await _ended(gw, reg_id, agent.prompt_id)
        settled = [(e.responder, e.action) for e in await gw.audit(ADMIN)]
        if keeps_history:
            assert fwd.state == "failed"
            assert settled == [("bob", "forwarding"), (None, "closed")]
        else:
            assert fwd.state == "forwarded"
            assert settled == [("bob", "forwarding"), (None, "forwarded")]

    _run(tmp_path, agent, go)
    assert agent.accepted == "m-elsewhere"
    assert len(agent.sends) == (2 if keeps_history else 1)
    assert len({m["messageId"] for m in agent.sends}) == 1
