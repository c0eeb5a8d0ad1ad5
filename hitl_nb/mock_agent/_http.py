"""The tornado plumbing both bindings of the mock agent share.

:class:`AgentService` is what every handler is given (the core, the card, the fault
modes, the URL prefix). :class:`BaseHandler` reads bounded JSON bodies, echoes the
extension's activation header, writes errors and pumps a task's events as SSE; the
JSON-RPC (``_jsonrpc.py``) and HTTP+JSON (``_rest.py``) handlers build on it, and so
does the agent card's handler (``_card_http.py``). :func:`decode_send_params` and
:func:`list_tasks` are the request handling both bindings have in common. Which path
goes to which handler is the route table in ``_routes.py``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any

import tornado.web
from tornado.iostream import StreamClosedError

from hitl_nb._json import parse_json
from hitl_nb.a2a import (
    CODEC_V1,
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    Codec,
    Message,
    StreamEvent,
    TaskState,
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
from hitl_nb.mock_agent._card_cache import CardStamps
from hitl_nb.mock_agent._core import AgentCore
from hitl_nb.mock_agent._faults import Faults
from hitl_nb.mock_agent._outbox import CLOSED, Listener, ends_stream, follow
from hitl_nb.mock_agent._records import TaskRecord
from hitl_nb.mock_agent._views import event_view, task_view
from hitl_nb.mock_agent._wire_errors import (
    VALIDATION_DETAIL_TYPE,
)
from hitl_nb.spec import (
    EXTENSION_URI,
    HEADER_EXTENSIONS,
    HEADER_EXTENSIONS_V03,
    HEADER_VERSION,
    agent_card_extension,
    parse_rfc3339,
)

__all__ = [
    "AgentService",
    "BaseHandler",
    "VALIDATION_DETAIL_TYPE",
    "parse_count",
]

JSON_TYPES = ("application/json", "application/a2a+json")
MAX_BODY_BYTES = 1024 * 1024
MAX_BODY_DEPTH = 64
# Counters on the wire (event ids, page tokens, query integers) are ASCII digits, at most
# 18 of them: str.isdigit() also accepts "²" and "١", which int() refuses or reads,
# and int() refuses more than 4300 digits.
_COUNT = re.compile(r"[0-9]{1,18}")


def parse_count(raw: str, what: str) -> int:
    """A non-negative integer written in ASCII digits (InvalidParams naming ``what``)."""
    text = raw.strip()
    if _COUNT.fullmatch(text) is None:
        shown = text if len(text) <= 40 else text[:40] + f"... ({len(text)} characters)"
        raise InvalidParams(f"{what} must be a non-negative integer, got {shown!r}")
    return int(text)


@dataclass
class AgentService:
    """What the handlers share: the core, the faults, the card's text, the limits."""

    core: AgentCore
    faults: Faults
    name: str = "hitl-nb mock agent"
    description: str = "A scripted A2A agent that asks structured questions (hitl-prompt/v1)."
    version: str = "0.1.0"
    prefix: str = ""
    max_body: int = MAX_BODY_BYTES
    ping_interval: float = 15.0
    card_stamps: CardStamps = field(default_factory=CardStamps)

    def card(self, base_url: str) -> AgentCard:
        """The agent card for clients that reach the agent at ``base_url``."""
        ext = agent_card_extension()
        skills = [
            AgentSkill(
                s.name,
                s.name,
                f'{s.description} Start it with a data part {{"scenario": "{s.name}"}} '
                f'or the text "{s.name}" in the first message (default: approval).',
                tags=["hitl-prompt", "scenario"],
                examples=[s.name],
            )
            for s in self.core.scenarios
        ]
        return AgentCard(
            name=self.name,
            description=self.description,
            version=self.version,
            supported_interfaces=[
                AgentInterface(base_url + "/", "JSONRPC", "1.0"),
                AgentInterface(base_url, "HTTP+JSON", "1.0"),
            ],
            capabilities=AgentCapabilities(
                streaming=True,
                push_notifications=False,
                extensions=[
                    AgentExtension(ext["uri"], ext["description"], ext["required"], ext["params"])
                ],
            ),
            skills=skills,
            default_input_modes=["text/plain", "application/json"],
            default_output_modes=["text/plain", "application/json"],
        )


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


def decode_send_params(body: Any, pointer: str, codec: Codec) -> tuple[Message, dict[str, Any]]:
    """The message and configuration of a send request (InvalidParams naming the member)."""
    if not isinstance(body, dict):
        raise InvalidParams(f"{pointer or '/'}: expected an object")
    if "message" not in body:
        raise InvalidParams(f"{pointer}/message: required member is missing")
    try:
        message = codec.decode_message(body["message"], f"{pointer}/message")
    except WireDecodeError as exc:
        raise InvalidParams(str(exc)) from None
    config = body.get("configuration") or {}
    if not isinstance(config, dict):
        raise InvalidParams(f"{pointer}/configuration: expected an object")
    for key in ("returnImmediately", "blocking"):
        if key in config and not isinstance(config[key], bool):
            raise InvalidParams(f"{pointer}/configuration/{key}: expected a boolean")
    hl = config.get("historyLength")
    if hl is not None and (isinstance(hl, bool) or not isinstance(hl, int) or hl < 0):
        raise InvalidParams(f"{pointer}/configuration/historyLength: expected an integer >= 0")
    return message, config


def list_tasks(
    handler: BaseHandler,
    *,
    context_id: str | None,
    state: str | None,
    page_size: int | None,
    page_token: str | None,
    history_length: int | None,
    include_artifacts: bool,
    updated_after: str | None = None,
) -> dict[str, Any]:
    """A ListTasks result (1.0 JSON) shared by both bindings."""
    after = None
    if updated_after:
        after = parse_rfc3339(updated_after)
        if after is None:
            raise InvalidParams("statusTimestampAfter must be an RFC 3339 timestamp")
    wanted: TaskState | None = None
    if state:
        try:
            wanted = CODEC_V1.state_from_wire(state, "/status")
        except WireDecodeError as exc:
            raise InvalidParams(str(exc)) from None
    start = parse_count(page_token, "pageToken (a token this agent issued)") if page_token else 0
    recs = handler.core.list_tasks(context_id=context_id, state=wanted, updated_after=after)
    size = page_size or 50
    page = recs[start : start + size]
    tasks = [
        CODEC_V1.encode_task(
            task_view(
                r.task,
                activated=handler.activated(),
                faults=handler.service.faults,
                history_length=history_length,
                include_artifacts=include_artifacts,
            )
        )
        for r in page
    ]
    more = start + size < len(recs)
    return {
        "tasks": tasks,
        "nextPageToken": str(start + size) if more else "",
        "pageSize": size,
        "totalSize": len(recs),
    }
