"""``await ask(...)`` in an a2a-sdk executor, seen from hitl-nb's client and raw HTTP:
the payload the agent's code gets, activation, plain clients, prompts that break the
spec, and ``ask`` where it cannot work."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from a2a.server.events import EventQueue

from hitl_nb.a2a import TaskState
from hitl_nb.agent import ask
from hitl_nb.client import HitlClient, PromptEvent, SyncHitlClient, prompt_of
from hitl_nb.errors import AskError, PromptConflict, ResponseInvalid
from hitl_nb.spec import EXTENSION_URI, RESPONSE_KEY
from tests.helpers.ask_agent import SCHEMA, AskAgent, ReleaseExecutor
from tests.helpers.mock_agent_client import headers

DIALECTS = [
    pytest.param(("JSONRPC", "1.0"), id="jsonrpc-1.0"),
    pytest.param(("HTTP+JSON", "1.0"), id="http-json-1.0"),
    pytest.param(("JSONRPC", "0.3"), id="jsonrpc-0.3"),
]


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_agent_gets_the_validated_payload(
    ask_agent: AskAgent, dialect: tuple[str, str]
) -> None:
    binding, version = dialect

    async def go() -> None:
        async with HitlClient(ask_agent.url, binding=binding, version=version) as client:
            events = [e async for e in client.stream("release v2")]
            prompt = events[-1]
            assert isinstance(prompt, PromptEvent)
            assert prompt.prompt == "Approve the release? <b>v2</b>"  # data, verbatim
            assert uuid.UUID(prompt.prompt_id).version == 4
            before = list(ask_agent.executor.answers)
            with pytest.raises(ResponseInvalid) as invalid:
                await client.respond(
                    prompt.task_id,
                    prompt.prompt_id,
                    {"approved": True, "copies": 7},
                    validate=False,
                )
            assert invalid.value.validation_errors[0]["path"] == "/copies"
            task = await client.get_task(prompt.task_id)
            assert task.status.state is TaskState.INPUT_REQUIRED
            assert ask_agent.executor.answers == before
            await client.respond(
                prompt.task_id, prompt.prompt_id, {"approved": True, "copies": 2}, wait=True
            )
            done = await client.get_task(prompt.task_id)
            assert done.status.state is TaskState.COMPLETED
            got = ask_agent.executor.answers[-1]
            assert got == {"approved": True, "copies": 2} and type(got["copies"]) is int
            with pytest.raises(PromptConflict):
                await client.respond(prompt.task_id, prompt.prompt_id, {"approved": True})

    run(go())


def test_two_questions_each_with_a_fresh_prompt_id() -> None:
    with AskAgent(two_questions=True) as agent, SyncHitlClient(agent.url) as client:
        first = list(client.stream("release"))[-1]
        assert isinstance(first, PromptEvent)
        client.respond(first.task_id, first.prompt_id, {"approved": True}, wait=True)
        second = prompt_of(client.get_task(first.task_id))
        assert isinstance(second, PromptEvent)
        assert second.prompt == "Write the release note" and second.prompt_id != first.prompt_id
        assert second.response_schema["required"] == ["text"]  # a question in words
        client.respond(second.task_id, second.prompt_id, {"text": "Faster."}, wait=True)
        task = client.get_task(first.task_id)
        assert task.status.state is TaskState.COMPLETED
        assert task.status.message is not None
        assert task.status.message.parts[0].text == "approved: Faster."
        assert agent.executor.answers == [{"approved": True}, {"text": "Faster."}]
        assert agent.executor.runs == 1  # one body, resumed twice


def _rpc(url: str, method: str, params: Any, *, activated: bool) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    r = httpx.post(url + "/", json=body, headers=headers(activated=activated), timeout=30)
    out: dict[str, Any] = r.json()
    return out


def _message(text: str | None = None, **extra: Any) -> dict[str, Any]:
    parts = [{"text": text}] if text is not None else []
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": parts, **extra}


def test_a_client_that_did_not_activate_sees_plain_text_and_may_answer_with_data() -> None:
    with AskAgent(two_questions=True) as agent:
        task = _rpc(agent.url, "SendMessage", {"message": _message("go")}, activated=False)
        task = task["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert task["status"]["message"]["parts"] == [{"text": "Approve the release? <b>v2</b>"}]
        assert "metadata" not in task["status"]["message"]  # no envelope (§Activation)
        # The same task, seen by a client that activated the extension, has the envelope.
        seen = _rpc(agent.url, "GetTask", {"id": task["id"]}, activated=True)["result"]
        assert EXTENSION_URI in seen["status"]["message"]["metadata"]
        # A plain message does not answer: it is kept, and the question is asked again.
        ids = dict(taskId=task["id"], contextId=task["contextId"])
        again = _rpc(
            agent.url, "SendMessage", {"message": _message("hmm?", **ids)}, activated=False
        )
        again = again["result"]["task"]
        assert again["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert agent.executor.answers == [] and agent.executor.runs == 1
        # A data part answers it (422 first for a bad one), then text answers the note.
        bad = {"message": _message(parts=[{"data": {"approved": "no"}}], **ids)}
        assert _rpc(agent.url, "SendMessage", bad, activated=False)["error"]["code"] == -32011
        good = {"message": _message(parts=[{"data": {"approved": False}}], **ids)}
        note = _rpc(agent.url, "SendMessage", good, activated=False)["result"]["task"]
        assert note["status"]["message"]["parts"] == [{"text": "Write the release note"}]
        said = {"message": _message("Held for QA.", **ids)}
        done = _rpc(agent.url, "SendMessage", said, activated=False)["result"]["task"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        assert agent.executor.answers == [{"approved": False}, {"text": "Held for QA."}]
        # Nothing in the whole history carries an envelope for this client.
        history = _rpc(agent.url, "GetTask", {"id": task["id"]}, activated=False)["result"]
        assert EXTENSION_URI not in str(history)
        assert "hmm?" in str(history)  # the plain message was kept


def test_answers_as_json_text_are_read_too() -> None:
    with AskAgent() as agent:
        task = _rpc(agent.url, "SendMessage", {"message": _message("go")}, activated=False)
        ids = {"taskId": task["result"]["task"]["id"]}
        sent = {"message": _message('{"approved": true, "comment": "ok"}', **ids)}
        done = _rpc(agent.url, "SendMessage", sent, activated=False)["result"]["task"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        assert agent.executor.answers == [{"approved": True, "comment": "ok"}]


BROKEN = [
    pytest.param({"prompt": ""}, "prompt must not be empty", id="empty-prompt"),
    pytest.param({"schema": {"type": "string"}}, 'declare type "object"', id="not-an-object"),
    pytest.param(
        {"schema": {"type": "object", "description": "x" * 70_000}}, "over 64 KiB", id="over-64k"
    ),
    pytest.param(
        {"schema": {"type": "object", "properties": {"a": {"type": "nope"}}}},
        "schema",
        id="not-a-schema",
    ),
    pytest.param({"responders": ["everyone"]}, "not a known responder", id="unknown-responder"),
    pytest.param(
        {"deadline": datetime.now(timezone.utc) - timedelta(minutes=1)},
        "in the future",
        id="past-deadline",
    ),
]


@pytest.mark.parametrize(("options", "words"), BROKEN)
def test_a_prompt_that_breaks_the_spec_fails_where_ask_is_called(
    options: dict[str, Any], words: str
) -> None:
    ask_options = {k: v for k, v in options.items() if k in ("deadline", "responders")}
    executor = ReleaseExecutor(
        question=options.get("prompt", "Approve?"),
        schema=options.get("schema", SCHEMA),
        **ask_options,
    )
    with AskAgent(executor=executor) as agent:
        reply = _rpc(agent.url, "SendMessage", {"message": _message("go")}, activated=True)
        assert words in reply["error"]["message"], reply  # the SDK's -32603 carries it
        listed = _rpc(agent.url, "ListTasks", {}, activated=True)["result"]["tasks"]
        (task,) = listed
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        assert EXTENSION_URI not in str(task)  # nothing was emitted


def test_a_deadline_and_responders_travel_in_the_envelope() -> None:
    executor = ReleaseExecutor(deadline=timedelta(minutes=5), responders=["specific:ada", "any"])
    with AskAgent(executor=executor) as agent, SyncHitlClient(agent.url) as client:
        prompt = list(client.stream("go"))[-1]
        assert isinstance(prompt, PromptEvent)
        assert prompt.envelope.allowed_responders == ("specific:ada", "any")
        assert prompt.envelope.deadline is not None and prompt.envelope.deadline.endswith("Z")


def test_ask_outside_a_wrapped_executor_says_how_to_use_it() -> None:
    class Plain(EventQueue):
        async def enqueue_event(self, event: Any) -> None:
            raise AssertionError("nothing is emitted")

    with pytest.raises(AskError, match="HitlExtension.wrap"):
        run(ask(Plain(), "Approve?", SCHEMA))


def test_a_canceled_task_takes_no_answer(ask_agent: AskAgent) -> None:
    with SyncHitlClient(ask_agent.url) as client:
        prompt = list(client.stream("go"))[-1]
        assert isinstance(prompt, PromptEvent)
        canceled = client.cancel(prompt.task_id)
        assert canceled.status.state is TaskState.CANCELED
        with pytest.raises(PromptConflict):
            client.respond(prompt.task_id, prompt.prompt_id, {"approved": True}, validate=False)


def test_the_answer_message_is_kept_in_the_history(ask_agent: AskAgent) -> None:
    with SyncHitlClient(ask_agent.url) as client:
        prompt = list(client.stream("go"))[-1]
        assert isinstance(prompt, PromptEvent)
        client.respond(prompt.task_id, prompt.prompt_id, {"approved": True}, wait=True)
        task = client.get_task(prompt.task_id)
        answers = [m for m in task.history if (m.metadata or {}).get(RESPONSE_KEY)]
        assert [m.metadata[RESPONSE_KEY]["prompt_id"] for m in answers] == [prompt.prompt_id]  # type: ignore[index]
