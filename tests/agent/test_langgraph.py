"""A LangGraph graph served by hitl_nb.agent.langgraph: each interrupt a prompt, the
answer resuming the graph by interrupt id, several pending interrupts one prompt after
another, LangGraph's own check of a Pydantic schema, a schema that breaks the spec, one
graph thread per A2A task, WORKING shown while a run goes on."""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict

from hitl_nb.a2a import TaskState
from hitl_nb.agent._prompts import TAG_KEY
from hitl_nb.client import PromptEvent, SyncHitlClient, prompt_of
from hitl_nb.errors import PromptConflict, ResponseInvalid
from hitl_nb.spec import EXTENSION_URI
from tests.helpers.graph_agent import (
    GraphAgent,
    graph_history,
    graph_process,
    graph_values,
    release_graph,
)
from tests.helpers.mock_agent_client import headers
from tests.helpers.until import until


def _first_prompt(client: SyncHitlClient, text: str = "v3") -> PromptEvent:
    prompt = list(client.stream(text))[-1]
    assert isinstance(prompt, PromptEvent)
    return prompt


def _thread(agent: GraphAgent, task_id: str) -> Any:
    return agent.graph.get_state({"configurable": {"thread_id": task_id}})


def test_an_interrupt_is_a_prompt_resumed_by_its_id(graph_agent: GraphAgent) -> None:
    with SyncHitlClient(graph_agent.url) as client:
        prompt = _first_prompt(client)
        assert prompt.prompt == "Approve the release?"  # the "question" of the value
        schema = prompt.response_schema
        assert schema["title"] == "Approval" and schema["additionalProperties"] is False
        task = client.get_task(prompt.task_id)
        message = task.status.message
        assert message is not None
        (pending,) = _thread(graph_agent, prompt.task_id).interrupts
        assert (message.metadata or {})[TAG_KEY] == pending.id  # found again after a restart
        assert message.parts[1].data == {  # the whole value travels beside the question
            "question": "Approve the release?",
            "draft": "Release notes for v3",
        }
        assert prompt.prompt_id != pending.id and uuid.UUID(prompt.prompt_id)
        client.respond(
            prompt.task_id, prompt.prompt_id, {"approved": True, "comment": "ok"}, wait=True
        )
        done = client.get_task(prompt.task_id)
        assert done.status.state is TaskState.COMPLETED
        values = _thread(graph_agent, prompt.task_id).values
        assert (values["approved"], values["comment"]) == (True, "ok")
        assert values["log"] == ["draft", "review", "published"]
        result = done.artifacts[0].parts[0].data
        assert result["approved"] is True and result["request"] == "v3"


def test_the_graph_validates_a_pydantic_schema_too(graph_agent: GraphAgent) -> None:
    _refused_by_the_graph_then_answered(graph_agent)


def test_a_graph_that_checkpoints_at_exit_still_refuses_with_nothing_saved() -> None:
    """durability="exit": LangGraph writes when a run stops, a refused resume too; the
    refusal is still a 422 and the interrupt still waits."""
    with GraphAgent(durability="exit") as agent:
        _refused_by_the_graph_then_answered(agent)


def _refused_by_the_graph_then_answered(graph_agent: GraphAgent) -> None:
    with SyncHitlClient(graph_agent.url) as client:
        prompt = _first_prompt(client)
        answered = graph_agent.calls["review answered"]
        # Valid JSON Schema, refused by the model's own validator (LangGraph's check).
        with pytest.raises(ResponseInvalid) as refused:
            client.respond(prompt.task_id, prompt.prompt_id, {"approved": True, "comment": "NO"})
        assert refused.value.validation_errors == [
            {
                "path": "/comment",
                "keyword": "value_error",
                "message": "Value error, please do not shout",
            }
        ]
        assert graph_agent.calls["review answered"] == answered  # the node did not go on
        task = client.get_task(prompt.task_id)
        assert task.status.state is TaskState.INPUT_REQUIRED
        assert prompt_of(task).prompt_id == prompt.prompt_id  # type: ignore[union-attr]
        assert len(_thread(graph_agent, prompt.task_id).interrupts) == 1  # nothing saved
        client.respond(prompt.task_id, prompt.prompt_id, {"approved": False}, wait=True)
        assert client.get_task(prompt.task_id).status.state is TaskState.COMPLETED
        assert _thread(graph_agent, prompt.task_id).values["log"][-1] == "held back"


def test_a_refusal_after_the_task_was_shown_working_asks_again() -> None:
    with GraphAgent(slow_review=0.3, grace=0.05) as agent, SyncHitlClient(agent.url) as client:
        prompt = _first_prompt(client)
        client.respond(
            prompt.task_id, prompt.prompt_id, {"approved": True, "comment": "NO"}, wait=True
        )
        again = prompt_of(client.get_task(prompt.task_id))
        assert isinstance(again, PromptEvent) and again.prompt_id != prompt.prompt_id
        task = client.get_task(prompt.task_id)
        assert task.status.message is not None
        assert "please do not shout" in task.status.message.parts[-1].text  # type: ignore[operator]
        with pytest.raises(PromptConflict):
            client.respond(prompt.task_id, prompt.prompt_id, {"approved": True})
        client.respond(
            again.task_id, again.prompt_id, {"approved": True, "comment": "fine"}, wait=True
        )
        assert client.get_task(prompt.task_id).status.state is TaskState.COMPLETED


def test_several_pending_interrupts_are_several_prompts() -> None:
    with GraphAgent("parallel") as agent, SyncHitlClient(agent.url) as client:
        first = _first_prompt(client, "ship?")
        pending = _thread(agent, first.task_id).interrupts
        assert len(pending) == 2
        seen = {first.prompt: first}
        payloads = {
            "Legal: may we ship?": {"ok": True},
            "Security: any concerns?": {"text": "none"},
        }
        client.respond(first.task_id, first.prompt_id, payloads[first.prompt], wait=True)
        second = prompt_of(client.get_task(first.task_id))
        assert isinstance(second, PromptEvent)
        assert second.prompt_id != first.prompt_id and second.prompt not in seen
        client.respond(second.task_id, second.prompt_id, payloads[second.prompt], wait=True)
        done = client.get_task(first.task_id)
        assert done.status.state is TaskState.COMPLETED
        log = sorted(_thread(agent, first.task_id).values["log"])
        assert log == ["legal True", "security none"]  # the text itself resumed security
        assert (agent.calls["legal"], agent.calls["security"]) in ((2, 3), (3, 2))


def test_one_graph_thread_per_task(graph_agent: GraphAgent) -> None:
    with SyncHitlClient(graph_agent.url) as client:
        a, b = _first_prompt(client, "alpha"), _first_prompt(client, "beta")
        client.respond(b.task_id, b.prompt_id, {"approved": False}, wait=True)
        assert _thread(graph_agent, b.task_id).values["log"][-1] == "held back"
        assert _thread(graph_agent, a.task_id).values["request"] == "alpha"
        assert len(_thread(graph_agent, a.task_id).interrupts) == 1
        client.respond(a.task_id, a.prompt_id, {"approved": True}, wait=True)
        assert _thread(graph_agent, a.task_id).values["log"][-1] == "published"


def test_a_message_that_answers_nothing_does_not_run_the_graph(graph_agent: GraphAgent) -> None:
    with SyncHitlClient(graph_agent.url) as client:
        prompt = _first_prompt(client)
        before = dict(graph_agent.calls)
        events = list(client.stream("hello?", task_id=prompt.task_id))
        assert [e.prompt_id for e in events if isinstance(e, PromptEvent)] == [prompt.prompt_id]
        assert dict(graph_agent.calls) == before
        assert client.get_task(prompt.task_id).status.state is TaskState.INPUT_REQUIRED


def test_an_interrupt_without_a_schema_is_answered_in_words_even_by_a_plain_client() -> None:
    with GraphAgent(note=True) as agent, httpx.Client(timeout=30) as http:

        def send(message: dict[str, Any]) -> dict[str, Any]:
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {"message": message},
            }
            reply = http.post(agent.url + "/", json=body, headers=headers(activated=False)).json()
            task: dict[str, Any] = reply["result"]["task"]
            return task

        def message(**extra: Any) -> dict[str, Any]:
            return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", **extra}

        task = send(message(parts=[{"text": "v4"}]))
        assert task["status"]["message"]["parts"][0] == {"text": "Approve the release?"}
        assert EXTENSION_URI not in str(task)
        ids = {"taskId": task["id"], "contextId": task["contextId"]}
        note = send(message(parts=[{"data": {"approved": True}}], **ids))
        assert note["status"]["message"]["parts"] == [{"text": "Write the release note"}]
        done = send(message(parts=[{"text": "Faster startup."}], **ids))
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        assert _thread(agent, task["id"]).values["note"] == "Faster startup."


def test_a_schema_that_breaks_the_spec_fails_the_task_naming_the_node() -> None:
    with GraphAgent("broken") as agent, httpx.Client(timeout=30) as http:
        message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "go"}]}
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
        reply = http.post(agent.url + "/", json=body, headers=headers()).json()
        error = reply["error"]["message"]
        assert "the interrupt() in node 'ask_number'" in error and 'type "object"' in error
        listed = http.post(
            agent.url + "/",
            json={"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {}},
            headers=headers(),
        ).json()["result"]["tasks"]
        (task,) = listed
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        assert EXTENSION_URI not in str(task)


def test_the_prompt_outlives_a_restart_of_the_a2a_side(tmp_path: Path) -> None:
    """The graph's checkpointer keeps the thread; the SDK's SQLite store keeps the task
    and the interrupt id beside the envelope: a new server resumes the right interrupt."""
    pytest.importorskip("aiosqlite")
    from collections import Counter

    from a2a.server.tasks import DatabaseTaskStore
    from sqlalchemy.ext.asyncio import create_async_engine

    calls: Counter[str] = Counter()
    graph = release_graph(calls)
    url = f"sqlite+aiosqlite:///{tmp_path / 'tasks.sqlite'}"
    with GraphAgent(graph=graph, task_store=DatabaseTaskStore(create_async_engine(url))) as first:
        with SyncHitlClient(first.url) as client:
            prompt = _first_prompt(client)
    with GraphAgent(graph=graph, task_store=DatabaseTaskStore(create_async_engine(url))) as again:
        with SyncHitlClient(again.url) as client:
            with pytest.raises(ResponseInvalid):
                client.respond(prompt.task_id, prompt.prompt_id, {"approved": 1}, validate=False)
            client.respond(prompt.task_id, prompt.prompt_id, {"approved": True}, wait=True)
            assert client.get_task(prompt.task_id).status.state is TaskState.COMPLETED
    assert graph.get_state({"configurable": {"thread_id": prompt.task_id}}).values["approved"]


@pytest.mark.parametrize("durability", [None, "exit"])
def test_a_prompt_outlives_a_crash_on_a_durable_checkpointer(
    tmp_path: Path, durability: str | None
) -> None:
    """The agent process is killed while a prompt is open; a new process on the same
    SQLite task store and SQLite checkpointer takes the answer and the graph goes on;
    also when LangGraph writes checkpoints only as a run stops (durability="exit")."""
    tasks, checkpoints = tmp_path / "tasks.sqlite", tmp_path / "checkpoints.sqlite"
    with graph_process(tasks, checkpoints, durability) as url, SyncHitlClient(url) as client:
        prompt = _first_prompt(client)
    # A checkpoint per step by default (the input, draft, review's interrupt); with
    # "exit" one, as the run stopped at the interrupt.
    assert graph_history(checkpoints, prompt.task_id) == (1 if durability else 3)
    with graph_process(tasks, checkpoints, durability) as url, SyncHitlClient(url) as client:
        waiting = prompt_of(client.get_task(prompt.task_id))
        assert isinstance(waiting, PromptEvent) and waiting.prompt_id == prompt.prompt_id
        with pytest.raises(ResponseInvalid):  # checked against the stored schema
            client.respond(prompt.task_id, prompt.prompt_id, {"approved": 1}, validate=False)
        client.respond(
            prompt.task_id, prompt.prompt_id, {"approved": True, "comment": "ok"}, wait=True
        )
        done = client.get_task(prompt.task_id)
        assert done.status.state is TaskState.COMPLETED
        assert done.artifacts[0].parts[0].data["request"] == "v3"  # the first run's input
    values = graph_values(checkpoints, prompt.task_id)
    assert values["log"] == ["draft", "review", "published"] and values["comment"] == "ok"


def test_an_answer_the_checkpointer_lost_fails_the_task_saying_what_to_do(
    tmp_path: Path,
) -> None:
    """The task store outlives the crash, the in-memory checkpointer does not: the answer
    cannot resume anything, and the graph is not run again from the start with it."""
    tasks = tmp_path / "tasks.sqlite"
    with graph_process(tasks) as url, SyncHitlClient(url) as client:
        prompt = _first_prompt(client)
    with graph_process(tasks) as url, httpx.Client(timeout=30) as http:
        answer = {
            "messageId": str(uuid.uuid4()),
            "role": "ROLE_USER",
            "taskId": prompt.task_id,
            "contextId": prompt.context_id,
            "parts": [{"data": {"approved": True}}],
            "metadata": {
                "hitl_response_for": {"prompt_id": prompt.prompt_id, "payload": {"approved": True}}
            },
        }
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": answer}}
        error = http.post(url + "/", json=body, headers=headers()).json()["error"]["message"]
        assert "does not wait on that interrupt" in error and "AsyncSqliteSaver" in error
        got = {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": prompt.task_id}}
        task = http.post(url + "/", json=got, headers=headers()).json()["result"]
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        assert "log" not in json.dumps(task)  # no artifact: the graph did not run


def test_an_answer_that_names_no_context_resumes_the_graph(graph_agent: GraphAgent) -> None:
    """The SDK gives a message without ``contextId`` a fresh context of its own; the
    executor's events keep the task's."""
    with SyncHitlClient(graph_agent.url) as client, httpx.Client(timeout=30) as http:
        prompt = _first_prompt(client)
        answer = {
            "messageId": str(uuid.uuid4()),
            "role": "ROLE_USER",
            "taskId": prompt.task_id,
            "parts": [{"data": {"approved": True}}],
            "metadata": {
                "hitl_response_for": {"prompt_id": prompt.prompt_id, "payload": {"approved": True}}
            },
        }
        params = {"message": answer}
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": params}
        r = http.post(graph_agent.url + "/", json=body, headers=headers())
        events = [
            json.loads(line[5:])["result"] for line in r.text.splitlines() if line[:5] == "data:"
        ]
        updates = [e["statusUpdate"] for e in events if "statusUpdate" in e]
        assert updates[-1]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert {u["contextId"] for u in updates} == {prompt.context_id}


def _one_node_graph(after: threading.Event | None = None, before: float = 0.0) -> Any:
    """``ask`` interrupts at once (``before``: after working that many seconds); with
    ``after``, the node ``wait`` that follows it returns only once ``after`` is set (by
    the test)."""
    schema = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    }

    def ask(state: dict[str, Any]) -> dict[str, Any]:
        time.sleep(before)
        return {"ok": interrupt("OK?", response_schema=schema)["ok"]}

    def wait(state: dict[str, Any]) -> dict[str, Any]:
        assert after is not None and after.wait(60)
        return {}

    class State(TypedDict, total=False):
        ok: bool

    builder = StateGraph(State)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    if after is not None:
        builder.add_node("wait", wait)
        builder.add_edge("ask", "wait")
        builder.add_edge("wait", END)
    else:
        builder.add_edge("ask", END)
    return builder.compile(checkpointer=InMemorySaver())


def _states(url: str, message: dict[str, Any]) -> list[str]:
    """A streamed send: each event's kind and state, e.g. ``task:TASK_STATE_SUBMITTED``."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage"}
    r = httpx.post(url + "/", json={**body, "params": {"message": message}}, headers=headers())
    events = [json.loads(line[5:])["result"] for line in r.text.splitlines() if line[:5] == "data:"]
    return [f"{kind}:{e[kind].get('status', {}).get('state', '')}" for e in events for kind in e]


@pytest.mark.parametrize(
    ("kind", "grace", "working"),
    [
        ("asks at once", 5.0, False),
        ("asks at once", 0, True),
        ("release", 5.0, True),
        ("works, then asks", 0.05, True),
    ],
)
def test_a_new_run_shows_working_only_while_it_goes_on(
    kind: str, grace: float, working: bool
) -> None:
    """A graph that asks at once goes from the Task to its question, as an SDK agent that
    asks at once does; one whose node returned while the run goes on (the release
    graph's ``draft``) is WORKING meanwhile, as is one whose node works longer than the
    grace before it asks; ``grace=0``: WORKING first, every time. WORKING always comes
    before the question."""
    graphs = {"asks at once": _one_node_graph(), "works, then asks": _one_node_graph(before=0.5)}
    graph = graphs.get(kind)
    with GraphAgent(graph=graph, grace=grace) as agent:
        message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "v"}]}
        states = _states(agent.url, message)
    assert states[0] == "task:TASK_STATE_SUBMITTED"
    assert states[-1] == "statusUpdate:TASK_STATE_INPUT_REQUIRED"
    assert ("statusUpdate:TASK_STATE_WORKING" in states) is working
    assert len(states) == 3 if working else 2


def test_a_resumed_node_that_returned_is_working_while_the_run_goes_on() -> None:
    """The grace ends when the resumed node returns (it got past its ``interrupt()``,
    LangGraph's check included), not when the whole run does: here the run's next node
    waits for the test to see WORKING, with a grace far longer than the test waits."""
    after = threading.Event()
    with GraphAgent(graph=_one_node_graph(after), grace=600) as agent:
        with SyncHitlClient(agent.url) as client:
            prompt = _first_prompt(client)
            answering = threading.Thread(
                target=client.respond,
                args=(prompt.task_id, prompt.prompt_id, {"ok": True}),
                daemon=True,
            )
            answering.start()
            try:
                until(
                    lambda: client.get_task(prompt.task_id).status.state is TaskState.WORKING,
                    30,
                    "the task shown WORKING while the run goes on",
                )
            finally:
                after.set()
            answering.join(30)
            until(
                lambda: client.get_task(prompt.task_id).status.state is TaskState.COMPLETED,
                30,
                "the task completed",
            )
