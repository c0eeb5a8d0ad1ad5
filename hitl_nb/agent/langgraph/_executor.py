"""``GraphExecutor``: a compiled LangGraph graph as an a2a-sdk executor that asks people.

One graph thread per A2A task (``thread_id`` = the task id), on the graph's checkpointer
(its own, or one ``checkpointer`` opens on the server's loop). A request:

- **starts** a task: the graph runs on ``inputs(context)``;
- **answers** the open prompt (the middleware checked and held the answer): the graph
  resumes that interrupt by id, ``Command(resume={interrupt_id: value})``; if the graph
  thread does not wait on that interrupt (the checkpointer lost it across a restart, the
  task store did not), the answer is run as nothing else: ``AskError`` fails the task,
  saying what to do;
- **says something else** while the graph waits: the message is kept in the history and
  the open prompt is asked again; the graph is not run.

When the graph stops, each pending interrupt is a prompt, asked one at a time in the
graph's order (an A2A task shows one status at a time; each has its own prompt_id, and
the interrupt's id travels beside the envelope, so it is found again after a restart);
with none pending the task completes with ``result(values)``. The executor keeps what
each thread waits on as its own runs left it (the thread is the task's, and only the
executor runs it), so an answer resumes the graph without reading its state back first;
a thread it did not leave waiting in this process (after a restart) is read from the
checkpointer.

LangGraph validates a resume value against a Pydantic schema itself (its
``ValidationError`` marked ``is_invalid_resume``, nothing saved). Our JSON Schema check
comes first, and a resumed graph is given up to ``grace`` seconds (0.5) before the task is
shown WORKING: until the run stops, or the resumed node returns (its update on the
graph's stream: it got past its ``interrupt()``), whichever comes first. A refusal of
LangGraph's within that time is answered 422 with its errors, the task still waiting (the
executor emitted nothing). One after it (a node that works long before its
``interrupt()``) asks the question again, under a new prompt_id, with the errors in the
message.

A new run is shown WORKING in the same way: once one of its nodes returns while it goes
on, or ``grace`` went by. A graph that asks (or ends) at once goes straight from the Task
to its question (or its end), as an a2a-sdk agent that asks at once does, without a
WORKING no client could watch for long; ``grace=0`` shows WORKING first, every time.

On Python 3.10 the graph runs through its synchronous API in a worker thread: LangGraph's
``interrupt()`` finds its run in a context variable, which asyncio hands to new tasks only
from Python 3.11 on, so an async run on 3.10 fails in every node that asks. The graph's
nodes are then plain functions there (LangGraph's own limit for async nodes that ask).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from asyncio import FIRST_COMPLETED
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Part
from google.protobuf.struct_pb2 import Value
from langgraph.errors import is_invalid_resume
from langgraph.types import Command, Durability

from hitl_nb.errors import AskError, MalformedPrompt, ResponseInvalid
from hitl_nb.spec import EXTENSION_URI

from .._events import ask, ask_again, canceled, complete_with, first_task, updater_for
from .._extension import HitlExtension
from .._prompts import Asked, Hold, PromptBook
from ._interrupts import issues_of, prompt_for, resume_value

__all__ = ["GraphExecutor", "default_inputs", "default_result"]

log = logging.getLogger(__name__)

#: The key of the interrupts a graph's stream of updates reports.
_INTERRUPT = "__interrupt__"
#: ... and of an update's metadata (``{"cached": True}``: repeated from before the run).
_METADATA = "__metadata__"

#: Opens a checkpointer on the running loop (``AsyncSqliteSaver.from_conn_string``, say).
Checkpointer = Callable[[], AbstractAsyncContextManager[Any]]
#: What a graph run is given for a new task.
Inputs = Callable[[RequestContext], Any]
#: What a finished graph answers with: text, a JSON object (a data artifact), or parts.
Result = Callable[[Any], "str | Mapping[str, Any] | list[Part]"]


def default_inputs(context: RequestContext) -> Any:
    """``{"messages": [{"role": "user", "content": <the message's text>}]}`` (the shape of
    LangGraph's ``MessagesState``)."""
    return {"messages": [{"role": "user", "content": context.get_user_input()}]}


def _jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return json.loads(json.dumps(value, default=_jsonable_leaf))


def _jsonable_leaf(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else str(value)


def default_result(values: Any) -> str | Mapping[str, Any]:
    """The last message's text when the state has ``messages``, else the final state."""
    messages = values.get("messages") if isinstance(values, dict) else None
    if isinstance(messages, list) and messages:
        last = messages[-1]
        content = getattr(last, "content", None)
        if content is None and isinstance(last, dict):
            content = last.get("content")
        if isinstance(content, str):
            return content
    out: Mapping[str, Any] = _jsonable(values) if isinstance(values, dict) else {"value": values}
    return out


class GraphExecutor(AgentExecutor):
    """Serves a compiled LangGraph graph as an A2A agent that asks people through
    hitl-prompt/v1; see the module. Build it with the
    :class:`~hitl_nb.agent.HitlExtension` of the agent: ``GraphExecutor(graph, hitl)``.

    The graph is compiled with a checkpointer, or ``checkpointer`` opens one on the
    server's loop (:meth:`start`, else the first request; :meth:`aclose` closes it):
    ``lambda: AsyncSqliteSaver.from_conn_string("checkpoints.sqlite")``, say, whose
    threads outlive a restart as a database task store's tasks do.

    ``durability``: when LangGraph writes a run's checkpoints (its ``durability``:
    ``"sync"``, ``"async"``, ``"exit"``; None: the graph's own, LangGraph's ``"async"``
    unless its config says otherwise). ``"exit"`` writes once, when the run stops: at an
    interrupt, so the prompt still outlives a restart, and a refused answer still saves
    nothing; but the steps between are not kept (the thread's history has one
    checkpoint per run, and a crash in the middle of a run loses the run), for fewer
    writes (on a SQLite checkpointer, LangGraph's own time to an interrupt and from a
    resume to the end is about a quarter shorter: ``benchmarks/bench_agent.py``)."""

    def __init__(
        self,
        graph: Any,
        extension: HitlExtension,
        *,
        inputs: Inputs = default_inputs,
        result: Result = default_result,
        grace: float = 0.5,
        checkpointer: Checkpointer | None = None,
        durability: Durability | None = None,
    ) -> None:
        if checkpointer is None and getattr(graph, "checkpointer", None) is None:
            raise ValueError(
                "the graph has no checkpointer: interrupts need one "
                "(graph = builder.compile(checkpointer=InMemorySaver()), or one that "
                "outlives a restart: checkpointer=lambda: "
                "AsyncSqliteSaver.from_conn_string('checkpoints.sqlite'))"
            )
        self.graph = graph
        self.book: PromptBook = extension.book
        self.inputs = inputs
        self.result = result
        self.grace = grace
        self.durability = durability
        self._checkpointer = checkpointer
        self._opened: AbstractAsyncContextManager[Any] | None = None
        #: task id -> the interrupts its graph thread waits on (id -> the node that
        #: raised it; None: the only one pending), as the last run this process drove
        #: left it; a task absent is read back from the checkpointer (a restart, say).
        self._waiting: dict[str, dict[str, str | None]] = {}
        self._opening = asyncio.Lock()

    async def start(self) -> None:
        """Open ``checkpointer`` on the running loop and compile it in (once)."""
        async with self._opening:
            if self._checkpointer is None or self._opened is not None:
                return
            opened = self._checkpointer()
            saver = await opened.__aenter__()
            self._opened = opened
            self.graph = self.graph.copy({"checkpointer": saver})

    async def aclose(self) -> None:
        """Close the checkpointer :meth:`start` opened, if any."""
        opened, self._opened = self._opened, None
        if opened is not None:
            await opened.__aexit__(None, None, None)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run, resume or re-ask, as the module says."""
        if self._checkpointer is not None and self._opened is None:
            await self.start()
        updater = updater_for(context, event_queue)
        task_id, context_id = updater.task_id, updater.context_id
        config = {"configurable": {"thread_id": task_id}}
        message = context.message
        taken = self.book.take(task_id, message.message_id) if message is not None else None
        if context.current_task is None:
            await event_queue.enqueue_event(first_task(task_id, context_id, message))
            await self._run(self.inputs(context), config, updater)
            return
        waiting = self._waiting.get(task_id)
        if waiting is None:
            waiting = _waiting_in(await self.graph.aget_state(config))
        if taken is not None and taken.asked.tag not in waiting:
            raise _lost(taken.asked)
        if not waiting:
            await self._run(self.inputs(context), config, updater)
            return
        if taken is None:
            await ask_again(self.book, context.current_task, updater)
            return
        resume: Command[Any] = Command(
            resume={taken.asked.tag: resume_value(taken.asked, taken.payload)}
        )
        await self._resume(resume, config, updater, taken, waiting[taken.asked.tag or ""])

    async def _resume(
        self,
        resume: Command[Any],
        config: dict[str, Any],
        updater: TaskUpdater,
        taken: Hold,
        node: str | None,
    ) -> None:
        run = await self._start(resume, config, node)
        error = run.exception() if run.done() else None
        if error is not None and is_invalid_resume(error):
            # Nothing emitted, nothing saved by LangGraph: the request is answered 422.
            self.book.refuse(taken, self._refusal(taken.asked, error))
            return
        # The thread moves on from here: what it waits on is known again when the run
        # stops (_settle), or read back from the checkpointer.
        self._waiting.pop(updater.task_id, None)
        await updater.start_work()  # AC-4: the answer is accepted
        try:
            raised = await run
        except Exception as exc:
            if not is_invalid_resume(exc):
                raise
            await self._refused_late(taken.asked, exc, updater)
            return
        await self._settle(config, updater, raised)

    async def _run(self, given: Any, config: dict[str, Any], updater: TaskUpdater) -> None:
        run = await self._start(given, config)
        if not run.done():
            await updater.start_work()
        await self._settle(config, updater, await run)

    async def _start(
        self, given: Any, config: dict[str, Any], node: str | None = None
    ) -> asyncio.Future[list[Any]]:
        """Run the graph on ``given``; return the run once it stopped, or ``node`` (any
        node when None) returned while it goes on, or ``grace`` went by."""
        returned: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        run = asyncio.ensure_future(self._drain(given, config, _Returned(returned, node)))
        either: set[asyncio.Future[Any]] = {run, returned}
        try:
            await asyncio.wait(either, timeout=self.grace, return_when=FIRST_COMPLETED)
        except asyncio.CancelledError:
            run.cancel()
            raise
        finally:
            returned.cancel()
        return run

    async def _drain(self, given: Any, config: dict[str, Any], returned: _Returned) -> list[Any]:
        """Run the graph on ``given`` until it stops; the interrupts it raised."""
        if sys.version_info < (3, 11):  # the module says why
            loop = asyncio.get_running_loop()
            return await asyncio.to_thread(self._drain_in_thread, given, config, returned, loop)
        raised: list[Any] = []
        stream = self.graph.astream(
            given, config, stream_mode="updates", durability=self.durability
        )
        async for chunk in stream:
            if _INTERRUPT in chunk:
                raised.extend(chunk[_INTERRUPT])
            elif returned.by(chunk):
                returned.now()
        return raised

    def _drain_in_thread(
        self,
        given: Any,
        config: dict[str, Any],
        returned: _Returned,
        loop: asyncio.AbstractEventLoop,
    ) -> list[Any]:
        raised: list[Any] = []
        stream = self.graph.stream(given, config, stream_mode="updates", durability=self.durability)
        for chunk in stream:
            if _INTERRUPT in chunk:
                raised.extend(chunk[_INTERRUPT])
            elif returned.by(chunk):
                loop.call_soon_threadsafe(returned.now)
        return raised

    async def _settle(
        self, config: dict[str, Any], updater: TaskUpdater, raised: list[Any]
    ) -> None:
        """Ask the first pending interrupt, or complete with the graph's result.

        ``raised``: the interrupts the run that just stopped raised. A run stops at the
        end of the step whose nodes interrupted, and every node still waiting ran in it,
        so one interrupt raised is the only one pending: it is asked without reading
        the graph's state back. Several are asked in the state's order."""
        snapshot = None
        pending = raised if len(raised) == 1 else None
        if pending is None:
            snapshot = await self.graph.aget_state(config)
            pending = list(snapshot.interrupts)
            if not pending:
                self._waiting.pop(updater.task_id, None)
                await self._complete(snapshot.values, updater)
                return
        first = pending[0]
        try:
            asked = prompt_for(first, updater.task_id)
        except MalformedPrompt as exc:
            snapshot = snapshot or await self.graph.aget_state(config)
            raise MalformedPrompt(
                f"the interrupt() in node {_node_of(snapshot, first.id)!r} cannot be asked "
                f"through hitl-prompt/v1: {exc}",
                exc.findings,
            ) from None
        # What the thread waits on, so that its answer resumes it without reading the
        # state back. The only interrupt pending: the node to watch for on resume is
        # whichever returns first (the step's other nodes had returned: their updates
        # come marked cached).
        waiting: dict[str, str | None] = {first.id: None}
        self._waiting[updater.task_id] = waiting if snapshot is None else _waiting_in(snapshot)
        await self._emit(asked, updater, value=first.value)

    async def _emit(
        self, asked: Asked, updater: TaskUpdater, note: str | None = None, value: Any = None
    ) -> None:
        """INPUT_REQUIRED with ``asked``; the interrupt's ``value`` beside the question
        when it is an object, and ``note`` after it."""
        extra = []
        if isinstance(value, dict):
            data = Value()
            data.struct_value.update(_jsonable(value))
            extra.append(Part(data=data))
        if note:
            extra.append(Part(text=note))
        await ask(self.book, asked, updater, extra)

    async def _complete(self, values: Any, updater: TaskUpdater) -> None:
        made = self.result(values)
        if not isinstance(made, str | list):
            made = _jsonable(dict(made))
        await complete_with(updater, made)

    def _refusal(self, asked: Asked, error: Any) -> ResponseInvalid:
        return ResponseInvalid(
            data={
                "extension": EXTENSION_URI,
                "prompt_id": asked.prompt_id,
                "task_id": asked.task_id,
                "detail": "the graph's own check of the answer refused it",
            },
            validation_errors=issues_of(error),
        )

    async def _refused_late(self, asked: Asked, error: Any, updater: TaskUpdater) -> None:
        """LangGraph refused the answer after the task was shown WORKING: ask again,
        under a new prompt_id, the errors in the message."""
        problems = "; ".join(f"{i['path'] or '/'}: {i['message']}" for i in issues_of(error))
        again = prompt_for(_Again(asked), updater.task_id)
        note = f"The previous answer was refused by the graph: {problems}"
        snapshot = await self.graph.aget_state({"configurable": {"thread_id": updater.task_id}})
        value = next((i.value for i in snapshot.interrupts if i.id == asked.tag), None)
        await self._emit(again, updater, note, value=value)
        log.info("task %s: answer refused by the graph after WORKING", updater.task_id)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Close the task's prompts and mark it CANCELED (the graph thread stays as is)."""
        self.book.close_task(context.task_id or "")
        self._waiting.pop(context.task_id or "", None)
        await event_queue.enqueue_event(canceled(context.task_id or "", context.context_id or ""))


class _Returned:
    """Resolves ``future`` when a run's stream shows ``node`` (any node when None)
    returned in the run itself: an update that is not an interrupt, nor one LangGraph
    repeats from before the run (a node of the step that had already returned, marked
    ``cached``)."""

    def __init__(self, future: asyncio.Future[None], node: str | None) -> None:
        self.future = future
        self.node = node

    def by(self, chunk: dict[str, Any]) -> bool:
        """Does this update (``stream_mode="updates"``) show it?"""
        if self.future.done() or (chunk.get(_METADATA) or {}).get("cached"):
            return False
        return self.node is None or self.node in chunk

    def now(self) -> None:
        if not self.future.done():
            self.future.set_result(None)


class _Again:
    """An interrupt asked again: the same question, schema and id."""

    def __init__(self, asked: Asked) -> None:
        self.value = asked.envelope.prompt
        self.response_schema = asked.envelope.response_schema
        self.id = asked.tag


def _waiting_in(snapshot: Any) -> dict[str, str | None]:
    """The interrupts a thread's state waits on: id -> the node that raised it."""
    return {i.id: _node_of(snapshot, i.id) for i in snapshot.interrupts}


def _node_of(snapshot: Any, interrupt_id: str) -> str:
    """The node that raised interrupt ``interrupt_id``."""
    for task in snapshot.tasks:
        if any(i.id == interrupt_id for i in task.interrupts):
            return str(task.name)
    return "?"


def _lost(asked: Asked) -> AskError:
    """The task's open prompt stands for an interrupt the graph thread does not wait on:
    the checkpointer lost what the task store kept (a restart on an in-memory saver)."""
    return AskError(
        f"task {asked.task_id} waits on prompt {asked.prompt_id}, which stands for the "
        f"graph's interrupt {asked.tag}, but the graph's thread {asked.task_id} does not "
        "wait on that interrupt: its checkpointer lost what the task store kept (an "
        "in-memory checkpointer does not outlive a restart). Compile the graph with a "
        "durable checkpointer next to a database task store, e.g. langgraph-checkpoint-"
        "sqlite's AsyncSqliteSaver (pip install 'hitl-nb[langgraph]')"
    )
