"""How an answer travels: each sender's verdict, against a real agent or a tiny gateway.

The direct sender answers the mock agent on 127.0.0.1; the gateway sender talks to a
tiny server that answers as the Jupyter server's responder gateway would, or with
nonsense. The cards built on them are tested in ``test_conversation.py``,
``test_live.py`` and, against a real Jupyter server, ``tests/server/test_cards.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from typing import Any

import pytest

from hitl_nb.a2a import Message, Part, Role, Task, TaskState, TaskStatus
from hitl_nb.client import GatewayClient, GatewayInfo, Reconnect, SyncHitlClient, prompt_of
from hitl_nb.errors import (
    AnswerOutcomeUnknown,
    HitlError,
    PromptConflict,
    ProtocolViolation,
    ResponseInvalid,
    TransportError,
)
from hitl_nb.mock_agent import MockAgent
from hitl_nb.notebook._gateway_link import GatewayLink
from hitl_nb.notebook._link import Link
from hitl_nb.notebook._outcomes import ACCEPTED
from hitl_nb.notebook._senders import DirectSender, GatewaySender
from hitl_nb.notebook._worker import shared_loop
from hitl_nb.policy import Tally
from hitl_nb.spec import PromptEnvelope
from tests.helpers.tiny_server import serve
from tests.helpers.until import until


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


@pytest.fixture
def link(agent: MockAgent) -> Iterator[Link]:
    with SyncHitlClient(agent.url) as client:
        yield Link(client)


def _prompt(link: Link) -> tuple[Task, PromptEnvelope]:
    task = link.sync.send({"scenario": "approval"})
    assert isinstance(task, Task)
    found = prompt_of(task)
    assert found is not None and hasattr(found, "envelope")
    return task, found.envelope


def test_an_accepted_answer_brings_the_task_and_its_words(link: Link) -> None:
    task, envelope = _prompt(link)
    sender = DirectSender(link, envelope)
    verdict = link.run(sender.send(task, {"approve": True}, note="sent as bob", wait=True))
    assert verdict.outcome.status == "accepted" and not verdict.open_again
    assert verdict.task is not None and verdict.task.status.state is TaskState.COMPLETED
    assert verdict.words.startswith(f"{ACCEPTED} (sent as bob)")
    assert verdict.receipt is not None and verdict.receipt.prompt_id == envelope.prompt_id


def test_the_agents_422_opens_the_form_again_and_its_409_closes_it(
    agent: MockAgent, link: Link
) -> None:
    task, envelope = _prompt(link)
    sender = DirectSender(link, envelope)
    refused = link.run(sender.send(task, {"approve": "yes"}, validate=False))
    assert refused.outcome.status == "invalid" and refused.open_again
    assert isinstance(refused.outcome.error, ResponseInvalid)
    assert [e["path"] for e in refused.outcome.validation_errors] == ["/approve"]
    with SyncHitlClient(agent.url) as other:  # someone else answers first
        other.respond(task.id, envelope.prompt_id, {"approve": False})
    late = link.run(sender.send(task, {"approve": True}))
    assert late.outcome.status == "conflict" and not late.open_again
    assert isinstance(late.outcome.error, PromptConflict)  # the card reads the task for why


def test_an_agent_gone_is_failed_and_open_again_unless_the_answer_may_have_landed() -> None:
    quick = Reconnect(max_reconnects=1, backoff=0.05)
    with MockAgent() as gone, SyncHitlClient(gone.url, reconnect=quick) as client:
        link = Link(client)
        task, envelope = _prompt(link)
        gone.stop()
        verdict = link.run(DirectSender(link, envelope).send(task, {"approve": True}))
    assert verdict.outcome.status == "failed"
    assert isinstance(verdict.outcome.error, TransportError)
    assert verdict.open_again is not isinstance(verdict.outcome.error, AnswerOutcomeUnknown)


# --- through a responder gateway ----------------------------------------------------------

PROMPT = "0b7a5a5e-4c1f-4a64-9d55-4f3c6f1b2a10"


def _gateway(url: str, name: str = "alice") -> closing[GatewayLink]:
    client = GatewayClient(GatewayInfo(url + "/", "t", "test"), timeout=5)
    return closing(GatewayLink(client, {"name": name, "display_name": name.title()}))


def _run(coro: Any) -> Any:
    """Run a sender's coroutine on the notebook's shared loop, as the cards do."""
    return shared_loop().run(coro, timeout=30)


def _server(answer: dict[str, Any], view: dict[str, Any] | None, seen: list[Any]) -> Any:
    def handle(req: Any, conn: Any) -> None:
        seen.append((req.method, req.path))
        if req.method == "POST" and req.path.endswith("/tasks"):
            conn.answer({"id": "reg-1", "prompts": []}, status=201)
        elif req.method == "POST":
            conn.answer(answer, status=int(answer.pop("_status", 200)))
        else:
            conn.answer({"id": "reg-1", "prompts": [view] if view else []})

    return handle


def test_a_held_consensus_answer_is_kept_as_the_ballot_with_the_count() -> None:
    seen: list[Any] = []
    reply = {"status": "collecting", "agreeing": 1, "needed": 2, "answers": 2, "disagreement": True}
    with serve(_server(reply, None, seen)) as server, _gateway(server.url) as gateway:
        sender = GatewaySender(gateway, PROMPT, 2, task=("http://agent.example/", "t1"))
        verdict = _run(sender.send({"approve": True}))
    assert verdict.outcome.status == "held" and verdict.open_again
    assert "from alice" in verdict.outcome.message
    assert verdict.tally == Tally(1, 2, 2, True)
    assert sender.ballot == {"approve": True} and sender.registration == "reg-1"
    assert [m for m, _ in seen] == ["POST", "POST"]  # registered once, then answered


def test_an_agreed_answer_brings_who_agreed_and_the_gateways_count_enough() -> None:
    seen: list[Any] = []
    reply = {"status": "forwarded", "responders": ["alice", "bob"]}
    view = {
        "prompt_id": PROMPT,
        "state": "forwarded",
        "agreeing": 2,
        "answers": 3,
        "forwarded_for": ["alice", "bob"],
    }
    with serve(_server(reply, view, seen)) as server, _gateway(server.url) as gateway:
        sender = GatewaySender(gateway, PROMPT, 2, registration="reg-1")
        verdict = _run(sender.send({"approve": True}))
        done = _task(TaskState.COMPLETED)
        outcome, tally = _run(sender.closed(done))
    assert verdict.outcome.status == "accepted" and not verdict.open_again
    assert verdict.words == f"{ACCEPTED} (agreed by alice, bob)"
    assert verdict.tally == Tally(2, 2, 3, False)
    assert outcome is not None and outcome.status == "accepted" and outcome.task is done
    assert "2 people agreed: alice, bob" in outcome.message and tally == verdict.tally


def test_another_agreed_answer_is_a_conflict_and_nothing_forwarded_says_nothing() -> None:
    others = {"prompt_id": PROMPT, "state": "forwarded", "forwarded_for": ["bob", "carol"]}
    with serve(_server({}, others, [])) as server, _gateway(server.url) as gateway:
        sender = GatewaySender(gateway, PROMPT, 2, registration="reg-1")
        outcome, _ = _run(sender.closed(_task(TaskState.COMPLETED)))
    assert outcome is not None and outcome.status == "conflict"
    assert "bob, carol agreed on another answer" in outcome.message
    still = {"prompt_id": PROMPT, "state": "open", "agreeing": "x"}  # an odd count: 0
    with serve(_server({}, still, [])) as server, _gateway(server.url) as gateway:
        sender = GatewaySender(gateway, PROMPT, 2, registration="reg-1")
        outcome, tally = _run(sender.closed(_task(TaskState.FAILED)))
    assert outcome is None and tally == Tally(0, 2, 0, False)


@pytest.mark.parametrize(
    ("reply", "status", "open_again", "error"),
    [
        (
            {"_status": 409, "status": "closed", "message": "answered"},
            "conflict",
            False,
            PromptConflict,
        ),
        ({"_status": 403, "message": "the prompt is for bob"}, "refused", True, HitlError),
        ({"_status": 200, "x": 1}, "accepted", False, None),
    ],
)
def test_the_gateways_refusals_come_back_as_verdicts(
    reply: dict[str, Any], status: str, open_again: bool, error: type | None
) -> None:
    with serve(_server(dict(reply), None, [])) as server, _gateway(server.url) as gateway:
        sender = GatewaySender(gateway, PROMPT, 1, registration="reg-1")
        verdict = _run(sender.send({"approve": True}))
    assert (verdict.outcome.status, verdict.open_again) == (status, open_again)
    if error is not None:
        assert isinstance(verdict.outcome.error, error)


def test_a_gateway_that_talks_nonsense_or_no_agent_url_sends_nothing() -> None:
    def nonsense(req: Any, conn: Any) -> None:
        conn.answer(b"<html>busy</html>", content_type="text/html")

    with serve(nonsense) as server, _gateway(server.url) as gateway:
        sender = GatewaySender(gateway, PROMPT, 1, registration="reg-1")
        verdict = _run(sender.send({"approve": True}))
        assert verdict.outcome.status == "failed" and verdict.open_again
        assert isinstance(verdict.outcome.error, ProtocolViolation)
        assert "at most once" in verdict.outcome.message  # it may have forwarded
        from_card = GatewaySender(gateway, PROMPT, 1, task=({"name": "a card"}, "t1"))
        verdict = _run(from_card.send({"approve": True}))
    assert verdict.outcome.status == "failed" and "needs the agent's URL" in str(verdict.outcome)
    assert from_card.registration is None


def test_a_gateway_connected_on_first_use_is_connected_once() -> None:
    made: list[GatewayLink] = []
    with serve(_server({"status": "forwarded"}, None, [])) as server:

        async def connect() -> GatewayLink:
            made.append(_gateway(server.url).thing)
            return made[-1]

        sender = GatewaySender(connect, PROMPT, 1, registration="reg-1")
        for _ in range(2):
            assert _run(sender.send({"approve": True})).outcome.accepted
    assert len(made) == 1
    made[0].close()


# --- what a gateway knows of the task -------------------------------------------------------


def _views(views: list[dict[str, Any]], seen: list[Any]) -> Any:
    """A gateway whose task view shows each of ``views`` in turn (the last one after)."""

    def handle(req: Any, conn: Any) -> None:
        seen.append((req.method, req.path))
        view = views.pop(0) if len(views) > 1 else views[0]
        conn.answer({"id": "reg-1", "prompts": [view]})

    return handle


def test_a_direct_answer_tells_the_watching_gateway_which_says_whose_answer_went(
    link: Link,
) -> None:
    task, envelope = _prompt(link)
    seen: list[Any] = []
    on_its_way = {"prompt_id": envelope.prompt_id, "state": "forwarding"}
    went = {"prompt_id": envelope.prompt_id, "state": "forwarded", "forwarded_for": ["bob"]}
    with (
        serve(_views([on_its_way, on_its_way, went], seen)) as server,
        _gateway(server.url) as gateway,
    ):
        sender = DirectSender(link, envelope)
        assert not sender.knows and link.run(sender.view()) is None  # nobody watches
        sender.watch(gateway, "reg-1")
        assert sender.knows
        verdict = link.run(sender.send(task, {"approve": True}, wait=True))
        assert verdict.outcome.accepted
        until(lambda: seen, what="the watching gateway told of the answer")
        # its first look reads "forwarding": the sender looks again for whose answer went
        theirs = link.run(sender.answered_elsewhere(_task(TaskState.COMPLETED), "alice"))
        assert len(seen) >= 3 and all(m == "GET" and p.endswith("/tasks/reg-1") for m, p in seen)
        mine = link.run(sender.answered_elsewhere(_task(TaskState.COMPLETED), "bob"))
    assert theirs is not None and theirs.status == "conflict", theirs
    assert "bob answered this prompt through" in theirs.message
    assert mine is not None and mine.status == "accepted" and "as bob" in mine.message


def test_a_watching_server_that_cannot_name_its_users_gave_the_one_users_answer(
    link: Link,
) -> None:
    _, envelope = _prompt(link)
    went = {"prompt_id": envelope.prompt_id, "state": "forwarded", "forwarded_for": []}
    with serve(_views([went], [])) as server:
        client = GatewayClient(GatewayInfo(server.url + "/", "t", "test"), timeout=5)
        with closing(GatewayLink(client, {"name": None, "display_name": "anonymous"})) as gateway:
            sender = DirectSender(link, envelope)
            sender.watch(gateway, "reg-1")
            outcome = link.run(sender.answered_elsewhere(_task(TaskState.COMPLETED), "alice"))
    assert outcome is not None and outcome.status == "accepted", outcome


def test_the_gateway_sender_keeps_the_first_registration_and_says_who_it_answers_as() -> None:
    went = {"prompt_id": PROMPT, "state": "forwarded", "forwarded_for": ["alice"]}
    with serve(_views([went], [])) as server, _gateway(server.url) as gateway:
        sender = GatewaySender(gateway, PROMPT, 1)
        assert not sender.knows and _run(sender.view()) is None  # not registered yet
        assert sender.registered("reg-1") and sender.knows
        assert not sender.registered("reg-2") and sender.registration == "reg-1"
        assert sender.refusal(None, False) is None and sender.refusal("alice", False) is None
        assert "says you are 'alice'" in (sender.refusal("bob", False) or "")
        assert "cannot be overridden" in (sender.refusal(None, True) or "")
        outcome = _run(sender.answered_elsewhere(_task(TaskState.COMPLETED)))
        moved, count = _run(sender.moved_on(_task(TaskState.COMPLETED)))
        vote = GatewaySender(gateway, PROMPT, 2, registration="reg-1")
        vote.ballot = {"approve": True}  # held: the gateway says whether ours went, and its count
        _, held_count = _run(vote.moved_on(_task(TaskState.COMPLETED)))
    assert outcome is not None and outcome.status == "accepted" and "as alice" in outcome.message
    assert moved is not None and moved.message == outcome.message and count is None
    assert held_count == Tally(0, 2, 0, False)

    async def not_asked() -> GatewayLink:
        raise AssertionError("a refusal does not connect")

    later = GatewaySender(not_asked, PROMPT, 1)
    assert later.refusal("bob", True) is None  # not connected yet: the gateway's reply speaks


def _task(state: TaskState) -> Task:
    message = Message("m1", Role.AGENT, [Part(text="done")], task_id="t1", context_id="c1")
    return Task("t1", "c1", TaskStatus(state, message))
