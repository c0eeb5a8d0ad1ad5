"""The tornado plumbing both bindings of the mock agent share.

:class:`AgentService` is what every handler is given (the core, the card, the fault
modes, the URL prefix). :class:`BaseHandler` reads bounded JSON bodies, echoes the
extension's activation header, writes errors and pumps a task's events as SSE; the
JSON-RPC (``_jsonrpc.py``) and HTTP+JSON (``_rest.py``) handlers build on it, and so
does the agent card's handler (``_card.py``). The request handling both bindings have in
common is in ``_requests.py``. Which path goes to which handler is the route table in
``_run.py``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any

import tornado.web
from tornado.iostream import StreamClosedError

from hitl_nb._json import parse_json
from hitl_nb.a2a import (
    Codec,
    Message,
    StreamEvent,
    decode_send_push_config,
    encode_comment,
    encode_event,
)
from hitl_nb.errors import (
    BadJSON,
    InvalidParams,
    JSONParseError,
    PayloadTooLarge,
    UnsupportedOperation,
    WireDecodeError,
    WrongContentType,
)
from hitl_nb.mock_agent._core import AgentCore
from hitl_nb.mock_agent._faults import Faults
from hitl_nb.mock_agent._outbox import CLOSED, Listener, ends_stream, follow
from hitl_nb.mock_agent._push_configs import IncomingPush
from hitl_nb.mock_agent._records import TaskRecord
from hitl_nb.mock_agent._requests import parse_count
from hitl_nb.mock_agent._views import event_view, task_view
from hitl_nb.spec import (
    EXTENSION_URI,
    HEADER_EXTENSIONS,
    HEADER_EXTENSIONS_V03,
    HEADER_VERSION,
)

__all__ = ["AgentService", "BaseHandler"]

JSON_TYPES = ("application/json", "application/a2a+json")
MAX_BODY_BYTES = 1024 * 1024
MAX_BODY_DEPTH = 64


@dataclass
class AgentService:
    """What the handlers share: the core, the faults, the card's words (name,
    description, version: :func:`~hitl_nb.mock_agent._card.agent_card`), the limits."""

    core: AgentCore
    faults: Faults
    name: str = "hitl-nb mock agent"
    description: str = "A scripted A2A agent that asks structured questions (hitl-prompt/v1)."
    version: str = "0.1.0"
    prefix: str = ""
    max_body: int = MAX_BODY_BYTES
    ping_interval: float = 15.0


class BaseHandler(tornado.web.RequestHandler):
    """Plumbing shared by both bindings: activation, echo, body reading, SSE."""

    service: AgentService

    def initialize(self, service: AgentService) -> None:
        """Tornado hook: receive the shared service."""
        self.service = service
        self._streaming = False
        self._listener: Listener | None = None
        # A mounted agent meets its loop here (deadline timers need it); idempotent.
        service.core.attach(asyncio.get_running_loop())

    @property
    def core(self) -> AgentCore:
        """The agent core."""
        return self.service.core

    def check_xsrf_cookie(self) -> None:
        """No XSRF token: A2A clients are API clients, and the host may demand one.

        Mounted in an application with ``xsrf_cookies`` on (a Jupyter server), every
        POST would otherwise be refused with 403. A cross-site form or other "simple"
        request can only send a form or ``text/plain`` body, which :meth:`read_body`
        refuses; a JSON content type needs a CORS preflight this agent never grants.
        """

    def activated(self) -> bool:
        """Did the request activate hitl-prompt/v1 (§Activation)?"""
        values: list[str] = []
        for name in (HEADER_EXTENSIONS, HEADER_EXTENSIONS_V03):
            values += self.request.headers.get_list(name)
        return any(v.strip() == EXTENSION_URI for value in values for v in value.split(","))

    def echo_extensions(self, version: str) -> None:
        """§Activation / HTTP header echo: name the URI in the response when activated."""
        if self.activated() and not self.service.faults.no_echo:
            self.set_header(HEADER_EXTENSIONS, EXTENSION_URI)
            if version == "0.3":
                self.set_header(HEADER_EXTENSIONS_V03, EXTENSION_URI)

    def requested_version(self) -> str | None:
        """The ``A2A-Version`` header (or query parameter), or None when absent."""
        value = self.request.headers.get(HEADER_VERSION) or self.get_query_argument(
            HEADER_VERSION, None
        )
        return value.strip() if value else None

    def read_body(self) -> Any:
        """The request body as strict JSON, within the size cap."""
        body = self.request.body
        if len(body) > self.service.max_body:
            raise PayloadTooLarge(
                f"request body of {len(body)} bytes is over the limit of "
                f"{self.service.max_body} bytes"
            )
        ctype = self.request.headers.get("Content-Type", "")
        media = ctype.split(";")[0].strip().lower()
        if media and media not in JSON_TYPES and not media.endswith("+json"):
            raise WrongContentType(
                f"Content-Type {media!r} is not supported; send application/json "
                "or application/a2a+json"
            )
        try:
            return parse_json(body, max_bytes=self.service.max_body, max_depth=MAX_BODY_DEPTH)
        except BadJSON as exc:
            raise JSONParseError(f"request body: {exc}") from None

    def incoming_push(
        self, config: dict[str, Any], codec: Codec, pointer: str
    ) -> IncomingPush | None:
        """The webhook in a send request's configuration (A2A §6.6), if any.

        1.0 names it ``taskPushNotificationConfig``, 0.3 ``pushNotificationConfig``.
        """
        key = "taskPushNotificationConfig" if codec.version == "1.0" else "pushNotificationConfig"
        raw = config.get(key)
        if raw is None:
            return None
        here = f"{pointer}/configuration/{key}"
        try:
            push = decode_send_push_config(raw, codec.version, here)
        except WireDecodeError as exc:
            raise InvalidParams(str(exc)) from None
        return push, codec.version, self.activated()

    def start_sse(self) -> None:
        """Send the headers of a ``text/event-stream`` response."""
        self._streaming = True
        # Events are small and must go out at once: without TCP_NODELAY, Nagle holds an
        # event back until the previous one is acknowledged (up to the delayed-ACK 40 ms).
        stream = getattr(self.request.connection, "stream", None)
        if stream is not None:
            stream.set_nodelay(True)
        self.set_header("Content-Type", "text/event-stream; charset=utf-8")
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Accel-Buffering", "no")

    async def pump(
        self,
        rec: TaskRecord,
        after: int,
        wrap: Callable[[StreamEvent], dict[str, Any]],
        *,
        first: tuple[int, StreamEvent] | None = None,
        first_ends: bool = False,
    ) -> None:
        """Stream the task's events (``first``, then those after ``after``) as SSE;
        ``first_ends``: nothing follows ``first``."""
        activated = self.activated()
        faults = self.service.faults

        listener = self._listener = Listener()

        async def source() -> AsyncGenerator[tuple[int, StreamEvent] | None, None]:
            if first is not None:
                yield first
                if first_ends:
                    return
            interval = self.service.ping_interval
            async for item in follow(rec.outbox, after, ping_interval=interval, listener=listener):
                yield item

        gen = source()
        try:
            async for item in gen:
                if item is None:
                    self.write(encode_comment("ping"))
                else:
                    seq, event = item
                    shown = event_view(event, activated=activated, faults=faults)
                    data = json.dumps(wrap(shown), separators=(",", ":"))
                    self.write(encode_event(data, id=str(seq)))
                await self.flush()
        except StreamClosedError:
            pass
        finally:
            await gen.aclose()

    async def stream_send(
        self,
        result: TaskRecord | Message,
        start: int,
        wrap: Callable[[StreamEvent], dict[str, Any]],
    ) -> None:
        """The SSE answer to SendStreamingMessage, once the core took the message.

        A2A 1.0 §3.1.2: "the stream MUST begin with the Task object". A new task's outbox
        opens with it (``start`` 0); a message on an existing task gets the task as it is
        now first, then what follows. When nothing will follow (the task is terminal or
        waits on an open prompt, e.g. after a plain follow-up), the stream ends there.
        A direct Message reply is the one event.
        """
        self.start_sse()
        if isinstance(result, Message):
            shown = event_view(result, activated=self.activated(), faults=self.service.faults)
            self.write(encode_event(json.dumps(wrap(shown), separators=(",", ":"))))
            await self.flush()
            return
        if start == 0:
            await self.pump(result, 0, wrap)
            return
        snapshot = task_view(result.task, activated=self.activated(), faults=self.service.faults)
        last = result.outbox.last_id
        ends = result.pending == 0 and ends_stream(snapshot)
        await self.pump(result, last, wrap, first=(last, snapshot), first_ends=ends)

    def on_connection_close(self) -> None:
        """The client went away: end its stream now, not at the next write (a ping).

        Without this, a client that subscribes and disconnects in a loop left a listener,
        a coroutine and a socket behind per attempt until the next ``: ping``.
        """
        if self._listener is not None:
            self._listener.push(CLOSED)

    def last_event_id(self) -> int | None:
        """The ``Last-Event-ID`` header as an outbox id (InvalidParams when malformed)."""
        raw = self.request.headers.get("Last-Event-ID")
        if raw is None or not raw.strip():
            return None
        return parse_count(raw, "Last-Event-ID (an event id from this agent)")

    def subscription(self, rec: TaskRecord) -> tuple[int, tuple[int, StreamEvent] | None]:
        """Where a subscription starts: ``(after, first event)``.

        Without Last-Event-ID: the Task snapshot first (A2A §3.1.6), then live events.
        With it: exactly the events after that id (no snapshot), then live ones.
        """
        last = self.last_event_id()
        if last is not None and not self.service.faults.no_replay:
            if rec.task.status.state.is_terminal and last >= rec.outbox.last_id:
                raise UnsupportedOperation(f"task {rec.id} is terminal; nothing to replay")
            return min(last, rec.outbox.last_id), None
        if rec.task.status.state.is_terminal:
            raise UnsupportedOperation(
                f"task {rec.id} is {rec.task.status.state.value}: it cannot be subscribed to"
            )
        snap = task_view(
            rec.task, activated=self.activated(), faults=self.service.faults, snapshot=True
        )
        return rec.outbox.last_id, (rec.outbox.last_id, snap)
