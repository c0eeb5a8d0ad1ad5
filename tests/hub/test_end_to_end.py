"""People on one JupyterHub, each in their own server and kernel, answering one agent's
prompts through the hub's hitl service (the issue's end-to-end tests).

Everything is real: the hub, its proxy, the service the hub started, the single-user
servers of alice, bob and carol, a kernel in each (started through the server's API, as
JupyterLab starts one), the mock agent on 127.0.0.1. Each kernel finds the service by
itself from the hub's service list; its identity is its server's ``JUPYTERHUB_API_TOKEN``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest

from hitl_nb.mock_agent import MockAgent
from tests.helpers.hub import USERS, Hub, wait_for_service
from tests.helpers.server_kernel import result_of, server_kernel
from tests.helpers.tasks import answers_at_agent
from tests.helpers.until import until

pytestmark = [pytest.mark.slow, pytest.mark.kernel]

YES, NO = {"approve": True}, {"approve": False}
Run = Callable[[str], str]


@pytest.fixture(scope="module")
def agent() -> Iterator[MockAgent]:
    with MockAgent() as running:
        yield running


@pytest.fixture(scope="module")
def kernels(hub: Hub) -> Iterator[dict[str, Run]]:
    """One kernel in each of alice's, bob's and carol's own servers."""
    with ExitStack() as stack:
        runs = {}
        for user in USERS:
            url = hub.start_server(user)
            runs[user] = stack.enter_context(
                server_kernel(url, hub.user_token(user), hub.runtime_dir(user))
            )
        yield runs


def run_json(run: Run, code: str, **names: Any) -> dict[str, Any]:
    """Run ``code`` after binding ``names`` (as Python literals); the RESULT it prints."""
    head = "".join(f"{k} = {v!r}\n" for k, v in names.items())
    return result_of(run(head + code))


START = """
import json
from hitl_nb.client import find_gateway
from hitl_nb.notebook import Conversation
from tests.helpers.until import until
info = find_gateway(strict=True)
chat = Conversation.start(AGENT, SCENARIO, poll_interval=0.3)
until(lambda: chat.registration, timeout=60, what="the hub to register the task")
card = chat.next_prompt(timeout=60)
print("RESULT" + json.dumps({"how": info.how, "on_hub": info.on_hub, "api": info.api_url,
      "task": chat.task.id, "registration": chat.registration, "prompt": card.prompt_id,
      "as": chat.gateway.name}))
"""

INBOX_ANSWER = """
import json
from hitl_nb.notebook import Inbox
with Inbox(poll_interval=0.5) as inbox:
    listed = [i for i in inbox.items if i.task_id == TASK]
    out = {"listed": len(listed), "where": inbox.source.where()}
    if listed and ANSWER is not None:
        card = inbox.open(listed[0])
        outcome = card.answer(ANSWER, timeout=60)
        out.update(status=outcome.status, message=outcome.message, notes=card.notes.value)
print("RESULT" + json.dumps(out))
"""

ANSWER_DIRECT = """
import json
from hitl_nb.client import GatewayClient, find_gateway
from hitl_nb.errors import GatewayRefused
with GatewayClient(find_gateway(strict=True)) as gw:
    me = gw.me()
    try:
        reply = gw.answer(REG, PROMPT, ANSWER)
        out = {"status": reply.status, "body": reply.body}
    except GatewayRefused as exc:
        out = {"refused": exc.status, "message": str(exc)}
print("RESULT" + json.dumps({"me": me, **out}))
"""


def test_a_consensus_among_three_people_on_their_own_servers_forwards_one_answer(
    hub: Hub, kernels: dict[str, Run], agent: MockAgent
) -> None:
    scenario = {"scenario": "consensus", "n": 2}
    started = run_json(kernels["alice"], START, AGENT=agent.url, SCENARIO=scenario)
    # alice's kernel found the hub's service (not her own server's gateway).
    assert started["on_hub"] and started["api"] == hub.service + "api/", started
    assert started["how"] == "the JupyterHub's 'hitl' service" and started["as"] == "alice"
    task = started["task"]
    # bob's Inbox, in his own kernel on his own server, shows alice's prompt; he answers.
    bob = run_json(kernels["bob"], INBOX_ANSWER, TASK=task, ANSWER=YES)
    assert bob["listed"] == 1 and bob["status"] == "held", bob
    assert bob["where"] == f"the JupyterHub's hitl service ({hub.service})"
    assert "from bob" in bob["message"] and "1 of 2 agreeing" in bob["notes"]
    assert bob["message"].startswith("the hub counted this answer"), bob  # not a server
    # carol disagrees, and is told so.
    carol = run_json(kernels["carol"], INBOX_ANSWER, TASK=task, ANSWER=NO)
    assert carol["status"] == "held" and "answers given so far differ" in carol["notes"], carol
    assert asyncio.run(answers_at_agent(agent.url, task)) == []
    # alice agrees with bob in her own conversation: the one answer goes to the agent.
    done = run_json(
        kernels["alice"],
        'import json\nprint("RESULT" + json.dumps('
        '{"status": chat.answer(YES, timeout=60).status}))',
        YES=YES,
    )
    assert done == {"status": "accepted"}
    until(
        lambda: run_json(kernels["bob"], INBOX_ANSWER, TASK=task, ANSWER=None)["listed"] == 0,
        what="the answered prompt to leave bob's inbox",
    )
    answers = asyncio.run(answers_at_agent(agent.url, task))
    assert [a["payload"] for a in answers] == [YES]
    # The audit trail, as the registrant reads it: three answers, one forwarded.
    with httpx.Client(headers={"Authorization": f"token {hub.user_token('alice')}"}) as http:
        trail = http.get(
            hub.service + "api/audit", params={"registration": started["registration"]}, timeout=60
        ).json()["entries"]
    assert [(e["responder"], e["action"]) for e in trail] == [
        ("bob", "held"),
        ("carol", "held"),
        ("alice", "forwarded"),
    ]
    assert sorted(trail[-1]["responders"]) == ["alice", "bob"]
    assert trail[-1]["agent_reply"]["task_state"] in ("working", "completed")


def test_bob_cannot_answer_a_prompt_for_carol_and_nothing_reaches_the_agent(
    hub: Hub, kernels: dict[str, Run], agent: MockAgent
) -> None:
    scenario = {"scenario": "specific", "responder": "carol"}
    started = run_json(kernels["alice"], START, AGENT=agent.url, SCENARIO=scenario)
    task, reg, prompt = started["task"], started["registration"], started["prompt"]
    # Not bob's to answer: his inbox does not list it; carol's does.
    assert run_json(kernels["bob"], INBOX_ANSWER, TASK=task, ANSWER=None)["listed"] == 0
    assert run_json(kernels["carol"], INBOX_ANSWER, TASK=task, ANSWER=None)["listed"] == 1
    refused = run_json(kernels["bob"], ANSWER_DIRECT, REG=reg, PROMPT=prompt, ANSWER=YES)
    assert refused["me"]["name"] == "bob"
    assert refused["refused"] == 403 and "carol" in refused["message"], refused
    assert asyncio.run(answers_at_agent(agent.url, task)) == []
    given = run_json(kernels["carol"], ANSWER_DIRECT, REG=reg, PROMPT=prompt, ANSWER=YES)
    assert given["status"] == "forwarded" and given["body"]["responders"] == ["carol"], given
    assert [a["payload"] for a in asyncio.run(answers_at_agent(agent.url, task))] == [YES]


def test_the_service_killed_between_two_answers_is_restarted_and_the_held_answer_counts(
    hub: Hub, kernels: dict[str, Run], agent: MockAgent
) -> None:
    scenario = {"scenario": "consensus", "n": 2}
    started = run_json(kernels["alice"], START, AGENT=agent.url, SCENARIO=scenario)
    task, reg, prompt = started["task"], started["registration"], started["prompt"]
    held = run_json(kernels["bob"], ANSWER_DIRECT, REG=reg, PROMPT=prompt, ANSWER=YES)
    assert held["status"] == "collecting", held
    before = hub.service_pid()
    os.kill(before, signal.SIGKILL)
    # The hub notices (it polls its services) and starts the service again.
    until(
        lambda: hub.service_pid() not in (0, before),
        timeout=120,
        what="the hub to start the hitl service again",
    )
    wait_for_service(hub)
    done = run_json(kernels["carol"], ANSWER_DIRECT, REG=reg, PROMPT=prompt, ANSWER=YES)
    assert done["status"] == "forwarded", done
    assert sorted(done["body"]["responders"]) == ["bob", "carol"]
    answers = asyncio.run(answers_at_agent(agent.url, task))
    assert [a["payload"] for a in answers] == [YES]
    assert "Service hitl exited with status -9" in hub.log()


def test_a_kernel_reaches_the_services_own_mock_agent_behind_the_hubs_login(
    hub: Hub, kernels: dict[str, Run]
) -> None:
    code = """
import json
from hitl_nb.client import GatewayClient, SyncHitlClient, find_gateway
info = find_gateway(strict=True)
url = info.url + "mock-agent"
headers = {"Authorization": "token " + os.environ["JUPYTERHUB_API_TOKEN"]}
with SyncHitlClient(url, headers=headers) as client:
    task = client.send({"scenario": "approval"})
with GatewayClient(info) as gw:
    reg = gw.register(url, task.id)
    reply = gw.answer(reg["id"], reg["prompts"][0]["prompt_id"], {"approve": True})
print("RESULT" + json.dumps({"status": reply.status}))
"""
    got = run_json(kernels["carol"], "import os\n" + code)
    assert got == {"status": "forwarded"}
    # Without the hub's word, the hosted agent answers nobody.
    r = httpx.get(hub.service + "mock-agent/.well-known/agent-card.json", timeout=30)
    assert r.status_code == 401, r.text
    r = httpx.post(
        hub.service + "mock-agent/", headers={"X-Hitl-Gateway": "a guess"}, json={}, timeout=30
    )
    assert r.status_code == 403


def _audit(hub: Hub, user: str, **params: str) -> httpx.Response:
    return httpx.get(
        hub.service + "api/audit",
        params=params,
        timeout=60,
        headers={"Authorization": f"token {hub.user_token(user)}"},
    )


def test_the_audit_trail_is_the_registrants_and_the_admins_as_json_lines(
    hub: Hub, kernels: dict[str, Run], agent: MockAgent
) -> None:
    scenario = {"scenario": "approval"}
    started = run_json(kernels["alice"], START, AGENT=agent.url, SCENARIO=scenario)
    reg = started["registration"]
    given = run_json(
        kernels["bob"],
        ANSWER_DIRECT,
        REG=reg,
        PROMPT=started["prompt"],
        ANSWER={"approve": True, "comment": "fine by me"},
    )
    assert given["status"] == "forwarded", given
    assert _audit(hub, "bob", registration=reg).status_code == 403  # bob answered; not his
    mine = [e for e in _audit(hub, "bob").json()["entries"] if e["registration"] == reg]
    assert mine == []
    lines = _audit(hub, "dora", registration=reg, format="jsonl")  # a hub admin
    assert lines.status_code == 200 and lines.headers["Content-Type"] == "application/x-ndjson"
    (entry,) = [json.loads(line) for line in lines.text.splitlines()]
    assert entry["responder"] == "bob" and entry["action"] == "forwarded"
    assert entry["task_id"] == started["task"] and entry["prompt_id"] == started["prompt"]
    assert len(entry["payload_sha256"]) == 64 and len(entry["response_schema_sha256"]) == 64
    assert "fine by me" not in lines.text  # hashes, never the answer itself
    assert _audit(hub, "alice", registration=reg).json()["entries"] == [entry]
