"""SyncHitlClient: the same operations as :class:`HitlClient`, blocking.

For scripts and notebook cells. Every call runs on one private event loop thread
(:class:`hitl_nb._sync.LoopThread`), never on the kernel's loop and never through
``nest_asyncio``, so it is safe inside a running ipykernel (cells queued behind it
still run).
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

import httpx

from hitl_nb._sync import LoopThread, SyncIterator
from hitl_nb.a2a import (
    AgentCard,
    BindingChoice,
    PushConfig,
    SendResult,
    StreamEvent,
    Task,
    TaskState,
    VersionChoice,
)
from hitl_nb.spec import PromptEnvelope

from ._agent_card import Selection
from ._answer import AnswerReceipt
from ._bindings import TaskPage
from ._client import Content, HitlClient
from ._connection import DEFAULT_LIMITS, DEFAULT_RECONNECT
from ._events import ClientEvent
from ._follow import Reconnect, ReconnectHook
from ._http import HttpLimits
from ._trace import Trace

__all__ = ["SyncHitlClient"]

T = TypeVar("T")


class SyncHitlClient:
    """Blocking client for an A2A agent that speaks hitl-prompt/v1.

    Takes the arguments of :class:`~hitl_nb.client.HitlClient` (``binding``,
    ``version``, ``require_extension``, ``activate_extension``, ``headers``, ``limits``,
    ``reconnect``, ``trace``, ``httpx_client``). An injected ``httpx.AsyncClient`` is
    used on the private loop only (make it, then hand it over without using it
    elsewhere: its connections belong to the loop that first uses them), and is closed
    with this client. ``call_timeout`` (seconds, default none) bounds each call as a whole
    on top of the client's own network timeouts. Use ``with SyncHitlClient(url) as
    client:`` or call :meth:`close`.
    """

    def __init__(
        self,
        agent: str | AgentCard | Mapping[str, Any],
        *,
        call_timeout: float | None = None,
        binding: BindingChoice = "auto",
        version: VersionChoice = "auto",
        require_extension: bool = True,
        activate_extension: bool = True,
        headers: Mapping[str, str] | None = None,
        limits: HttpLimits = DEFAULT_LIMITS,
        reconnect: Reconnect = DEFAULT_RECONNECT,
        property_order: str = "auto",
        trace: bool | Trace = False,
        httpx_client: httpx.AsyncClient | None = None,
    ) -> None:
        if httpx_client is not None and not isinstance(httpx_client, httpx.AsyncClient):
            raise TypeError(
                "httpx_client must be an httpx.AsyncClient (it runs on the client's private "
                f"loop), got {type(httpx_client).__name__}"
            )

        async def make() -> HitlClient:
            # Made on the private loop, so its lock and connection pool belong to it.
            return HitlClient(
                agent,
                binding=binding,
                version=version,
                require_extension=require_extension,
                activate_extension=activate_extension,
                headers=headers,
                limits=limits,
                reconnect=reconnect,
                property_order=property_order,
                trace=trace,
                httpx_client=httpx_client,
            )

        self._injected = httpx_client
        self._runner = LoopThread(name="hitl-nb-client")
        self._timeout = call_timeout
        try:
            self._client = self._runner.run(make())
        except BaseException:
            self._runner.close()
            raise

    @classmethod
    def on_shared_loop(
        cls,
        runner: LoopThread,
        agent: str | AgentCard | Mapping[str, Any],
        *,
        call_timeout: float | None = None,
        **options: Any,
    ) -> SyncHitlClient:
        """A client whose calls run on ``runner``, a loop thread shared with others.

        For many clients without a thread each (the notebook's conversations share
        one). ``options`` are :class:`HitlClient`'s; :meth:`close` closes this client's
        connections and leaves the shared loop running.
        """
        self = cls.__new__(cls)
        # The attributes __init__ sets, with the shared loop in place of a private one.
        self._injected = options.get("httpx_client")
        self._runner = _Borrowed(runner)  # type: ignore[assignment]
        self._timeout = call_timeout

        async def make() -> HitlClient:
            return HitlClient(agent, **options)

        self._client = runner.run(make(), call_timeout)
        return self

    @property
    def call_timeout(self) -> float | None:
        """The bound on each call as a whole (seconds; None: the network timeouts only)."""
        return self._timeout

    @property
    def trace(self) -> Trace | None:
        """The wire trace (None unless made with ``trace=``); see :class:`HitlClient`."""
        return self._client.trace

    @property
    def client(self) -> HitlClient:
        """The async client underneath (its coroutines belong to the private loop)."""
        return self._client

    def connect(self) -> AgentCard:
        """Read the card and choose the interface."""
        return self._runner.run(self._client.connect(), self._timeout)

    @property
    def card(self) -> AgentCard | None:
        """The agent's card (None before the first call)."""
        return self._client.card

    @property
    def selection(self) -> Selection | None:
        """The interface in use."""
        return self._client.selection

    @property
    def activation_echoed(self) -> bool | None:
        """Whether the agent echoed the activation header."""
        return self._client.activation_echoed

    def send(self, content: Content, **kwargs: Any) -> SendResult:
        """SendMessage (see :meth:`HitlClient.send`)."""
        return self._runner.run(self._client.send(content, **kwargs), self._timeout)

    def stream(self, content: Content, **kwargs: Any) -> SyncIterator[ClientEvent]:
        """SendStreamingMessage as a blocking iterator; ``close()`` it to hang up."""
        return SyncIterator(self._runner, self._client.stream(content, **kwargs), self._timeout)

    def subscribe(
        self,
        task_id: str,
        *,
        last_event_id: str | None = None,
        on_reconnect: ReconnectHook | None = None,
    ) -> SyncIterator[ClientEvent]:
        """SubscribeToTask as a blocking iterator (see :meth:`HitlClient.subscribe`)."""
        events = self._client.subscribe(
            task_id, last_event_id=last_event_id, on_reconnect=on_reconnect
        )
        return SyncIterator(self._runner, events, self._timeout)

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule a coroutine on this client's private loop and return at once.

        For background work with :attr:`client` (e.g. following a task while the cell
        returns): the coroutine runs on the loop the connections belong to. Raises
        ``RuntimeError`` once the client is closed.
        """
        return self._runner.submit(coro)

    def get_task(self, task_id: str, *, history_length: int | None = None) -> Task:
        """The task as the agent has it now (see :meth:`HitlClient.get_task`)."""
        return self._runner.run(
            self._client.get_task(task_id, history_length=history_length), self._timeout
        )

    def list_tasks(
        self,
        *,
        context_id: str | None = None,
        state: TaskState | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
    ) -> TaskPage:
        """One page of the agent's tasks (see :meth:`HitlClient.list_tasks`)."""
        coro = self._client.list_tasks(
            context_id=context_id, state=state, page_size=page_size, page_token=page_token
        )
        return self._runner.run(coro, self._timeout)

    def cancel(self, task_id: str) -> Task:
        """Ask the agent to cancel the task (see :meth:`HitlClient.cancel`)."""
        return self._runner.run(self._client.cancel(task_id), self._timeout)

    def create_push_config(
        self,
        task_id: str,
        url: str,
        *,
        token: str | None = None,
        config_id: str | None = None,
        auth_scheme: str | None = None,
        auth_credentials: str | None = None,
    ) -> PushConfig:
        """Ask the agent to POST the task's updates to ``url`` (see
        :meth:`HitlClient.create_push_config`)."""
        coro = self._client.create_push_config(
            task_id,
            url,
            token=token,
            config_id=config_id,
            auth_scheme=auth_scheme,
            auth_credentials=auth_credentials,
        )
        return self._runner.run(coro, self._timeout)

    def get_push_config(self, task_id: str, config_id: str | None = None) -> PushConfig:
        """One push configuration of the task (see :meth:`HitlClient.get_push_config`)."""
        return self._runner.run(self._client.get_push_config(task_id, config_id), self._timeout)

    def list_push_configs(self, task_id: str) -> list[PushConfig]:
        """Every push configuration of the task (see :meth:`HitlClient.list_push_configs`)."""
        return self._runner.run(self._client.list_push_configs(task_id), self._timeout)

    def delete_push_config(self, task_id: str, config_id: str) -> None:
        """Remove a push configuration (see :meth:`HitlClient.delete_push_config`)."""
        self._runner.run(self._client.delete_push_config(task_id, config_id), self._timeout)

    def read_notification(self, body: Any) -> StreamEvent:
        """A push notification's JSON body as a neutral event (see
        :meth:`HitlClient.read_notification`)."""
        return self._runner.run(self._client.read_notification(body), self._timeout)

    def respond(
        self,
        task_id: str,
        prompt_id: str,
        payload: Mapping[str, Any],
        *,
        prompt: PromptEnvelope | None = None,
        **kwargs: Any,
    ) -> SendResult:
        """Answer a prompt, exactly-once safe (see :meth:`HitlClient.respond`;
        ``validate=False`` sends a payload the local check would refuse)."""
        coro = self._client.respond(task_id, prompt_id, payload, prompt=prompt, **kwargs)
        return self._runner.run(coro, self._timeout)

    def receipt(self, prompt_id: str) -> AnswerReceipt | None:
        """How this client's accepted answer to ``prompt_id`` went (see
        :meth:`HitlClient.receipt`)."""
        return self._client.receipt(prompt_id)

    def close(self) -> None:
        """Close the connections and stop the private loop thread (idempotent).

        An injected ``httpx_client`` is closed too: its connections belong to the
        private loop, which ends here, so nothing else could close them.
        """
        if not self._runner.closed:
            try:
                self._runner.run(self._client.aclose(), 10.0)
                if self._injected is not None:
                    self._runner.run(self._injected.aclose(), 10.0)
            finally:
                self._runner.close()

    def __del__(self) -> None:
        runner = getattr(self, "_runner", None)
        if runner is not None and not runner.closed:
            try:
                self.close()
            except Exception:  # best effort at garbage collection
                pass

    def __enter__(self) -> SyncHitlClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Borrowed:
    """A shared :class:`LoopThread` as one client sees it: closing it closes nothing."""

    def __init__(self, runner: LoopThread) -> None:
        self._runner = runner
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed or self._runner.closed

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return self._runner.run(coro, timeout)

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return self._runner.submit(coro)

    def close(self, timeout: float = 5.0) -> None:
        self._closed = True
