"""HitlClient: talk to any A2A agent about its hitl-prompt/v1 prompts (async)."""

from __future__ import annotations

import logging
import uuid
from collections import OrderedDict
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from typing import Any

from hitl_nb.a2a import (
    Message,
    Part,
    Role,
    SendResult,
    Task,
    TaskState,
)
from hitl_nb.spec import PromptEnvelope

from ._answer import AnswerReceipt, answer_message, answered_prompt, check_locally, deliver
from ._bindings import Binding, TaskPage
from ._connection import ClientConnection
from ._events import ClientEvent, PromptEvent, StatusEvent, TaskEvent, prompt_in_status
from ._follow import Opener, ReconnectHook, follow
from ._push import PushMethods

__all__ = ["HitlClient", "prompt_of"]

log = logging.getLogger("hitl_nb.client")

Content = str | Mapping[str, Any] | Message | Sequence[Part]


class HitlClient(ClientConnection, PushMethods):
    """Async client for an A2A agent that speaks hitl-prompt/v1.

    ``agent`` is the agent's base URL (its card is read from
    ``/.well-known/agent-card.json``), a card URL, a card JSON object or an
    :class:`~hitl_nb.a2a.AgentCard`. ``binding`` (``"auto"``, ``"JSONRPC"``,
    ``"HTTP+JSON"``) and ``version`` (``"auto"``, ``"1.0"``, ``"0.3"``) force an
    interface; "auto" takes the card's first usable one, 1.0 before 0.3.

    Every request carries ``A2A-Version`` and the extension activation header
    (``A2A-Extensions``; ``X-A2A-Extensions`` for 0.3; ``activate_extension=False``
    leaves it out) and any extra ``headers``. A card that does not declare the
    extension raises :class:`~hitl_nb.client.ExtensionNotDeclared` unless
    ``require_extension=False``. ``limits`` (an :class:`~hitl_nb.client.HttpLimits`:
    timeouts and size caps) and ``reconnect`` (a :class:`~hitl_nb.client.Reconnect`:
    retries after a dropped connection) are settings objects; each limit gives a clear
    :class:`~hitl_nb.errors.TransportError`, never a hang::

        HitlClient(url, limits=HttpLimits(timeout=10), reconnect=Reconnect(backoff=0.1))

    Every prompt's response_schema is settled on the way in: integral floats become
    ints where JSON Schema means an integer (protobuf-based agents send ``1024.0``),
    and ``property_order`` says whose key order the forms follow: ``"agent"`` (as
    sent), ``"stable"`` (required names in the ``required`` array's order, then the
    rest alphabetically: the same on every run), or ``"auto"`` (stable when the card
    looks made from protobuf, whose ``Struct`` has no key order; see
    :mod:`hitl_nb._schema_in`). An explicit ``x-ui-order`` / ``ui:order`` still wins.

    ``trace=True`` (or a :class:`~hitl_nb.client.Trace` of your own, to set its bounds
    or share it) records every exchange in :attr:`trace`: headers both ways, status,
    JSON bodies, each server-sent event with its id, timings. It is recorded as the
    client reads, so streams are never read twice.

    Use ``async with HitlClient(url) as client:``; without a ``with``, call
    :meth:`aclose` when done. An injected ``httpx_client`` is not closed; its event
    hooks and transport are used as they are (a hook may read the answer body). One client
    belongs to one event loop (its connections do); from synchronous code use
    :class:`~hitl_nb.client.SyncHitlClient`.
    """

    async def __aenter__(self) -> HitlClient:
        await self.connect()
        return self

    # -- operations ------------------------------------------------------------------

    def _remember(self, item: object) -> None:
        if isinstance(item, PromptEvent):
            _keep(self._prompts, item.prompt_id, item.envelope)
        if isinstance(item, TaskEvent):
            _keep(self._contexts, item.task.id, item.task.context_id)
        elif isinstance(item, (PromptEvent, StatusEvent)) and item.context_id:
            _keep(self._contexts, item.task_id, item.context_id)

    def _remember_task(self, result: SendResult) -> None:
        if isinstance(result, Task):
            if result.context_id:
                _keep(self._contexts, result.id, result.context_id)
            self._remember(prompt_in_status(result.id, result.context_id, result.status))

    @staticmethod
    def _message(
        content: Content,
        task_id: str | None,
        context_id: str | None,
        metadata: Mapping[str, Any] | None,
    ) -> Message:
        if isinstance(content, Message):
            message = content
        else:
            if isinstance(content, str):
                parts = [Part(text=content)]
            elif isinstance(content, Mapping):
                parts = [Part(data=dict(content))]
            else:
                parts = list(content)
            message = Message(message_id=str(uuid.uuid4()), role=Role.USER, parts=parts)
        message.task_id = task_id or message.task_id
        message.context_id = context_id or message.context_id
        if metadata:
            message.metadata = {**(message.metadata or {}), **metadata}
        return message

    async def send(
        self,
        content: Content,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        return_immediately: bool = False,
    ) -> SendResult:
        """SendMessage: text (str), a data part (dict), parts or a Message.

        Blocks until the task is terminal or interrupted (INPUT_REQUIRED) unless
        ``return_immediately``. Returns the Task (see :func:`prompt_of`) or a Message.
        """
        binding = await self._ready()
        message = self._message(content, task_id, context_id or self._context(task_id), metadata)
        result = await binding.send(message, return_immediately=return_immediately)
        self._remember_task(result)
        return result

    async def stream(
        self,
        content: Content,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        on_reconnect: ReconnectHook | None = None,
    ) -> AsyncGenerator[ClientEvent, None]:
        """SendStreamingMessage: neutral events until the task is terminal or waits.

        A dropped connection is resumed (Last-Event-ID or the task snapshot) without
        repeating an event; ``on_reconnect(attempt, delay, reason)`` is told before each
        try. Leaving the ``async for`` closes the connection.
        """
        binding = await self._ready()
        message = self._message(content, task_id, context_id or self._context(task_id), metadata)
        answered = answered_prompt(message)
        events = self._follow(
            lambda _last: binding.stream(message),
            binding,
            message.task_id,
            on_reconnect=on_reconnect,
            answered=answered,
        )
        async for item in events:
            yield item

    async def subscribe(
        self,
        task_id: str,
        *,
        last_event_id: str | None = None,
        on_reconnect: ReconnectHook | None = None,
    ) -> AsyncGenerator[ClientEvent, None]:
        """SubscribeToTask: the task snapshot, then its events (replayed after
        ``last_event_id`` when the agent numbers them). A task that is already terminal
        (which A2A refuses to subscribe to) yields its final snapshot. ``on_reconnect``
        as for :meth:`stream`."""
        binding = await self._ready()

        def first(last: str | None) -> Any:
            return binding.subscribe(task_id, last or last_event_id)

        events = self._follow(first, binding, task_id, subscription=True, on_reconnect=on_reconnect)
        async for item in events:
            yield item

    async def _follow(
        self,
        first: Opener,
        binding: Binding,
        task_id: str | None,
        subscription: bool = False,
        on_reconnect: ReconnectHook | None = None,
        answered: str | None = None,
    ) -> AsyncGenerator[ClientEvent, None]:
        def again(tid: str) -> Opener:
            return lambda last: binding.subscribe(tid, last)

        events = follow(
            first,
            again,
            binding.get_task,
            self.reconnect,
            task_id,
            first_is_subscription=subscription,
            on_reconnect=on_reconnect,
            answered=answered,
        )
        async with aclosing(events):
            async for item in events:
                self._remember(item)
                yield item

    async def get_task(self, task_id: str, *, history_length: int | None = None) -> Task:
        """The task as the agent has it now (A2A GetTask).

        ``history_length`` caps the messages the agent returns. A prompt open on the task
        is remembered, so :meth:`respond` can check an answer against it.
        """
        task = await (await self._ready()).get_task(task_id, history_length)
        self._remember_task(task)
        return task

    async def list_tasks(
        self,
        *,
        context_id: str | None = None,
        state: TaskState | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
    ) -> TaskPage:
        """One page of the agent's tasks (A2A ListTasks), filtered by context and state.

        ``page_token`` is the previous page's ``next_page_token``. A2A 1.0 agents only:
        0.3 has no such method (:class:`~hitl_nb.errors.UnsupportedOperation`).
        """
        filters: dict[str, Any] = {}
        for key, value in (
            ("contextId", context_id),
            ("status", state),
            ("pageSize", page_size),
            ("pageToken", page_token),
        ):
            if value is not None:
                filters[key] = value
        return await (await self._ready()).list_tasks(filters)

    async def cancel(self, task_id: str) -> Task:
        """Ask the agent to cancel the task (A2A CancelTask); returns it as it now stands.

        A task already terminal raises :class:`~hitl_nb.errors.TaskNotCancelable`.
        """
        return await (await self._ready()).cancel(task_id)

    # -- answering -------------------------------------------------------------------

    def _context(self, task_id: str | None) -> str | None:
        """The contextId of a task this client has seen (None when unknown)."""
        return self._contexts.get(task_id) if task_id else None

    def receipt(self, prompt_id: str) -> AnswerReceipt | None:
        """How this client's accepted answer to ``prompt_id`` went (None: no such answer).

        Says whether acceptance was learnt from the task (the agent's reply was lost)
        and how long the agent took to leave INPUT_REQUIRED when that was seen; over
        the 1 s of §Acceptance and rejection, ``receipt.slow`` is true.
        """
        return self._receipts.get(prompt_id)

    async def _prompt(self, task_id: str, prompt_id: str) -> tuple[PromptEnvelope | None, Task]:
        task = await self.get_task(task_id)
        found = prompt_in_status(task.id, task.context_id, task.status)
        if isinstance(found, PromptEvent) and found.prompt_id == prompt_id:
            return found.envelope, task
        return None, task

    async def respond(
        self,
        task_id: str,
        prompt_id: str,
        payload: Mapping[str, Any],
        *,
        prompt: PromptEnvelope | None = None,
        context_id: str | None = None,
        text: str | None = None,
        wait: bool = False,
        validate: bool = True,
    ) -> SendResult:
        """Answer a prompt (§Response Envelope); exactly-once safe.

        The payload is validated locally against the prompt's response_schema first
        (the prompt comes from ``prompt``, an earlier event, or GetTask): an invalid one
        raises :class:`~hitl_nb.errors.ResponseInvalid` with ``validation_errors`` and
        nothing is sent. The agent's 409 / 422 raise
        :class:`~hitl_nb.errors.PromptConflict` / ``ResponseInvalid``.

        If the connection fails with the answer in flight, the client asks the agent
        (GetTask) whether the task left INPUT_REQUIRED for this prompt before resending,
        so a retry never turns an accepted answer into a spurious 409: an answer of ours
        that landed (our message in the task's history, or the prompt closed with
        nothing in the history saying another answer or the task's end closed it: the
        rule is :func:`~hitl_nb.client._answer.fate`) is accepted whatever state the
        task is in. When it cannot find out,
        :class:`AnswerOutcomeUnknown` is raised. :meth:`receipt` then tells how the
        accepted answer went (recovered from the task; how long the agent took to
        resume when over the spec's 1 s).

        The answer carries the task's ``contextId`` (from ``context_id``, an earlier
        event, or GetTask), so SDK-built agents file it under the task's context.

        ``wait=True`` returns once the task is terminal or interrupted again (a
        blocking send); by default the agent answers as soon as it accepted.

        ``validate=False`` sends the payload as it is, without the local check (and
        without the envelope's own shape check): to test on purpose that an agent
        answers a bad payload with 422 (``ResponseInvalid``).
        """
        binding = await self._ready()
        envelope = prompt or self._prompts.get(prompt_id)
        context_id = context_id or self._context(task_id)
        if envelope is None or context_id is None:
            # The answer must carry the task's contextId (an SDK agent would otherwise
            # file it under a new context), and is checked against the open prompt.
            found, task = await self._prompt(task_id, prompt_id)
            envelope = envelope or found
            context_id = context_id or task.context_id or None
        if envelope is not None and validate:
            check_locally(envelope, payload)
        message = answer_message(task_id, context_id, prompt_id, payload, text, validate=validate)
        result, receipt = await deliver(binding, message, prompt_id, self.reconnect, wait)
        self._prompts.pop(prompt_id, None)
        _keep(self._receipts, prompt_id, receipt)
        self._remember_task(result)
        return result


def _keep(table: OrderedDict[str, Any], key: str, value: Any) -> None:
    """Remember ``value`` under ``key``, keeping the 256 newest entries."""
    table[key] = value
    table.move_to_end(key)
    while len(table) > 256:
        table.popitem(last=False)


def prompt_of(result: SendResult) -> ClientEvent | None:
    """The prompt (or malformed prompt) a send result or task carries, if any."""
    if isinstance(result, Task):
        return prompt_in_status(result.id, result.context_id, result.status)
    return None
