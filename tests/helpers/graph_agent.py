"""LangGraph graphs served by hitl_nb.agent.langgraph: deterministic, no model.

- :func:`release_graph`: ``draft`` writes a draft, ``review`` asks
  ``interrupt({"question": ..., "draft": ...}, response_schema=Approval)`` (a Pydantic
  model, which LangGraph validates too: a comment may not shout), ``publish`` ends.
  ``note=True`` adds ``note``, asking ``interrupt("Write the release note")`` (no schema:
  words).
- :func:`parallel_graph`: two branches interrupt at once (two pending interrupts).
- :func:`broken_graph`: a node interrupts with a schema that is not ``type: "object"``.

``GraphAgent`` serves one on 127.0.0.1 (``serve_graph``); ``calls`` counts the runs of
each node (what reached the graph). Its ``grace`` is 5 s: LangGraph's own check of an
answer is a 422 however busy the machine (a trivial graph resumes in a millisecond, so
WORKING still follows at once). :func:`graph_process` serves the release graph in a
process of its own (``python -m tests.helpers.graph_agent``) on a SQLite task store and,
if given, a SQLite checkpointer, and kills it (SIGKILL) at the end: a crash.
"""

from __future__ import annotations

import operator
import sqlite3
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Annotated, Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel, ConfigDict, Field, field_validator
from typing_extensions import TypedDict

from hitl_nb.agent import Served
from hitl_nb.agent.langgraph import serve_graph
from tests.helpers.agent_process import agent_process


class Approval(BaseModel):
    """What a reviewer answers."""

    model_config = ConfigDict(extra="forbid")

    approved: bool
    comment: str = Field(default="", max_length=200)

    @field_validator("comment")
    @classmethod
    def no_shouting(cls, value: str) -> str:
        if value and value.isupper():
            raise ValueError("please do not shout")
        return value


class State(TypedDict, total=False):
    request: str
    draft: str
    approved: bool
    comment: str
    note: str
    log: Annotated[list[str], operator.add]


def release_graph(calls: Counter[str], *, note: bool = False, slow_review: float = 0) -> Any:
    def draft(state: State) -> State:
        calls["draft"] += 1
        return {"draft": f"Release notes for {state.get('request', '?')}", "log": ["draft"]}

    def review(state: State) -> State:
        calls["review"] += 1
        if slow_review and calls["review"] > 1:
            time.sleep(slow_review)  # work a node does again before its interrupt()
        decision = interrupt(
            {"question": "Approve the release?", "draft": state["draft"]},
            response_schema=Approval,
        )
        calls["review answered"] += 1
        return {"approved": decision.approved, "comment": decision.comment, "log": ["review"]}

    def write_note(state: State) -> State:
        calls["note"] += 1
        text = interrupt("Write the release note")
        return {"note": text, "log": ["note"]}

    def publish(state: State) -> State:
        calls["publish"] += 1
        return {"log": ["published" if state.get("approved") else "held back"]}

    builder = StateGraph(State)
    builder.add_node("draft", draft)
    builder.add_node("review", review)
    builder.add_node("publish", publish)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "review")
    if note:
        builder.add_node("note", write_note)
        builder.add_edge("review", "note")
        builder.add_edge("note", "publish")
    else:
        builder.add_edge("review", "publish")
    builder.add_edge("publish", END)
    return builder.compile(checkpointer=InMemorySaver())


def parallel_graph(calls: Counter[str]) -> Any:
    def legal(state: State) -> State:
        calls["legal"] += 1
        answer = interrupt(
            "Legal: may we ship?",
            response_schema={
                "type": "object",
                "properties": {"ok": {"type": "boolean"}},
                "required": ["ok"],
                "additionalProperties": False,
            },
        )
        return {"log": [f"legal {answer['ok']}"]}

    def security(state: State) -> State:
        calls["security"] += 1
        answer = interrupt("Security: any concerns?")
        return {"log": [f"security {answer}"]}

    builder = StateGraph(State)
    builder.add_node("legal", legal)
    builder.add_node("security", security)
    builder.add_edge(START, "legal")
    builder.add_edge(START, "security")
    builder.add_edge("legal", END)
    builder.add_edge("security", END)
    return builder.compile(checkpointer=InMemorySaver())


def broken_graph(calls: Counter[str]) -> Any:
    def ask_number(state: State) -> State:
        calls["ask_number"] += 1
        interrupt("How many?", response_schema={"type": "integer"})
        return {}

    builder = StateGraph(State)
    builder.add_node("ask_number", ask_number)
    builder.add_edge(START, "ask_number")
    builder.add_edge("ask_number", END)
    return builder.compile(checkpointer=InMemorySaver())


def request_inputs(context: Any) -> State:
    """The graph's input: the message's text as the request."""
    return {"request": context.get_user_input(), "log": []}


class GraphAgent:
    """``with GraphAgent() as agent: agent.url``; ``agent.calls`` counts node runs."""

    def __init__(
        self,
        kind: str = "release",
        *,
        graph: Any = None,
        task_store: Any = None,
        grace: float = 5.0,
        durability: Any = None,
        grpc: bool = False,
        **options: Any,
    ) -> None:
        self.grpc = grpc
        self.calls: Counter[str] = Counter()
        builders = {"release": release_graph, "parallel": parallel_graph, "broken": broken_graph}
        self.graph = graph if graph is not None else builders[kind](self.calls, **options)
        self.task_store = task_store
        self.grace = grace
        self.durability = durability
        self.served: Served | None = None
        self.url = ""

    def __enter__(self) -> GraphAgent:
        self.served = serve_graph(
            self.graph,
            grpc_port=0 if self.grpc else None,
            name="release graph",
            inputs=request_inputs,
            task_store=self.task_store,
            grace=self.grace,
            durability=self.durability,
            on_stop=[self.task_store.engine.dispose] if self.task_store is not None else [],
        )
        self.url = self.served.url
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.served is not None
        self.served.stop()


def graph_process(
    tasks: Path, checkpoints: Path | None = None, durability: str | None = None
) -> AbstractContextManager[str]:
    """The release graph served by another process
    (:func:`~tests.helpers.agent_process.agent_process`) on the SDK's SQLite task store
    ``tasks`` and LangGraph's SQLite checkpointer on ``checkpoints`` (None: in memory),
    with LangGraph's ``durability`` (None: its default)."""
    flags = ["--durability", durability] if durability is not None else []
    return agent_process("tests.helpers.graph_agent", *flags, tasks, checkpoints)


def graph_values(checkpoints: Path, task_id: str) -> Any:
    """The values of the release graph's thread for ``task_id`` in a SQLite checkpoint
    file, read with LangGraph's synchronous SQLite saver."""
    return _read_thread(checkpoints, task_id, lambda graph, config: graph.get_state(config).values)


def graph_history(checkpoints: Path, task_id: str) -> int:
    """How many checkpoints the release graph's thread for ``task_id`` has in a SQLite
    checkpoint file."""
    count: int = _read_thread(
        checkpoints, task_id, lambda graph, config: len(list(graph.get_state_history(config)))
    )
    return count


def _read_thread(checkpoints: Path, task_id: str, read: Callable[[Any, Any], Any]) -> Any:
    from langgraph.checkpoint.sqlite import SqliteSaver

    connection = sqlite3.connect(checkpoints, check_same_thread=False)
    try:
        graph = release_graph(Counter()).copy({"checkpointer": SqliteSaver(connection)})
        return read(graph, {"configurable": {"thread_id": task_id}})
    finally:
        connection.close()


def main(argv: list[str] | None = None) -> None:
    """Serve the release graph until killed: ``[--durability MODE] TASKS.sqlite
    [CHECKPOINTS.sqlite]``."""
    from a2a.server.tasks import DatabaseTaskStore
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from sqlalchemy.ext.asyncio import create_async_engine

    args = sys.argv[1:] if argv is None else argv
    durability: Any = None  # LangGraph's default
    if args[0] == "--durability":
        durability, args = args[1], args[2:]
    store = DatabaseTaskStore(create_async_engine(f"sqlite+aiosqlite:///{args[0]}"))
    checkpointer = None
    if len(args) > 1:
        path = args[1]

        def checkpointer() -> Any:
            return AsyncSqliteSaver.from_conn_string(path)

    served = serve_graph(
        release_graph(Counter()),
        name="release graph",
        inputs=request_inputs,
        task_store=store,
        checkpointer=checkpointer,
        grace=5.0,
        durability=durability,
        on_stop=[store.engine.dispose],
    )
    print(f"graph agent listening on {served.url}", flush=True)
    threading.Event().wait()  # until killed


if __name__ == "__main__":
    main()
