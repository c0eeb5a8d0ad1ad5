"""Cards that answer through a real Jupyter server's responder gateway (S-3).

A real Jupyter server with the extension and three named users (alice, bob, carol),
the mock agent in a thread; the cards run here, each person with their own credentials.
Two people answering one consensus from their own kernels, and a click as the named
person, are in ``tests/notebook/test_gateway_browser.py`` (the same server).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hitl_nb.client import GatewayClient, GatewayInfo
from hitl_nb.client import _gateway as client_gateway
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook import Conversation, GatewayLink, GatewayUnavailable, _gateway_link
from tests.helpers.ports import free_port
from tests.helpers.until import until
from tests.server.conftest import answers_at_agent, start_task

pytestmark = pytest.mark.slow

YES, NO = {"approve": True}, {"approve": False}


@pytest.fixture(autouse=True)
def _fresh_discovery() -> Iterator[None]:
    """Each test discovers the kernel's gateway afresh (the result is kept per process)."""
    _gateway_link._found.clear()
    yield
    _gateway_link._found.clear()


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


@pytest.fixture
def server(named_lab: tuple[str, Path]) -> tuple[str, Path]:
    """The server (owned by alice, as under JupyterHub) and its runtime directory."""
    url, root = named_lab
    return url, root / ".runtime"


def _gateway(url: str, user: str) -> GatewayClient:
    return GatewayClient(GatewayInfo(url, f"{user}-token", f"{user}'s own token"))


def _chat(agent: MockAgent, task_id: str, gateway: Any) -> Conversation:
    return Conversation.attach(agent.url, task_id, gateway=gateway, poll_interval=0.3)


@pytest.mark.kernel
def test_a_named_prompt_is_answered_as_the_server_says_and_refused_to_others(
    server: tuple[str, Path], agent: MockAgent
) -> None:
    url, _ = server
    task = asyncio.run(start_task(agent.url, "specific", responder="alice"))
    with _gateway(url, "bob") as bob_gw, _gateway(url, "alice") as alice_gw:
        with _chat(agent, task.id, bob_gw) as bob, _chat(agent, task.id, alice_gw) as alice:
            card = bob.next_prompt(timeout=30)
            field = card.who.input
            assert (field.value, field.disabled) == ("bob", True)  # the server decides
            assert card.who.override not in card.who.widget.children  # no override here
            refused = bob.answer(YES)
            assert refused.status == "refused", refused
            assert "alice" in refused.message and "nothing was sent" in refused.message
            assert "refused" in card.status.value and "alice" in card.who.note.value
            # Naming someone else from code is not a way round the server.
            assert bob.answer(YES, responder="alice").status == "refused"
            assert bob.answer(YES, override=True).status == "refused"
            assert asyncio.run(answers_at_agent(agent.url, task.id)) == []
            assert card.is_open  # a refusal leaves the card open for the right person

            accepted = alice.answer(YES, timeout=60)
            assert accepted.status == "accepted", accepted
            assert alice.registration is not None
            assert alice.registration == bob.registration  # one registration per task
    assert len(asyncio.run(answers_at_agent(agent.url, task.id))) == 1


@pytest.mark.kernel
def test_consensus_collects_two_people_reports_disagreement_and_forwards_once(
    server: tuple[str, Path], agent: MockAgent
) -> None:
    url, _ = server
    task = asyncio.run(start_task(agent.url, "consensus", n=2))
    gws = {u: _gateway(url, u) for u in ("alice", "bob", "carol")}
    chats = {u: _chat(agent, task.id, gw) for u, gw in gws.items()}
    try:
        cards = {u: c.next_prompt(timeout=30) for u, c in chats.items()}
        held = chats["alice"].answer(YES)
        assert held.status == "held", held
        assert "once 2 people send the same answer" in held.message
        assert cards["alice"].who.tally == (1, 2, 1, False)
        assert "1 of 2 agreeing; 1 more needed" in cards["alice"].who.note.value
        differ = chats["carol"].answer(NO)
        assert differ.status == "held"
        assert cards["carol"].who.tally == (1, 2, 2, True)
        assert "The answers given so far differ" in cards["carol"].who.note.value
        assert "2 answers collected" in cards["carol"].to_text()  # nbconvert reads it too
        assert asyncio.run(answers_at_agent(agent.url, task.id)) == []

        done = chats["bob"].answer(YES, timeout=60)
        assert done.status == "accepted", done
        assert "alice" in done.message and "bob" in done.message
        # Alice's card learns from the gateway that her answer was the one that went;
        # carol's that another answer was agreed.
        alice_outcome = _after_held(cards["alice"])
        assert alice_outcome.status == "accepted", alice_outcome
        assert "2 people agreed: alice, bob" in alice_outcome.message
        assert "3 answers collected, 2 of 2 agreeing: enough" in cards["alice"].who.note.value
        carol_outcome = _after_held(cards["carol"])
        assert carol_outcome.status == "conflict", carol_outcome
        assert "yours was not sent" in carol_outcome.message
    finally:
        for chat in chats.values():
            chat.close()
        for gw in gws.values():
            gw.close()
    answers = asyncio.run(answers_at_agent(agent.url, task.id))
    assert len(answers) == 1 and answers[0]["payload"] == YES  # forwarded exactly once


def _after_held(card: Any, timeout: float = 60.0) -> Any:
    """The card's outcome once it is no longer ``held`` (the task moved on: the
    conversation follows it on its own thread)."""
    return until(
        lambda: card.outcome if card.outcome.status != "held" else None,
        timeout=timeout,
        what="the card's held answer to settle",
        interval=0.1,
    )


def test_an_unreachable_gateway_sends_nothing_and_never_goes_direct(agent: MockAgent) -> None:
    task = asyncio.run(start_task(agent.url, "specific", responder="alice"))
    dead = GatewayClient(GatewayInfo(f"http://127.0.0.1:{free_port()}/", "alice-token", "gone"))
    link = GatewayLink(dead, {"name": "alice", "display_name": "Alice"})
    with dead, _chat(agent, task.id, link) as chat:
        outcome = chat.answer(YES)
        assert outcome.status == "failed", outcome
        assert "could not be reached" in outcome.message
        assert "nothing was sent to the agent" in outcome.message
        assert chat.cards[-1].is_open
    assert asyncio.run(answers_at_agent(agent.url, task.id)) == []


def test_under_a_hub_a_server_that_does_not_answer_gets_the_answers_anyway(
    agent: MockAgent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # This process as a kernel of a hub's server that has stopped answering.
    conn = tmp_path / "kernel-5f1e.json"
    conn.write_text("{}")
    dead = f"http://127.0.0.1:{free_port()}/"
    (tmp_path / "jpserver-4242.json").write_text(json.dumps({"pid": 4242, "url": dead}))
    monkeypatch.setattr(client_gateway, "_connection_file", lambda: str(conn))
    hub = {
        "JPY_PARENT_PID": "4242",
        "JUPYTERHUB_API_TOKEN": "alice-token",
        "JUPYTERHUB_USER": "alice",
    }
    for name, value in hub.items():
        monkeypatch.setenv(name, value)
    assert client_gateway.find_gateway() is None  # not strict: "no gateway"
    with pytest.raises(GatewayUnavailable, match="did not answer") as caught:
        client_gateway.find_gateway(strict=True)
    assert caught.value.info.url == dead
    task = asyncio.run(start_task(agent.url, "specific", responder="alice"))
    with _chat(agent, task.id, None) as chat:
        assert chat.gateway is not None and chat.gateway.url == dead
        outcome = chat.answer(YES)
        assert outcome.status == "failed" and "could not be reached" in outcome.message
    assert asyncio.run(answers_at_agent(agent.url, task.id)) == []  # never went direct
    # Without a hub the server could not have named anyone: such cards stay direct.
    monkeypatch.delenv("JUPYTERHUB_API_TOKEN")
    _gateway_link._found.clear()
    assert _gateway_link.gateway_link(None) is None


def test_outside_a_server_cards_go_direct_unless_the_gateway_is_required(
    agent: MockAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("JPY_PARENT_PID", "HITL_NB_GATEWAY"):
        monkeypatch.delenv(name, raising=False)
    task = asyncio.run(start_task(agent.url, "approval"))
    with pytest.raises(GatewayUnavailable, match="no responder gateway"):
        Conversation.attach(agent.url, task.id, gateway=True)
    with pytest.raises(TypeError, match="gateway must be"):
        Conversation.attach(agent.url, task.id, gateway="yes")
    with Conversation.attach(agent.url, task.id) as chat:  # the default: direct here
        assert chat.gateway is None
        assert chat.answer(YES, timeout=60).status == "accepted"
