"""The harness's line to the agent under test, and everything it saw on it.

A :class:`Session` reads the agent card itself (the raw JSON is kept for EXT-CARD),
then talks through :class:`~hitl_nb.client.HitlClient` on an ``httpx.AsyncClient``
whose response hook records every answer: the activation header of the request and
the ``A2A-Extensions`` echo of the answer (EXT-ECHO), the exact HTTP status (CF-2, the
409 of CF-1 and the 422 of CF-3). On the gRPC binding the client's calls are recorded
the same way through :class:`~hitl_nb.conformance._grpc_wire.CallWatch` (the
``a2a-extensions`` metadata both ways, the gRPC status code). Every task status that
passes by is recorded as a :class:`Sighting` when it carries an envelope, so the further
checks can judge every envelope the agent actually emitted.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import aclosing
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import httpx

from hitl_nb._json import parse_json
from hitl_nb.a2a import AgentCard, Task, TaskState, codec_for, grpc_missing
from hitl_nb.a2a import TaskStatus as Status
from hitl_nb.client import (
    ACCEPT_ENCODING,
    Exchange,
    HitlClient,
    HttpLimits,
    MalformedPromptEvent,
    PromptEvent,
    Reconnect,
    StatusEvent,
    TaskEvent,
    Trace,
    agent_card_url,
    http_client,
    parse_agent_card,
)
from hitl_nb.errors import (
    A2AError,
    AgentTimeout,
    AgentUnreachable,
    BadJSON,
    ProtocolViolation,
)
from hitl_nb.spec import (
    EXTENSION_URI,
    HEADER_EXTENSIONS,
    HEADER_EXTENSIONS_V03,
    HEADER_VERSION,
    RESPONSE_KEY,
    check_prompt,
    find_envelope,
)

from ._driver import Driver
from ._payloads import invalid_payload, valid_payload
from ._records import (
    Answer,
    DriveFailed,
    Prompted,
    Seen,
    Settings,
    Sighting,
    activated,
    uris,
)
from ._wire import RawSubscription, read_bounded

if TYPE_CHECKING:
    from ._grpc_wire import GrpcSubscription

__all__ = ["Session", "left"]


class Session:
    """The harness's client, the card, and the record of what the agent did."""

    def __init__(
        self, url: str, settings: Settings, driver: Driver, trace: Trace | None = None
    ) -> None:
        self.url = url
        #: Every exchange of the run, when tracing (the clients and the raw requests).
        self.trace = trace
        self.settings = settings
        self.driver = driver
        self.seen: list[Seen] = []
        self.sightings: list[Sighting] = []
        self.unactivated: list[tuple[str, str]] = []  # (where, what) envelope leaks
        self.notes: list[str] = []
        self.card_raw: dict[str, Any] = {}
        self.card: AgentCard | None = None
        self._http = http_client(event_hooks={"response": [self._record]})
        # The recorder of gRPC calls, when the card lists a gRPC interface (_grpc_wire).
        self._watch: Trace | None = None
        self.client: HitlClient | None = None
        self.binding = "?"
        self.version = "?"
        self.interface_url = url

    async def _record(self, response: httpx.Response) -> None:
        request = response.request
        self.seen.append(
            Seen(
                request.method,
                str(request.url),
                response.status_code,
                activated(request),
                uris(response.headers.get_list(HEADER_EXTENSIONS)),
                uris(response.headers.get_list(HEADER_EXTENSIONS_V03)),
            )
        )

    # -- setting up ---------------------------------------------------------------------

    async def open(self) -> None:
        """Read the card, choose the interface, and make the client."""
        card = await self.read_card()
        await self._connect(card)

    async def read_card(self) -> AgentCard:
        """Read the agent card (kept raw for EXT-CARD, and parsed)."""
        where = agent_card_url(self.url)
        request = self._http.build_request(
            "GET",
            where,
            headers={"Accept-Encoding": ACCEPT_ENCODING, **self.settings.headers},
            timeout=self.settings.request_timeout,
        )
        trace = self.trace
        exchange = None
        if trace is not None:
            exchange = trace.begin("GET", where, "agent card", request.headers.multi_items(), b"")
        try:
            answer = await self._http.send(request, stream=True)
            if trace is not None and exchange is not None:
                trace.answered(exchange, answer.status_code, answer.headers.multi_items())
            try:
                body = await read_bounded(answer)
            finally:
                await answer.aclose()
            if trace is not None and exchange is not None:
                trace.body(exchange, body)
        except httpx.TimeoutException as exc:
            error: Exception = AgentTimeout(f"reading the agent card at {where} timed out: {exc}")
            if trace is not None and exchange is not None:
                trace.failed(exchange, error)
            raise error from exc
        except httpx.HTTPError as exc:
            error = AgentUnreachable(f"cannot read the agent card at {where}: {exc}")
            if trace is not None and exchange is not None:
                trace.failed(exchange, error)
            raise error from exc
        if answer.status_code != 200:
            raise ProtocolViolation(f"no agent card at {where}: HTTP {answer.status_code}")
        try:
            raw = parse_json(body)
        except BadJSON as exc:
            raise ProtocolViolation(f"the agent card at {where} is not JSON: {exc}") from exc
        card = parse_agent_card(raw)
        self.card_raw = raw if isinstance(raw, dict) else {}
        self.card = card
        return card

    async def _connect(self, card: AgentCard) -> None:
        grpc_listed = any(i.protocol_binding.upper() == "GRPC" for i in card.supported_interfaces)
        if grpc_listed and grpc_missing() is None:
            from ._grpc_wire import CallWatch  # imports grpc: only for such cards

            self._watch = CallWatch(self.trace, self._record_call)
        self.client = self.make_client(card, activate=True)
        await self.client.connect()
        selection = self.client.selection
        assert selection is not None
        listed = any(
            i.protocol_binding.upper() == selection.binding
            and ".".join(i.protocol_version.split(".")[:2]) == selection.version
            for i in card.supported_interfaces
        )
        if not listed:
            self.notes.append(
                f"the card lists no {selection.binding} interface for A2A {selection.version}; "
                f"the harness speaks {selection.version} to {selection.url}"
            )
        self.binding, self.version, self.interface_url = (
            selection.binding,
            selection.version,
            selection.url,
        )

    def make_client(self, card: AgentCard, *, activate: bool) -> HitlClient:
        """A client on the recording connection pool, activating the extension or not."""
        s = self.settings
        trace = self._watch if self._watch is not None else self.trace
        return HitlClient(
            card,
            httpx_client=self._http,
            binding=s.binding,
            version=s.version,
            require_extension=False,
            activate_extension=activate,
            headers=dict(s.headers),
            limits=HttpLimits(
                timeout=s.request_timeout,
                stream_idle_timeout=max(s.drive_timeout, s.resume_timeout),
            ),
            reconnect=Reconnect(max_reconnects=2, backoff=0.1),
            trace=trace if trace is not None else False,
        )

    def _record_call(self, exchange: Exchange) -> None:
        """Record one finished gRPC call as :meth:`_record` records an HTTP answer."""
        from ._grpc_wire import grpc_code_of

        def values(pairs: list[tuple[str, str]]) -> list[str]:
            return [v for k, v in pairs if k.lower() == HEADER_EXTENSIONS.lower()]

        self.seen.append(
            Seen(
                "GRPC",
                exchange.url,
                exchange.status or 0,
                EXTENSION_URI in uris(values(exchange.request_headers)),
                uris(values(exchange.response_headers)),
                grpc_status=grpc_code_of(exchange),
            )
        )

    async def close(self) -> None:
        """Close the connections (the gRPC channel too)."""
        try:
            if self.client is not None:
                await self.client.aclose()
        finally:
            await self._http.aclose()

    def streaming(self) -> bool:
        """Whether the card says the agent streams."""
        return bool(self.card and self.card.capabilities.streaming)

    @property
    def grpc(self) -> bool:
        """True on the gRPC binding."""
        return self.binding == "GRPC"

    @property
    def activation_headers_name(self) -> str:
        """The activation header of this wire version (``X-A2A-Extensions`` in 0.3; the
        ``a2a-extensions`` metadata on gRPC)."""
        if self.grpc:
            return HEADER_EXTENSIONS.lower() + " metadata"
        return HEADER_EXTENSIONS_V03 if self.version == "0.3" else HEADER_EXTENSIONS

    @property
    def activation_headers(self) -> dict[str, str]:
        """The headers the activated client sends (for raw requests)."""
        name = self.activation_headers_name
        return {**self.settings.headers, HEADER_VERSION: self.version, name: EXTENSION_URI}

    def prompt_tasks(self) -> set[str]:
        """The tasks seen waiting on an envelope."""
        return {x.task_id for x in self.sightings if x.state is TaskState.INPUT_REQUIRED}

    async def ensure_prompts(self, count: int, purpose: str) -> None:
        """Drive new tasks until ``count`` tasks were seen waiting on a prompt."""
        while len(self.prompt_tasks()) < count:
            await self.drive(purpose)

    # -- watching --------------------------------------------------------------------------

    def observe(self, task_id: str, status: Status, source: str) -> None:
        """Record the envelope a status carries, if any."""
        meta = status.message.metadata if status.message is not None else None
        if isinstance(meta, dict) and EXTENSION_URI in meta:
            sighting = Sighting(
                task_id, status.state, find_envelope(meta), datetime.now(timezone.utc), source
            )
            self.sightings.append(sighting)

    def observe_task(self, task: Task, source: str) -> None:
        """Record the envelope of a task's status."""
        self.observe(task.id, task.status, source)

    # -- driving ---------------------------------------------------------------------------

    async def drive(self, purpose: str) -> Prompted:
        """Start a new task with the driver's message; return once it waits on a prompt."""
        assert self.client is not None
        content = await self.driver.first_message(purpose)
        try:
            return await asyncio.wait_for(
                self._drive(content, purpose), self.settings.drive_timeout
            )
        except asyncio.TimeoutError:
            raise DriveFailed(
                f"no INPUT_REQUIRED with an envelope within {self.settings.drive_timeout:g} s "
                f"of the driver's message ({self.driver.description})"
            ) from None

    async def _drive(self, content: Any, purpose: str) -> Prompted:
        assert self.client is not None
        if not self.streaming():
            result = await self.client.send(content)
            if not isinstance(result, Task):
                raise DriveFailed("the agent answered the driver's message with a Message, no task")
            self.observe_task(result, f"{purpose}: SendMessage")
            return self._prompted(result.id, result.context_id, result.status, None, None)
        last: Status | None = None
        ids: list[str] = []
        # Closed on return: the call ends now (and is recorded), not when collected.
        async with aclosing(self.client.stream(content)) as events:
            async for event in events:
                if isinstance(event, (TaskEvent, StatusEvent)):
                    last = event.task.status if isinstance(event, TaskEvent) else event.status
                    self.observe(event.task_id, last, f"{purpose}: stream")
                    if event.event_id is not None and event.event_id not in ids:
                        ids.append(event.event_id)
                if isinstance(event, (PromptEvent, MalformedPromptEvent)) and last is not None:
                    at = ids.index(event.event_id) if event.event_id in ids else -1
                    before = ids[at - 1] if at > 0 else None
                    return self._prompted(
                        event.task_id, event.context_id, last, event.event_id, before
                    )
        what = last.state.value if last is not None else "no task event"
        raise DriveFailed(
            f"the stream ended without a prompt envelope (last state: {what}); the driver "
            f"({self.driver.description}) must start a task that asks for input"
        )

    def _prompted(
        self,
        task_id: str,
        context_id: str,
        status: Status,
        event_id: str | None,
        before_id: str | None,
    ) -> Prompted:
        meta = status.message.metadata if status.message is not None else None
        raw = find_envelope(meta)
        if status.state is not TaskState.INPUT_REQUIRED or raw is None:
            raise DriveFailed(
                f"task {task_id} is {status.state.value} "
                f"{'with' if raw is not None else 'without'} a prompt envelope"
            )
        pid = raw.get("prompt_id") if isinstance(raw, dict) else None
        schema = raw.get("response_schema") if isinstance(raw, dict) else None
        if not isinstance(pid, str) or not isinstance(schema, dict):
            raise DriveFailed(
                f"task {task_id}: the envelope has no usable prompt_id / response_schema: "
                f"{str(raw)[:200]}"
            )
        malformed = None
        errors = [f for f in check_prompt(raw, mode="orchestrator") if f.severity == "error"]
        if errors:
            malformed = "; ".join(str(f) for f in errors[:3])
        return Prompted(task_id, context_id, pid, schema, raw, event_id, before_id, malformed)

    # -- answering -------------------------------------------------------------------------

    def payloads(
        self, p: Prompted
    ) -> tuple[dict[str, Any] | None, tuple[dict[str, Any], str] | None]:
        """The valid and the invalid payload for a prompt (driver's first, else built)."""
        info = p.info()
        valid = self.driver.valid_payload(info)
        if valid is None:
            valid = valid_payload(p.response_schema)
        invalid_given = self.driver.invalid_payload(info)
        invalid: tuple[dict[str, Any], str] | None
        if invalid_given is not None:
            invalid = (invalid_given, "the driver's invalid payload")
        else:
            invalid = invalid_payload(p.response_schema, valid)
        return valid, invalid

    def response_message(self, p: Prompted, prompt_id: str, payload: Any) -> dict[str, Any]:
        """The ``metadata`` of a response Message (§Response Envelope)."""
        return {RESPONSE_KEY: {"prompt_id": prompt_id, "payload": payload}}

    async def answer(self, p: Prompted, payload: Any, *, prompt_id: str | None = None) -> Answer:
        """Send a response envelope with SendMessage; never validates locally first."""
        assert self.client is not None
        pid = prompt_id or p.prompt_id
        mark = len(self.seen)
        t0 = time.perf_counter()
        try:
            result = await self.client.send(
                f"Response to prompt {pid}",
                task_id=p.task_id,
                context_id=p.context_id,
                metadata=self.response_message(p, pid, payload),
                return_immediately=True,
            )
        except A2AError as exc:
            status, code = self._last_status(mark)
            return Answer(False, status, exc, None, _ms(t0), code)
        elapsed = _ms(t0)
        task = result if isinstance(result, Task) else None
        if task is not None:
            self.observe_task(task, "answer")
        status, code = self._last_status(mark)
        return Answer(True, status, None, task, elapsed, code)

    def _last_status(self, mark: int) -> tuple[int | None, str | None]:
        """The HTTP status (and the gRPC code, on gRPC) of the last call since ``mark``."""
        calls = [s for s in self.seen[mark:] if s.method in ("POST", "GRPC")]
        return (calls[-1].status, calls[-1].grpc_status) if calls else (None, None)

    async def get_task(self, task_id: str) -> Task:
        """GetTask, recorded."""
        assert self.client is not None
        task = await self.client.get_task(task_id)
        self.observe_task(task, "GetTask")
        return task

    async def wait_left(self, task_id: str, prompt_id: str, timeout: float) -> Task | None:
        """The task once it left INPUT_REQUIRED for ``prompt_id``; None after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            task = await self.get_task(task_id)
            if left(task.status, prompt_id):
                return task
            if time.monotonic() >= deadline:
                return None
            await asyncio.sleep(0.02)

    def subscription(
        self, task_id: str, last_event_id: str | None
    ) -> RawSubscription | GrpcSubscription:
        """A raw SubscribeToTask stream on the recording pool (not yet open); on gRPC a
        call of its own (gRPC numbers no events: ``last_event_id`` has no carriage)."""
        if self.grpc:
            from ._grpc_wire import GrpcSubscription

            metadata = {
                **{k.lower(): v for k, v in self.settings.headers.items()},
                HEADER_VERSION.lower(): self.version,
                HEADER_EXTENSIONS.lower(): EXTENSION_URI,
            }
            return GrpcSubscription(
                url=self.interface_url,
                codec=codec_for(self.version),
                metadata=metadata,
                task_id=task_id,
                trace=self.trace,
                on_answer=self._record_call,
                timeout=self.settings.request_timeout,
            )
        return RawSubscription(
            self._http,
            url=self.interface_url,
            binding=self.binding,
            version=self.version,
            codec=codec_for(self.version),
            headers=self.activation_headers,
            task_id=task_id,
            last_event_id=last_event_id,
            trace=self.trace,
        )


def left(status: Status, prompt_id: str) -> bool:
    """Has the task left INPUT_REQUIRED for this prompt (another state, or a new prompt)?"""
    if status.state is not TaskState.INPUT_REQUIRED:
        return True
    raw = find_envelope(status.message.metadata if status.message is not None else None)
    return isinstance(raw, dict) and raw.get("prompt_id") not in (None, prompt_id)


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000
