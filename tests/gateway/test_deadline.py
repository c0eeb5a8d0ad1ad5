"""Deadline policies per registration (hitl_nb/gateway/_deadline*.py), end to end with
the mock agent and a real gateway, on each store: ``escalate`` mails the named people,
``default`` forwards the registrant's answer once, ``cancel`` cancels the task;
``escalate`` to a team channel posts one message in words to a real webhook receiver and
makes nobody a responder; what is refused at registration; an agent that refuses the
default, or the cancel, or is down: audited as failed; two replicas on one database
fire once; a gateway stopped before the deadline and started after fires once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from hitl_nb._backoff import Backoff
from hitl_nb.a2a import TaskState
from hitl_nb.client import HitlClient
from hitl_nb.gateway import AgentPool, Caller, Gateway, GatewayError, GatewaySettings, Notifier
from hitl_nb.gateway._deadline import DeadlinePolicy, PolicyRefused, parse_policy
from hitl_nb.mock_agent import MockAgent, Scenario, Step
from hitl_nb.mock_agent._scenarios import APPROVAL_SCHEMA
from tests.gateway.conftest import Opener
from tests.helpers.smtp import SmtpServer, smtp_server
from tests.helpers.tasks import answers_at_agent, start_task
from tests.helpers.tiny_server import Conn, Request, TinyServer, serve
from tests.helpers.until import until_async

ALICE = Caller("alice", "Alice")
CAROL = Caller("carol", "Carol")
NO = {"approve": False}


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


def _gateway(opener: Opener, notify: Any = None, **settings: Any) -> Gateway:
    chosen = {"lease_seconds": 1.0, "watch": False, "show_all": False, **settings}
    gw = Gateway(opener(), AgentPool([], 5.0), GatewaySettings(**chosen), notify=notify)
    gw.deadlines.cancel_tries = 3
    gw.deadlines.cancel_backoff = Backoff(0.05, 0.2)
    return gw


@asynccontextmanager
async def _running(opener: Opener, notify: Any = None, **settings: Any) -> AsyncIterator[Gateway]:
    """A started :func:`_gateway`, closed after the block."""
    gw = _gateway(opener, notify, **settings)
    await gw.start()
    try:
        yield gw
    finally:
        await gw.close()


async def _entries(gw: Gateway, reg_id: str) -> list[Any]:
    return [e for e in await gw.store.audit([reg_id]) if e.display and "deadline" in e.display]


async def _fired(gw: Gateway, reg_id: str, count: int = 1) -> list[Any]:
    async def enough() -> list[Any] | None:
        entries = await _entries(gw, reg_id)
        return entries if len(entries) >= count else None

    return list(await until_async(enough, timeout=30, what="the deadline's action"))


async def _task_state(url: str, task_id: str) -> TaskState:
    async with HitlClient(url) as client:
        return (await client.get_task(task_id)).status.state


# -- the policy as given ----------------------------------------------------------------

ALL = ["remind", "escalate", "default", "cancel"]


@pytest.mark.parametrize(
    ("given", "status", "words"),
    [
        pytest.param("cancel", 400, "JSON object", id="not-an-object"),
        pytest.param({"policy": "pause"}, 400, "one of remind", id="unknown-policy"),
        pytest.param({"policy": "cancel", "to": ["x"]}, 400, "unknown member", id="stray"),
        pytest.param({"policy": "default"}, 400, "deadline.answer", id="no-answer"),
        pytest.param({"policy": "escalate"}, 422, "deadline.to", id="nobody"),
        pytest.param({"policy": "escalate", "to": ["c"], "before": -1}, 400, "before", id="bef"),
        pytest.param({"policy": "escalate", "to": ["c"], "channel": "ops"}, 422, "ops", id="ch"),
    ],
)
def test_a_malformed_policy_is_refused_naming_what(given: Any, status: int, words: str) -> None:
    with pytest.raises(PolicyRefused) as refused:
        parse_policy(given, admin_default="remind", allowed=ALL, channels=["*"])
    assert refused.value.status == status
    assert words in refused.value.message


def test_a_policy_not_allowed_is_refused_and_none_is_the_admin_default() -> None:
    with pytest.raises(PolicyRefused) as refused:
        parse_policy({"policy": "cancel"}, admin_default="remind", allowed=["remind"], channels=[])
    assert refused.value.status == 422
    assert "'cancel' is not allowed here (allowed: remind)" in refused.value.message
    chosen = parse_policy(None, admin_default="cancel", allowed=["remind"], channels=None)
    assert chosen == DeadlinePolicy("cancel")
    with pytest.raises(PolicyRefused, match="sends none"):
        parse_policy(
            {"policy": "escalate", "to": ["c"]}, admin_default="remind", allowed=ALL, channels=None
        )


# -- end to end -------------------------------------------------------------------------


def test_default_forwards_the_registrants_answer_once_at_the_deadline(
    opener: Opener, agent: MockAgent
) -> None:
    async def go() -> None:
        async with _running(opener) as gw:
            task = await start_task(agent.url, "deadline", deadline_seconds=1.5)
            _, reg = await gw.register(
                ALICE, agent.url, task.id, {"policy": "default", "answer": NO}
            )
            assert reg["deadline"] == {"policy": "default", "answer": NO}
            (entry,) = await _fired(gw, reg["id"])
            assert (entry.action, entry.responder, entry.display) == (
                "forwarded",
                "deadline default",
                "default at deadline",
            )
            got = await answers_at_agent(agent.url, task.id)
            assert [a["payload"] for a in got] == [NO]
            row = await gw.store.prompt(reg["id"], reg["prompts"][0]["prompt_id"])
            assert row is not None and row.closed == "answered"

    asyncio.run(go())


def test_a_default_that_does_not_fit_the_prompt_is_refused_at_registration(
    opener: Opener, agent: MockAgent
) -> None:
    async def go() -> None:
        async with _running(opener) as gw:
            task = await start_task(agent.url, "deadline", deadline_seconds=60)
            policy = {"policy": "default", "answer": {"approve": "yes"}}
            with pytest.raises(GatewayError) as refused:
                await gw.register(ALICE, agent.url, task.id, policy)
            assert refused.value.status == 422
            assert "field 'approve': expected boolean" in refused.value.message
            assert await gw.store.count_registrations() == 0

    asyncio.run(go())


def test_a_default_the_agent_refuses_is_audited_as_failed(opener: Opener, agent: MockAgent) -> None:
    async def go() -> None:
        async with _running(opener) as gw:
            task = await start_task(agent.url, "deadline", deadline_seconds=1.5)
            _, reg = await gw.register(
                ALICE, agent.url, task.id, {"policy": "default", "answer": NO}
            )
            async with HitlClient(agent.url) as client:  # the agent closes its prompt
                await client.cancel(task.id)
            (entry,) = await _fired(gw, reg["id"])
            assert entry.action == "failed"
            assert entry.responder == "deadline default"
            assert await answers_at_agent(agent.url, task.id) == []

    asyncio.run(go())


def test_cancel_cancels_the_task_at_the_deadline(opener: Opener, agent: MockAgent) -> None:
    async def go() -> None:
        async with _running(opener) as gw:
            task = await start_task(agent.url, "deadline", deadline_seconds=1.5)
            _, reg = await gw.register(ALICE, agent.url, task.id, {"policy": "cancel"})
            (entry,) = await _fired(gw, reg["id"])
            assert (entry.action, entry.display) == ("cancelled", "cancel at deadline")
            assert await _task_state(agent.url, task.id) is TaskState.CANCELED
            row = await gw.store.prompt(reg["id"], reg["prompts"][0]["prompt_id"])
            assert row is not None and row.closed == "expired"

    asyncio.run(go())


def test_cancel_to_an_agent_that_refuses_is_tried_again_then_audited_failed(
    opener: Opener, agent: MockAgent
) -> None:
    async def go() -> None:
        async with _running(opener) as gw:
            task = await start_task(agent.url, "deadline", deadline_seconds=1.5)
            _, reg = await gw.register(ALICE, agent.url, task.id, {"policy": "cancel"})
            async with HitlClient(agent.url) as client:  # answered at the agent: completed
                prompt_id = reg["prompts"][0]["prompt_id"]
                await client.respond(task.id, prompt_id, {"approve": True}, wait=True)
            assert await _task_state(agent.url, task.id) is TaskState.COMPLETED
            (entry,) = await _fired(gw, reg["id"])
            assert entry.action == "failed"
            assert "(3 tries)" in (entry.reason or "")

    asyncio.run(go())


def test_cancel_to_an_agent_that_is_down_is_audited_failed(opener: Opener) -> None:
    async def go() -> None:
        async with _running(opener) as gw:
            with MockAgent() as gone:
                task = await start_task(gone.url, "deadline", deadline_seconds=2)
                _, reg = await gw.register(ALICE, gone.url, task.id, {"policy": "cancel"})
            (entry,) = await _fired(gw, reg["id"])
            assert entry.action == "failed"
            assert "could not be cancelled" in (entry.reason or "")

    asyncio.run(go())


def test_escalate_mails_the_named_people_before_the_deadline(
    opener: Opener, agent: MockAgent
) -> None:
    with smtp_server() as smtp:
        asyncio.run(_escalate(opener, agent, smtp))


async def _escalate(opener: Opener, agent: MockAgent, smtp: SmtpServer) -> None:
    settings = {
        "notify_smtp_host": "127.0.0.1",
        "notify_smtp_port": smtp.port,
        "notify_smtp_security": "none",
        "notify_from": "hitl@example.org",
        "notify_address_template": "{name}@example.org",
        "notify_every": 0.0,
        "notify_remind_before": 0.0,
    }

    def notify(gw: Gateway) -> Notifier:
        return Notifier(
            gw.settings, gw.store, lambda: "https://hub.example.org/", hub=True, owner=gw.replica
        )

    async with _running(opener, notify, **settings) as gw:
        task = await start_task(agent.url, "deadline", deadline_seconds=3)
        policy = {"policy": "escalate", "to": ["carol"], "before": 1.5}
        _, reg = await gw.register(ALICE, agent.url, task.id, policy)
        (entry,) = await _fired(gw, reg["id"])
        assert entry.action == "escalated"
        row = await gw.store.prompt(reg["id"], reg["prompts"][0]["prompt_id"])
        assert row is not None and row.closed is None  # told before the deadline

        def escalated() -> list[Any]:
            return [
                r.message
                for r in smtp.inbox.received
                if "carol@example.org" in r.rcpt_tos and "Escalated" in str(r.message["Subject"])
            ]

        await until_async(lambda: _soon(escalated()), timeout=30, what="carol's mail")
        # It never widens who may answer: carol is told, not made a responder.
        after = (await gw.registration(reg["id"], ALICE))["prompts"][0]
        assert after["allowed_responders"] == reg["prompts"][0]["allowed_responders"]


async def _soon(value: Any) -> Any:
    return value or None


#: A prompt only bob may answer, closing 3 s after it is asked.
FOR_BOB = Scenario(
    "bob-by-deadline",
    "Ship build 42? (bob's to answer, by a deadline 3 s away)",
    steps=[Step("Ship build 42?", APPROVAL_SCHEMA, ["specific:bob"], deadline_seconds=3)],
)
#: The team channel the escalation names: a Slack-compatible incoming webhook.
OPS = "ops.example.org"


def _ok(request: Request, conn: Conn) -> None:
    conn.answer({"ok": True})


# The store's part is the email test's, on each database; this one runs on SQLite.
@pytest.mark.parametrize("opener", ["sqlite"], indirect=True)
def test_escalate_posts_one_message_to_a_team_channel_and_widens_nobody(
    opener: Opener,
) -> None:
    with serve(_ok) as hook, MockAgent(scenarios=[FOR_BOB]) as bobs:
        asyncio.run(_escalate_to_channel(opener, bobs, hook))


async def _escalate_to_channel(opener: Opener, agent: MockAgent, hook: TinyServer) -> None:
    # Only the team channel of OPS: the prompt's own note (bob's) and the registrant's
    # outcome reach nobody here (no email), so the receiver hears of the escalation only.
    settings = {"notify_team_webhooks": {OPS: hook.url + "/hooks/ops"}, "notify_every": 0.0}

    def notify(gw: Gateway) -> Notifier:
        return Notifier(
            gw.settings, gw.store, lambda: "https://hub.example.org/", hub=True, owner=gw.replica
        )

    async with _running(opener, notify, **settings) as gw:
        task = await start_task(agent.url, FOR_BOB.name)
        policy = {"policy": "escalate", "to": ["carol"], "channel": OPS, "before": 1.5}
        _, reg = await gw.register(ALICE, agent.url, task.id, policy)
        (prompt,) = reg["prompts"]
        (entry,) = await _fired(gw, reg["id"])
        assert entry.action == "escalated"
        # carol has no way to be told here (no email): the trail says whom it reached
        assert entry.reason == (
            f"told team channel {OPS} that the prompt still waits (who may answer is "
            "unchanged); no notification reaches carol"
        )

        async def posted() -> list[Any] | None:
            return list(hook.requests) or None

        (got,) = await until_async(posted, timeout=30, what="the team channel's message")
        assert got.path == "/hooks/ops"
        text = got.json()["text"]
        assert "has no answer yet" in text and "Ship build 42?" in text  # names the prompt
        assert "It closes" in text and "(in less than a minute)" in text  # the time left
        assert "who may answer it is unchanged" in text

        # Someone the escalation told, not among allowed_responders, is refused.
        with pytest.raises(GatewayError) as refused:
            await gw.answer(reg["id"], prompt["prompt_id"], CAROL, {"approve": True})
        assert refused.value.status == 403
        assert await answers_at_agent(agent.url, task.id) == []
        after = (await gw.registration(reg["id"], ALICE))["prompts"][0]
        assert after["allowed_responders"] == ["specific:bob"]

        # At the deadline the prompt closes (as remind); the channel heard once.
        async def closed() -> bool:
            row = await gw.store.prompt(reg["id"], prompt["prompt_id"])
            return row is not None and row.closed == "expired"

        await until_async(closed, timeout=30, what="the prompt to close at its deadline")
        await gw.deadlines.round(time.time() + 5)  # a round more: nothing fires again
        assert len(await _entries(gw, reg["id"])) == 1
        assert len(hook.requests) == 1
        assert await gw.store.outbox.states() == {"sent": 1}  # and nothing more to send


# -- once -------------------------------------------------------------------------------


def test_two_replicas_on_one_database_fire_once(opener: Opener, agent: MockAgent) -> None:
    async def go() -> None:
        a, b = _gateway(opener), _gateway(opener)
        await a.start()
        await b.start()
        try:
            task = await start_task(agent.url, "deadline", deadline_seconds=2)
            _, reg = await a.register(
                ALICE, agent.url, task.id, {"policy": "default", "answer": NO}
            )
            row = await b.store.prompt(reg["id"], reg["prompts"][0]["prompt_id"])
            assert row is not None
            b._arm(row)  # both replicas time it
            await _fired(a, reg["id"])
            await asyncio.sleep(2.0)  # a few rounds of both
            assert len(await _entries(a, reg["id"])) == 1
            assert [x["payload"] for x in await answers_at_agent(agent.url, task.id)] == [NO]
        finally:
            await a.close()
            await b.close()

    asyncio.run(go())


def test_a_gateway_stopped_before_the_deadline_and_started_after_fires_once(
    opener: Opener, agent: MockAgent
) -> None:
    async def go() -> None:
        a = _gateway(opener)
        await a.start()
        task = await start_task(agent.url, "deadline", deadline_seconds=1.5)
        _, reg = await a.register(ALICE, agent.url, task.id, {"policy": "cancel"})
        await a.close()
        await asyncio.sleep(2.0)  # the deadline passes while no gateway runs
        async with _running(opener) as b:
            await _fired(b, reg["id"])
            await asyncio.sleep(1.5)  # more rounds: nothing fires again
            (entry,) = await _entries(b, reg["id"])
            assert entry.action == "cancelled"
            assert await _task_state(agent.url, task.id) is TaskState.CANCELED
        async with _running(opener) as c:  # a restart after it fired: nothing again
            await asyncio.sleep(1.0)
            assert len(await _entries(c, reg["id"])) == 1

    asyncio.run(go())
